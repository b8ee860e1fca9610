// ascend_sim/launch.h - sim::Launch: runs the kernel body once per block, each block as a coroutine
// (ucontext) with its own stack, a fresh poisoned UB and fresh per-block state. Independent blocks
// run in parallel worker threads; a block that calls SyncAll() is suspended until every block has
// arrived. Kernels whose results depend on the block order (SetAtomicAdd) run their blocks one at a
// time in block order; the Matmul API's atomic writes wait for their turn in block order (atomic_turn). Reports are printed at the end in block order, so the output
// does not depend on the schedule (ref §6 for the CPU debug model this follows: per-core run, then
// CheckSyncState-like end-of-block checks).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_LAUNCH_H
#define ASCEND_SIM_ASCEND_SIM_LAUNCH_H

#include <climits>
#include <pthread.h>
#include <ucontext.h>
#include <unistd.h>

#include "pipe.h"
#include "vec.h"

namespace AscendC::sim {

// Non-owning reference to the kernel body (any callable: a lambda or a std::function). Used instead
// of `const std::function<void()>&` so that <functional> (which declares ::abs, ::div, ...) is not
// pulled into kernels; call sites are the same.
class KernelBody {
public:
    template <class F, std::enable_if_t<!std::is_same_v<std::remove_cvref_t<F>, KernelBody>, int> = 0>
    KernelBody(F&& f)  // NOLINT: implicit by design
        : obj_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* o) { (*static_cast<std::remove_reference_t<F>*>(o))(); }) {}
    void operator()() const { call_(obj_); }
    void* sim_obj() const { return obj_; }
    void (*sim_call() const)(void*) { return call_; }

private:
    void* obj_;
    void (*call_)(void*);
};

// Runs `body` once per block (GetBlockIdx() = 0 .. blockDim-1; MIX mode: 2 x blockDim AIV blocks). A
// fatal fault stops the block that raised it; the other blocks still run. Prints the report and the
// counters line to stderr and returns the number of errors reported.
//
// Run-time environment: ASCEND_SIM_THREADS (worker threads, default: the CPUs available, at most 8;
// 1 = blocks in block order on the calling thread), ASCEND_SIM_TIME_LIMIT (seconds, default
// ASCEND_SIM_HANG_SECONDS), ASCEND_SIM_RACECHECK (0 = no pipe-race check), ASCEND_SIM_AUTO_SYNC (0 =
// model a build without --cce-auto-sync), ASCEND_SIM_ORDER_CHECK (1 = run the blocks a second time in
// reverse order and report outputs that differ), ASCEND_SIM_FP16_OVERFLOW (1 = report fp16 results that
// overflow to inf).
ASCEND_SIM_RT int Launch(uint32_t blockDim, const KernelBody& body, std::source_location loc = std::source_location::current());

namespace detail {
ASCEND_SIM_RT void sync_all(const std::source_location& loc, bool aivOnly = true);  // aivOnly: SyncAll<true>
ASCEND_SIM_RT void set_atomic(void (*fn)(void*, const void*, uint64_t, const std::source_location&), const char* type);
ASCEND_SIM_RT void report_atomic_uninit(const void* gm, uint64_t index, const char* type, const std::source_location& loc);

// Is the element the 0xFF poison every launch leaves in outputs (an all-ones NaN, never computed)?
template <class T>
inline bool is_poison(const T& v) {
    if constexpr (is_float_like_v<T>) {
        unsigned char b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        for (unsigned char c : b)
            if (c != 0xFF) return false;
        return true;
    } else {
        return false;  // integers: all-ones is a legitimate -1
    }
}

template <class T>
inline void atomic_add_fn(void* gm, const void* ub, uint64_t bytes, const std::source_location& loc) {
    T* d = static_cast<T*>(gm);
    const T* s = static_cast<const T*>(ub);
    const uint64_t n = bytes / sizeof(T);
    for (uint64_t i = 0; i < n; ++i) {
        if (is_poison(d[i])) {
            report_atomic_uninit(d + i, i, is_fp16_v<T> ? (std::is_same_v<T, half> ? "half" : "bfloat16_t") : "float", loc);
            break;
        }
    }
    for (uint64_t i = 0; i < n; ++i) d[i] = down<T>(up(d[i]) + up(s[i]));
}
}  // namespace detail

}  // namespace AscendC::sim

namespace AscendC {

// SyncAll<isAIVOnly>(): all blocks of the launch wait until every block has arrived (ref §4.4). Here
// the calling block is suspended; once all blocks wait, they resume.
template <bool isAIVOnly = true>
inline void SyncAll(std::source_location loc = std::source_location::current()) {
    sim::detail::sync_all(loc, isAIVOnly);
}

// Software-synchronisation overload (GM + UB workspaces); same semantics here.
template <bool isAIVOnly = true>
inline void SyncAll(const GlobalTensor<int32_t>&, const LocalTensor<int32_t>&, const int32_t usedCores = 0,
                    std::source_location loc = std::source_location::current()) {
    (void)usedCores;
    sim::detail::sync_all(loc, isAIVOnly);
}

// SetAtomicAdd<T>(): following UB->GM DataCopy / DataCopyPad add into GM instead of overwriting
// (ref §4.1; A2 dtypes int8/int16/half/bf16/int32/float). A kernel that uses it runs its blocks in block
// order, so the sums are deterministic. Exempt from the write-write GM-RACE check. Adding into GM that
// still holds the launch's poison (an output the kernel never zeroed) is ATOMIC-UNINIT.
template <typename T>
inline void SetAtomicAdd() {
    static_assert(sim::detail::is_any_of_v<T, int8_t, int16_t, half, bfloat16_t, int32_t, float>,
                  "AscendC::SetAtomicAdd: unsupported dtype (A2: int8/int16/half/bf16/int32/float)");
    (void)sim::detail::SerialBlocks<T>::on;
    sim::detail::set_atomic(&sim::detail::atomic_add_fn<T>, "T");
}

inline void SetAtomicNone() { sim::detail::set_atomic(nullptr, nullptr); }
inline void DisableDmaAtomic() { SetAtomicNone(); }

// Trap() (CANN atlasascendc_api_07_0196): interrupts the AI Core in NPU mode; "equivalent to assert in CPU mode".
// Reported as TRAP at the call (fatal: the block stops, as the core does).
inline void Trap(std::source_location loc = std::source_location::current()) {
    sim::detail::fatal("TRAP", loc, "Trap() called: the kernel stopped the AI Core (a condition it checks failed)");
}

}  // namespace AscendC

#endif  // ASCEND_SIM_ASCEND_SIM_LAUNCH_H
