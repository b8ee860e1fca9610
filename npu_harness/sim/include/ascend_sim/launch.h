// ascend_sim/launch.h - sim::Launch: runs the kernel body once per block, sequentially, each block
// with a fresh (poisoned) UB and fresh per-block state; prints the fault report (ref §6 for the CPU
// debug model this follows: per-core run, then CheckSyncState-like end-of-block checks).
#pragma once

#include <climits>

#include "pipe.h"

namespace AscendC::sim {

namespace detail {

inline const char* signal_name(int sig) {
    switch (sig) {
        case SIGSEGV: return "SIGSEGV";
        case SIGBUS: return "SIGBUS";
        case SIGFPE: return "SIGFPE";
        case SIGILL: return "SIGILL";
        default: return "signal";
    }
}

// Crash inside the kernel (e.g. a raw pointer bug): name the last API call site, then die with
// the same signal.
inline void crash_handler(int sig) {
    State& s = g_sim;
    char buf[768];
    const int n = std::snprintf(buf, sizeof buf,
                                "error[CRASH]: %s (signal %d) inside the kernel; the last AscendC API call was here\n --> %s:%u (block %u)\n"
                                "sim: %u blocks, %llu errors\n",
                                signal_name(sig), sig, base_name(s.lastLoc.file_name()), s.lastLoc.line(), s.blockIdx, s.blockDim,
                                s.errors + 1);
    if (n > 0) {
        std::fwrite(buf, 1, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1, stderr);
        std::fflush(stderr);
    }
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

struct SignalGuard {
    static constexpr int kSigs[4] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    struct sigaction old[4];
    stack_t oldStack{};
    bool stackSet = false;
    alignas(16) static inline char altStack[1 << 16];
    SignalGuard() {
        stack_t st{};
        st.ss_sp = altStack;
        st.ss_size = sizeof altStack;
        stackSet = sigaltstack(&st, &oldStack) == 0;
        for (int i = 0; i < 4; ++i) {
            struct sigaction sa {};
            sa.sa_handler = crash_handler;
            sigemptyset(&sa.sa_mask);
            sa.sa_flags = SA_ONSTACK;
            sigaction(kSigs[i], &sa, &old[i]);
        }
    }
    ~SignalGuard() {
        for (int i = 0; i < 4; ++i) sigaction(kSigs[i], &old[i], nullptr);
        if (stackSet) sigaltstack(&oldStack, nullptr);
    }
};

inline void end_of_block_checks() {
    State& s = g_sim;
    for (uint32_t e = 0; e < kNumHardEvents; ++e) {
        for (uint32_t id = 0; id < kMaxEventIds; ++id) {
            FlagSlot& f = s.flags[e][id];
            if (f.count == 0) continue;
            report("SYNC-UNPAIRED", f.loc, "SetFlag<HardEvent::%s>(%u) was never matched by a WaitFlag (%u pending at the end of the block)",
                   kHardEventNames[e], id, f.count);
        }
    }
    // Queues still alive after the body returned (static or leaked objects).
    std::vector<QueBase*> qs = s.liveQueues;
    for (QueBase* q : qs) q->leak_check();
}

inline void finish_report(uint32_t blockDim) {
    State& s = g_sim;
    for (const Site& site : s.sites) {
        if (site.suppressed) {
            std::fprintf(stderr, "note: %llu more errors like error[%s] at %s:%u were suppressed\n", site.suppressed, site.code, site.file,
                         site.line);
        }
    }
    std::fprintf(stderr, "sim: %u blocks, %llu errors\n", blockDim, s.errors);
    std::fflush(stderr);
}

}  // namespace detail

// Non-owning reference to the kernel body (any callable: a lambda or a std::function). Used instead
// of `const std::function<void()>&` so that <functional> (which declares ::abs, ::div, ...) is not
// pulled into kernels; call sites are the same.
class KernelBody {
public:
    template <class F, std::enable_if_t<!std::is_same_v<std::remove_cvref_t<F>, KernelBody>, int> = 0>
    KernelBody(F&& f)  // NOLINT: implicit by design
        : obj_(const_cast<void*>(static_cast<const void*>(&f))), call_([](void* o) { (*static_cast<std::remove_reference_t<F>*>(o))(); }) {}
    void operator()() const { call_(obj_); }

private:
    void* obj_;
    void (*call_)(void*);
};

// Runs `body` once per block (GetBlockIdx() = 0 .. blockDim-1, in order). A fatal fault stops the
// block that raised it; the other blocks still run. Returns the number of errors reported.
inline int Launch(uint32_t blockDim, const KernelBody& body, std::source_location loc = std::source_location::current()) {
    using namespace detail;
    State& s = g_sim;
    s.sites.clear();
    s.errors = 0;
    s.blockDim = blockDim;
    s.blockIdx = 0;
    s.inLaunch = true;
    s.inBlock = false;
    if (blockDim == 0 || blockDim > ASCEND_SIM_MAX_BLOCKS) {
        report("BLOCK-DIM", loc, "Launch with blockDim = %u; it must be in [1, %u] on this target (ASCEND_SIM_MAX_BLOCKS)", blockDim,
               unsigned(ASCEND_SIM_MAX_BLOCKS));
    } else {
        const size_t ubAlloc = static_cast<size_t>(align_up(ASCEND_SIM_UB_BYTES, 4096));
        uint8_t* ub = static_cast<uint8_t*>(::operator new(ubAlloc, std::align_val_t(4096)));
        {
            SignalGuard guard;
            for (uint32_t b = 0; b < blockDim; ++b) {
                std::memset(ub, 0xFF, ubAlloc);  // poison: garbage reads show up as NaN
                std::memset(s.flags, 0, sizeof s.flags);
                std::memset(s.nextEventId, 0, sizeof s.nextEventId);
                s.ub = ub;
                s.blockIdx = b;
                s.blockFaulted = false;
                s.lastLoc = loc;
                s.inBlock = true;
                try {
                    body();
                } catch (const Fault&) {
                    s.blockFaulted = true;
                } catch (const std::exception& e) {
                    s.blockFaulted = true;
                    report("EXCEPTION", s.lastLoc, "a C++ exception escaped the kernel body: %s", e.what());
                } catch (...) {
                    s.blockFaulted = true;
                    report("EXCEPTION", s.lastLoc, "a C++ exception escaped the kernel body");
                }
                if (!s.blockFaulted) end_of_block_checks();
                s.inBlock = false;
            }
        }
        s.ub = nullptr;
        ::operator delete(ub, std::align_val_t(4096));
    }
    s.inLaunch = false;
    finish_report(blockDim);
    return s.errors > INT_MAX ? INT_MAX : static_cast<int>(s.errors);
}

}  // namespace AscendC::sim
