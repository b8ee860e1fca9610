// ascend_sim/launch.h - sim::Launch: runs the kernel body once per block, each block as a coroutine
// (ucontext) with its own stack, a fresh poisoned UB and fresh per-block state. Blocks run one at a
// time in block order; a block that calls SyncAll() is suspended until every block has arrived, then
// the waiting blocks resume in block order (deterministic). Prints the fault report and the
// `sim-counters:` line (ref §6 for the CPU debug model this follows: per-core run, then
// CheckSyncState-like end-of-block checks).
#pragma once

#include <climits>
#include <ucontext.h>
#include <unistd.h>

#include "pipe.h"
#include "vec.h"

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

// Watchdog (SIGALRM after ASCEND_SIM_HANG_SECONDS): the running block never finished.
inline void hang_handler(int) {
    State& s = g_sim;
    char buf[768];
    const int n = std::snprintf(buf, sizeof buf,
                                "error[HANG]: the kernel did not finish within %d s (endless loop or spin-wait on GM?); block %u was "
                                "running, its last AscendC API call was here\n --> %s:%u (block %u)\nsim: %u blocks, %llu errors\n",
                                int(ASCEND_SIM_HANG_SECONDS), s.blockIdx, base_name(s.lastLoc.file_name()), s.lastLoc.line(), s.blockIdx,
                                s.blockDim, s.errors + 1);
    if (n > 0) {
        std::fwrite(buf, 1, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1, stderr);
        std::fflush(stderr);
    }
    _exit(1);
}

struct SignalGuard {
    static constexpr int kSigs[4] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    struct sigaction old[4];
    struct sigaction oldAlrm {};
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
        struct sigaction sa {};
        sa.sa_handler = hang_handler;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, &oldAlrm);
        alarm(ASCEND_SIM_HANG_SECONDS);
    }
    ~SignalGuard() {
        alarm(0);
        sigaction(SIGALRM, &oldAlrm, nullptr);
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

inline void print_dma(FILE* f, const char* name, const DmaCounters& c) {
    std::fprintf(f, "\"%s\":{\"bytes\":%llu,\"transfers\":%llu,\"bursts\":%llu,\"hist\":[", name, (unsigned long long)c.bytes,
                 (unsigned long long)c.transfers, (unsigned long long)c.bursts);
    bool first = true;
    for (uint32_t k = 0; k < kBurstBuckets; ++k) {
        if (!c.burstCount[k]) continue;
        std::fprintf(f, "%s[%llu,%llu,%llu]", first ? "" : ",", (unsigned long long)(uint64_t(32) << k), (unsigned long long)c.burstCount[k],
                     (unsigned long long)c.burstBytes[k]);
        first = false;
    }
    std::fprintf(f, "]}");
}

// One line `sim-counters: {json}` on stderr (parsed and removed by npu_harness.sim.compiler).
inline void print_counters(uint32_t blockDim, const std::vector<Counters>& cs) {
    static const char* const kSz[kSizeClasses] = {"b8", "b16", "b32", "b64"};
    FILE* f = stderr;
    std::fprintf(f, "sim-counters: {\"version\":1,\"blockDim\":%u,\"aiv_per_aic\":%u,\"blocks\":[", blockDim, g_sim.mixRatio);
    for (size_t b = 0; b < cs.size(); ++b) {
        const Counters& c = cs[b];
        std::fprintf(f, "%s{", b ? "," : "");
        print_dma(f, "gm2ub", c.gm2ub);
        std::fputc(',', f);
        print_dma(f, "ub2gm", c.ub2gm);
        std::fputc(',', f);
        print_dma(f, "ub2ub", c.ub2ub);
        std::fprintf(f, ",\"atomic_bytes\":%llu,\"vec\":{", (unsigned long long)c.atomicBytes);
        bool first = true;
        for (uint32_t op = 0; op < kVecOps; ++op) {
            for (uint32_t k = 0; k < kSizeClasses; ++k) {
                if (!c.vecInstr[op][k]) continue;
                std::fprintf(f, "%s\"%s.%s\":[%llu,%llu]", first ? "" : ",", kVecOpNames[op], kSz[k], (unsigned long long)c.vecInstr[op][k],
                             (unsigned long long)c.vecRepeats[op][k]);
                first = false;
            }
        }
        std::fprintf(f, "},\"ub_get\":%llu,\"ub_set\":%llu,\"gm_get\":%llu,\"gm_set\":%llu,\"cube_macs\":%llu,\"sync_all\":%llu",
                     (unsigned long long)c.ubGet, (unsigned long long)c.ubSet, (unsigned long long)c.gmGet, (unsigned long long)c.gmSet,
                     (unsigned long long)c.cubeMacs, (unsigned long long)c.syncAll);
        if (c.gm2l1) std::fprintf(f, ",\"gm2l1\":%llu", (unsigned long long)c.gm2l1);
        if (c.l0c2gm) std::fprintf(f, ",\"l0c2gm\":%llu", (unsigned long long)c.l0c2gm);
        if (c.inBufsMin != 0xffffffffu) std::fprintf(f, ",\"in_bufs\":%u", c.inBufsMin);
        if (c.outBufsMin != 0xffffffffu) std::fprintf(f, ",\"out_bufs\":%u", c.outBufsMin);
        if (c.inQueues) std::fprintf(f, ",\"in_queues\":%u", c.inQueues);
        if (c.outQueues) std::fprintf(f, ",\"out_queues\":%u", c.outQueues);
        std::fputc('}', f);
    }
    std::fprintf(f, "]}\n");
    std::fflush(f);
}

// ---- block coroutines ------------------------------------------------------------------------------

enum class BlkSt : uint8_t { Idle, Running, AtBarrier, Done, Faulted };

struct SavedBlock {
    uint8_t* ub = nullptr;
    bool blockFaulted = false;
    std::source_location lastLoc{};
    FlagSlot flags[kNumHardEvents][kMaxEventIds]{};
    std::vector<QueBase*> liveQueues;
    TEventID nextEventId[kNumHardEvents]{};
    void (*atomicAdd)(void*, const void*, uint64_t) = nullptr;
    const char* atomicType = nullptr;
    TPipe* pipe = nullptr;
};

struct Slot {
    ucontext_t ctx{};
    void* stack = nullptr;
    uint8_t* arena = nullptr;
    BlkSt st = BlkSt::Idle;
    std::source_location barrierLoc{};
    SavedBlock saved;
};

struct Sched {
    ucontext_t main{};
    std::vector<Slot> slots;
    std::vector<uint8_t*> freeArenas;
    std::vector<void*> freeStacks;
    std::vector<Counters> counters;
    void (*call)(void*) = nullptr;
    void* obj = nullptr;
    std::source_location launchLoc{};
    uint32_t cur = 0;
    bool abort = false;
};

inline Sched* g_sched = nullptr;

inline void save_block(SavedBlock& v) {
    State& s = g_sim;
    v.ub = s.ub;
    v.blockFaulted = s.blockFaulted;
    v.lastLoc = s.lastLoc;
    std::memcpy(v.flags, s.flags, sizeof s.flags);
    v.liveQueues.swap(s.liveQueues);
    s.liveQueues.clear();
    std::memcpy(v.nextEventId, s.nextEventId, sizeof s.nextEventId);
    v.atomicAdd = s.atomicAdd;
    v.atomicType = s.atomicType;
    v.pipe = g_curPipe;
}

inline void restore_block(SavedBlock& v) {
    State& s = g_sim;
    s.ub = v.ub;
    s.blockFaulted = v.blockFaulted;
    s.lastLoc = v.lastLoc;
    std::memcpy(s.flags, v.flags, sizeof s.flags);
    s.liveQueues.swap(v.liveQueues);
    v.liveQueues.clear();
    std::memcpy(s.nextEventId, v.nextEventId, sizeof s.nextEventId);
    s.atomicAdd = v.atomicAdd;
    s.atomicType = v.atomicType;
    g_curPipe = v.pipe;
}

inline void block_main() {
    Sched& sc = *g_sched;
    State& s = g_sim;
    try {
        sc.call(sc.obj);
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
    sc.slots[sc.cur].st = s.blockFaulted ? BlkSt::Faulted : BlkSt::Done;
    // returning resumes sc.main (uc_link)
}

// Runs (or resumes) block b until it finishes or waits in SyncAll.
inline void run_block(uint32_t b) {
    Sched& sc = *g_sched;
    State& s = g_sim;
    Slot& sl = sc.slots[b];
    if (sl.st == BlkSt::Idle) {
        if (sc.freeArenas.empty()) {
            sl.arena = static_cast<uint8_t*>(::operator new(2 * kUbAlloc, std::align_val_t(4096)));
        } else {
            sl.arena = sc.freeArenas.back();
            sc.freeArenas.pop_back();
        }
        std::memset(sl.arena, 0xFF, kUbAlloc);        // poison: garbage reads show up as NaN
        std::memset(sl.arena + kUbAlloc, 0, kUbAlloc);  // shadow: nothing written yet
        if (sc.freeStacks.empty()) {
            sl.stack = ::operator new(ASCEND_SIM_STACK_BYTES);
        } else {
            sl.stack = sc.freeStacks.back();
            sc.freeStacks.pop_back();
        }
        getcontext(&sl.ctx);
        sl.ctx.uc_stack.ss_sp = sl.stack;
        sl.ctx.uc_stack.ss_size = ASCEND_SIM_STACK_BYTES;
        sl.ctx.uc_link = &sc.main;
        makecontext(&sl.ctx, block_main, 0);
        s.ub = sl.arena;
        s.blockFaulted = false;
        s.lastLoc = sc.launchLoc;
        std::memset(s.flags, 0, sizeof s.flags);
        std::memset(s.nextEventId, 0, sizeof s.nextEventId);
        s.liveQueues.clear();
        s.atomicAdd = nullptr;
        s.atomicType = nullptr;
        g_curPipe = nullptr;
    } else {
        restore_block(sl.saved);
    }
    sl.st = BlkSt::Running;
    sc.cur = b;
    s.blockIdx = b;
    s.cnt = &sc.counters[b];
    s.inBlock = true;
    swapcontext(&sc.main, &sl.ctx);
    s.inBlock = false;
    s.cnt = nullptr;
    if (sl.st == BlkSt::AtBarrier) {
        save_block(sl.saved);
    } else {
        sc.freeStacks.push_back(sl.stack);
        sl.stack = nullptr;
        sc.freeArenas.push_back(sl.arena);
        sl.arena = nullptr;
        s.liveQueues.clear();
        g_curPipe = nullptr;
    }
    s.ub = nullptr;
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
    void* sim_obj() const { return obj_; }
    void (*sim_call() const)(void*) { return call_; }

private:
    void* obj_;
    void (*call_)(void*);
};

// Runs `body` once per block (GetBlockIdx() = 0 .. blockDim-1, in order; blocks waiting in SyncAll
// resume in block order once all have arrived). A fatal fault stops the block that raised it; the
// other blocks still run. Returns the number of errors reported.
inline int Launch(uint32_t blockDim, const KernelBody& body, std::source_location loc = std::source_location::current()) {
    using namespace detail;
    State& s = g_sim;
    s.sites.clear();
    s.errors = 0;
    s.mixRatio = g_simKernelMode == KernelMode::MIX_MODE ? 2u : 1u;
    s.blockDim = blockDim;
    s.blockIdx = 0;
    s.inLaunch = true;
    s.inBlock = false;
    std::vector<Counters> counters;
    if (blockDim == 0 || blockDim > ASCEND_SIM_MAX_BLOCKS) {
        report("BLOCK-DIM", loc, "Launch with blockDim = %u; it must be in [1, %u] on this target (ASCEND_SIM_MAX_BLOCKS)", blockDim,
               unsigned(ASCEND_SIM_MAX_BLOCKS));
    } else {
        blockDim *= s.mixRatio;  // MIX: the body runs on the 2 AIV of every launched block
        s.blockDim = blockDim;
        Sched sc;
        sc.slots.resize(blockDim);
        sc.counters.resize(blockDim);
        sc.call = body.sim_call();
        sc.obj = body.sim_obj();
        sc.launchLoc = loc;
        Sched* prev = g_sched;
        g_sched = &sc;
        g_gmWrites.clear();
        {
            SignalGuard guard;
            for (uint32_t b = 0; b < blockDim; ++b) run_block(b);
            for (;;) {
                uint32_t waiting = 0;
                for (const Slot& sl : sc.slots) waiting += sl.st == BlkSt::AtBarrier;
                if (waiting == 0) break;
                if (waiting == blockDim) {  // barrier complete: next phase
                    gm_check_races();
                    for (uint32_t b = 0; b < blockDim; ++b)
                        if (sc.slots[b].st == BlkSt::AtBarrier) run_block(b);
                    continue;
                }
                // Some blocks ended (or faulted) without reaching the barrier: on hardware the others
                // would wait forever.
                uint32_t first = 0;
                while (sc.slots[first].st != BlkSt::AtBarrier) ++first;
                char ended[256];
                size_t len = 0;
                ended[0] = 0;
                for (uint32_t b = 0; b < blockDim && len + 16 < sizeof ended; ++b) {
                    if (sc.slots[b].st == BlkSt::AtBarrier) continue;
                    len += static_cast<size_t>(std::snprintf(ended + len, sizeof ended - len, "%s%u", len ? ", " : "", b));
                }
                s.inBlock = true;
                s.blockIdx = first;
                report("HANG", sc.slots[first].barrierLoc,
                       "SyncAll: %u of %u blocks wait here, but block(s) %s ended without reaching this SyncAll: on hardware the "
                       "kernel never finishes",
                       waiting, blockDim, ended);
                s.inBlock = false;
                sc.abort = true;
                for (uint32_t b = 0; b < blockDim; ++b)
                    if (sc.slots[b].st == BlkSt::AtBarrier) run_block(b);
                break;
            }
        }
        gm_check_races();
        for (uint8_t* a : sc.freeArenas) ::operator delete(a, std::align_val_t(4096));
        for (void* st : sc.freeStacks) ::operator delete(st);
        counters.swap(sc.counters);
        g_sched = prev;
    }
    s.inLaunch = false;
    s.ub = nullptr;
    print_counters(blockDim, counters);
    finish_report(blockDim);
    return s.errors > INT_MAX ? INT_MAX : static_cast<int>(s.errors);
}

}  // namespace AscendC::sim

namespace AscendC {

// SyncAll<isAIVOnly>(): all blocks of the launch wait until every block has arrived (ref §4.4). Here
// the calling block is suspended; once all blocks wait, they resume in block order.
template <bool isAIVOnly = true>
inline void SyncAll(std::source_location loc = std::source_location::current()) {
    using namespace sim::detail;
    touch(loc);
    Sched* sc = g_sched;
    if (sc == nullptr || !g_sim.inBlock) fatal("PARAM-RANGE", loc, "SyncAll outside a kernel launch");
    cnt().syncAll += 1;
    Slot& sl = sc->slots[g_sim.blockIdx];
    sl.st = BlkSt::AtBarrier;
    sl.barrierLoc = loc;
    swapcontext(&sl.ctx, &sc->main);
    touch(loc);
    if (sc->abort) throw Fault{};
}

// Software-synchronisation overload (GM + UB workspaces); same semantics here.
template <bool isAIVOnly = true>
inline void SyncAll(const GlobalTensor<int32_t>&, const LocalTensor<int32_t>&, const int32_t usedCores = 0,
                    std::source_location loc = std::source_location::current()) {
    (void)usedCores;
    SyncAll<isAIVOnly>(loc);
}

namespace sim::detail {
template <class T>
inline void atomic_add_fn(void* gm, const void* ub, uint64_t bytes) {
    T* d = static_cast<T*>(gm);
    const T* s = static_cast<const T*>(ub);
    const uint64_t n = bytes / sizeof(T);
    for (uint64_t i = 0; i < n; ++i) d[i] = down<T>(up(d[i]) + up(s[i]));
}
}  // namespace sim::detail

// SetAtomicAdd<T>(): following UB->GM DataCopy / DataCopyPad add into GM instead of overwriting
// (ref §4.1; A2 dtypes int8/int16/half/bf16/int32/float). Blocks run in a fixed order here, so the
// sums are deterministic. Exempt from GM-RACE.
template <typename T>
inline void SetAtomicAdd() {
    static_assert(sim::detail::is_any_of_v<T, int8_t, int16_t, half, bfloat16_t, int32_t, float>,
                  "AscendC::SetAtomicAdd: unsupported dtype (A2: int8/int16/half/bf16/int32/float)");
    sim::detail::g_sim.atomicAdd = &sim::detail::atomic_add_fn<T>;
    sim::detail::g_sim.atomicType = "T";
}

inline void SetAtomicNone() {
    sim::detail::g_sim.atomicAdd = nullptr;
    sim::detail::g_sim.atomicType = nullptr;
}
inline void DisableDmaAtomic() { SetAtomicNone(); }

}  // namespace AscendC
