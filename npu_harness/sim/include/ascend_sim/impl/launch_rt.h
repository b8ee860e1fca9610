// ascend_sim/impl/launch_rt.h - runtime of launch.h: block coroutines, worker threads, the end-of-phase
// cross-block checks, the report and the counters line.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_LAUNCH_RT_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_LAUNCH_RT_H

#include <sched.h>
#include <time.h>

namespace AscendC::sim::detail {

// ---- run-time switches (environment, read at every Launch) ------------------------------------------

struct RunConfig {
    uint32_t threads = 1;
    unsigned timeLimit = ASCEND_SIM_HANG_SECONDS;
    bool orderCheck = false;
};

// The environment through `environ` (<unistd.h>): <cstdlib> is not included (it declares ::abs, ::div).
inline const char* env_get(const char* name) {
    const size_t n = std::strlen(name);
    for (char** e = environ; e && *e; ++e)
        if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    return nullptr;
}

inline long env_long(const char* name, long dflt) {
    const char* v = env_get(name);
    if (!v || !*v) return dflt;
    long r = 0;
    bool neg = false;
    if (*v == '-') {
        neg = true;
        ++v;
    }
    for (; *v >= '0' && *v <= '9'; ++v) r = r * 10 + (*v - '0');
    return neg ? -r : r;
}

inline RunConfig read_config() {
    RunConfig c;
    long cpus = 1;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
#endif
    if (cpus < 1) cpus = 1;
    long t = env_long("ASCEND_SIM_THREADS", cpus < 8 ? cpus : 8);
    c.threads = static_cast<uint32_t>(t < 1 ? 1 : t > 64 ? 64 : t);
    const long lim = env_long("ASCEND_SIM_TIME_LIMIT", ASCEND_SIM_HANG_SECONDS);
    c.timeLimit = static_cast<unsigned>(lim < 1 ? 1 : lim);
    c.orderCheck = env_long("ASCEND_SIM_ORDER_CHECK", 0) != 0;
    g_raceCheck = env_long("ASCEND_SIM_RACECHECK", 1) != 0;
    g_autoSync = env_long("ASCEND_SIM_AUTO_SYNC", 1) != 0;
    g_fp16Overflow = env_long("ASCEND_SIM_FP16_OVERFLOW", 0) != 0;
    g_gemmThreads = c.threads;
    return c;
}

// ---- block slots and the scheduler -------------------------------------------------------------------

enum class BlkSt : uint8_t { Idle, Running, AtBarrier, AtFlag, Done, Faulted };  // AtFlag: in CrossCoreWaitFlag (crossflag.h)

struct Slot {
    ucontext_t ctx{};
    void* stack = nullptr;
    uint8_t* arena = nullptr;
    BlkSt st = BlkSt::Idle;
    int owner = -1;  // the worker thread that runs this block (it also resumes it after a SyncAll)
    uint64_t stopped = 0;  // the phase in which the block last stopped (reached SyncAll); kEnded once it ended (turnMu)
    std::source_location barrierLoc{};
    bool barrierAivOnly = true;  // the SyncAll it waits in is SyncAll<true> (the AIV only)
    State state;
};

struct Sched {
    std::vector<Slot> slots;
    void (*call)(void*) = nullptr;
    void* obj = nullptr;
    std::source_location launchLoc{};
    bool abort = false;
    uint32_t threads = 1;
    std::vector<uint32_t> order;  // blocks to start or resume in this phase
    uint32_t next = 0;            // phase 0: index into `order` of the next block to start (atomic)
    pthread_mutex_t poolMu = PTHREAD_MUTEX_INITIALIZER;
    // UB arenas of finished blocks, each with the length of its front part a block may have written (data
    // and shadow); the rest still holds the poison and the clear shadow.
    std::vector<std::pair<uint8_t*, uint64_t>> freeArenas;
    std::vector<void*> freeStacks;
    // persistent worker threads (a block always resumes on the thread that started it)
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t go = PTHREAD_COND_INITIALIZER, done = PTHREAD_COND_INITIALIZER;
    uint64_t phase = 0;       // bumped by the main thread to start a phase
    bool resume = false;      // this phase resumes blocks waiting in SyncAll
    bool quit = false;
    uint32_t finished = 0;    // workers done with the current phase
    std::vector<pthread_t> workers;
    // atomic adds in block order while blocks run in parallel (atomic_turn): the current phase (run_all) and
    // the lock + condition under which blocks publish that they stopped
    uint64_t phaseNo = 0;
    pthread_mutex_t turnMu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t turnCv = PTHREAD_COND_INITIALIZER;
};
inline constexpr uint64_t kEnded = ~0ull;

inline Sched* g_sched = nullptr;

// MIX launches that run the AIC (impl/crossflag_rt.h)
inline void run_all_cross(Sched& sc, bool reverse);
inline void cross_begin_launch(Sched& sc);
inline void cross_print_events(FILE* f, const State& s);
inline void cross_end_launch(Sched& sc);
inline void cross_free(Sched& sc);
inline void cross_print_notes();
inline thread_local ucontext_t* t_main = nullptr;  // the worker's own context (blocks return to it)
inline thread_local int t_worker = 0;

// ---- the report ----------------------------------------------------------------------------------------

struct SiteSum {
    const PendingReport* first;
    uint32_t block;
    bool inBlock;
    const State* state;
    unsigned long long count;
};

inline void collect_sites(std::vector<SiteSum>& sites, const State& s, bool inBlock) {
    for (const PendingReport& r : s.reports) {
        bool found = false;
        for (SiteSum& x : sites) {
            if (x.first->line == r.line && std::strcmp(x.first->code, r.code) == 0 && std::strcmp(x.first->file, r.file) == 0) {
                x.count += r.count;
                found = true;
                break;
            }
        }
        if (!found) sites.push_back(SiteSum{&r, s.blockIdx, inBlock, &s, r.count});
    }
}

// Prints the collected reports: the first occurrence per (code, file, line) in block order, then one
// note per site with suppressed repeats. Returns the number of errors.
inline unsigned long long print_sites(const std::vector<SiteSum>& sites) {
    unsigned long long total = 0;
    for (const SiteSum& x : sites) {
        const char* msg = x.state->reportText.data() + x.first->msgOff;
        if (x.inBlock && g_launch.aicRuns && x.block >= g_launch.mixRatio * g_launch.launched) {  // the AIC of a MIX launch
            std::fprintf(stderr, "error[%s]: %s\n --> %s:%u (AIC %u)\n", x.first->code, msg, x.first->file, x.first->line,
                         x.block - g_launch.mixRatio * g_launch.launched);
        } else if (x.inBlock) {
            std::fprintf(stderr, "error[%s]: %s\n --> %s:%u (block %u)\n", x.first->code, msg, x.first->file, x.first->line, x.block);
        } else {
            std::fprintf(stderr, "error[%s]: %s\n --> %s:%u\n", x.first->code, msg, x.first->file, x.first->line);
        }
        total += x.count;
    }
    for (const SiteSum& x : sites) {
        if (x.count > 1) {
            std::fprintf(stderr, "note: %llu more errors like error[%s] at %s:%u were suppressed\n", x.count - 1, x.first->code,
                         x.first->file, x.first->line);
        }
    }
    return total;
}

ASCEND_SIM_RT void print_pending(const State& s, std::vector<const PendingReport*>*, unsigned long long& total) {
    std::vector<SiteSum> sites;
    collect_sites(sites, s, s.inBlock);
    total += print_sites(sites);
}

// Reports of the host and of every block that is not running on another thread right now.
inline unsigned long long dump_quiescent(const State* running) {
    std::vector<SiteSum> sites;
    collect_sites(sites, g_host, false);
    if (g_sched) {
        for (const Slot& sl : g_sched->slots) {
            if (sl.st == BlkSt::Running && &sl.state != running) continue;
            collect_sites(sites, sl.state, true);
        }
    }
    return print_sites(sites);
}

inline const char* signal_name(int sig) {
    switch (sig) {
        case SIGSEGV: return "SIGSEGV";
        case SIGBUS: return "SIGBUS";
        case SIGFPE: return "SIGFPE";
        case SIGILL: return "SIGILL";
        default: return "signal";
    }
}

// Crash inside the kernel (e.g. a raw pointer bug): print what was reported so far, name the last API
// call site of the crashing block, then die with the same signal.
inline void crash_handler(int sig) {
    const State& s = st();
    const unsigned long long n = dump_quiescent(&s);
    std::fprintf(stderr,
                 "error[CRASH]: %s (signal %d) inside the kernel; the last AscendC API call was here\n --> %s:%u (block %u)\n"
                 "sim: %u blocks, %llu errors\n",
                 signal_name(sig), sig, base_name(s.lastLoc.file_name()), s.lastLoc.line(), s.blockIdx, g_launch.blockDim, n + 1);
    std::fflush(stderr);
    flush_outputs();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

inline unsigned g_timeLimit = ASCEND_SIM_HANG_SECONDS;

// Watchdog (SIGALRM after the time limit): stop and say so. A kernel can be slow rather than hung, so
// this is TIME-LIMIT, not HANG (HANG is reserved for a SyncAll that can never complete).
inline void time_limit_handler(int) {
    const unsigned long long n = dump_quiescent(nullptr);
    unsigned long long extra = 0;
    if (g_sched) {
        for (const Slot& sl : g_sched->slots) {
            if (sl.st != BlkSt::Running) continue;
            const State& s = sl.state;
            std::fprintf(stderr,
                         "error[TIME-LIMIT]: the launch did not finish within the emulator's time limit of %u s (a slow kernel or an "
                         "endless loop / spin-wait on GM; raise the limit with ASCEND_SIM_TIME_LIMIT or --timeout); block %u was "
                         "running, its last AscendC API call was here\n --> %s:%u (block %u)\n",
                         g_timeLimit, s.blockIdx, base_name(s.lastLoc.file_name()), s.lastLoc.line(), s.blockIdx);
            ++extra;
            break;
        }
    }
    if (!extra) {
        std::fprintf(stderr, "error[TIME-LIMIT]: the launch did not finish within the emulator's time limit of %u s\n --> %s:%u\n",
                     g_timeLimit, base_name(g_sched ? g_sched->launchLoc.file_name() : "?"), g_sched ? g_sched->launchLoc.line() : 0);
        extra = 1;
    }
    std::fprintf(stderr, "sim: %u blocks, %llu errors\n", g_launch.blockDim, n + extra);
    std::fflush(stderr);
    flush_outputs();
    _exit(1);
}

struct SignalGuard {
    static constexpr int kSigs[4] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    struct sigaction old[4];
    struct sigaction oldAlrm {};
    stack_t oldStack{};
    bool stackSet = false;
    alignas(16) static inline char altStack[1 << 16];
    explicit SignalGuard(unsigned seconds) {
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
        sa.sa_handler = time_limit_handler;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, &oldAlrm);
        g_timeLimit = seconds;
        alarm(seconds);
    }
    ~SignalGuard() {
        alarm(0);
        sigaction(SIGALRM, &oldAlrm, nullptr);
        for (int i = 0; i < 4; ++i) sigaction(kSigs[i], &old[i], nullptr);
        if (stackSet) sigaltstack(&oldStack, nullptr);
    }
};

// ---- end of a block --------------------------------------------------------------------------------------

inline void end_of_block_checks() {
    State& s = st();
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
    if (s.keyTested && !s.keyMatched) {
        report("TILING-KEY", s.keyLoc,
               "the kernel tests TILING_KEY_IS but no test matches the launch's tiling key %llu: the block took no branch and did "
               "nothing (give \"tiling_key\" in the launch file, or handle this key)",
               static_cast<unsigned long long>(g_tilingKey));
    }
}

ASCEND_SIM_RT bool tiling_key_is(uint64_t key, const std::source_location& loc) {
    State& s = st();
    if (!s.keyTested) s.keyLoc = loc;
    s.keyTested = true;
    const bool hit = key == g_tilingKey;
    s.keyMatched = s.keyMatched || hit;
    return hit;
}

ASCEND_SIM_RT void assert_failed(const char* expr, const std::source_location& loc) {
    touch(loc);
    fatal("ASSERT", loc, "ASSERT(%s) failed", expr);
}

inline void block_main() {
    Sched& sc = *g_sched;
    State& s = st();
    try {
        sc.call(sc.obj);
    } catch (const Fault&) {
        s.blockFaulted = true;
    } catch (const AicServerDone&) {
        // the AIC reached REGIST_MATMUL_OBJ: it serves the AIV's Matmul calls and ends with them
    } catch (const std::bad_alloc&) {
        s.blockFaulted = true;
        report("MEMORY-LIMIT", s.lastLoc, "host memory ran out while emulating this block (the emulator's memory limit, RLIMIT_AS, "
                                          "or the machine's memory is exhausted); the last AscendC API call was here");
    } catch (const std::exception& e) {
        s.blockFaulted = true;
        report("EXCEPTION", s.lastLoc, "a C++ exception escaped the kernel body: %s", e.what());
    } catch (...) {
        s.blockFaulted = true;
        report("EXCEPTION", s.lastLoc, "a C++ exception escaped the kernel body");
    }
    if (!s.blockFaulted) end_of_block_checks();
    sc.slots[s.blockIdx].st = s.blockFaulted ? BlkSt::Faulted : BlkSt::Done;
    setcontext(t_main);  // back to the worker running this block (uc_link could name another thread's context)
}

// Runs (or resumes) block b on the calling thread until it finishes or waits in SyncAll.
inline void run_block(uint32_t b) {
    Sched& sc = *g_sched;
    Slot& sl = sc.slots[b];
    State& s = sl.state;
    if (sl.st == BlkSt::Idle) {
        pthread_mutex_lock(&sc.poolMu);
        uint64_t dirty = kUbAlloc;  // a new arena: all of it
        if (sc.freeArenas.empty()) {
            sl.arena = nullptr;
        } else {
            sl.arena = sc.freeArenas.back().first;
            dirty = sc.freeArenas.back().second;
            sc.freeArenas.pop_back();
        }
        if (sc.freeStacks.empty()) {
            sl.stack = nullptr;
        } else {
            sl.stack = sc.freeStacks.back();
            sc.freeStacks.pop_back();
        }
        pthread_mutex_unlock(&sc.poolMu);
        if (!sl.arena) sl.arena = static_cast<uint8_t*>(::operator new(2 * kUbAlloc, std::align_val_t(4096)));
        if (!sl.stack) sl.stack = ::operator new(ASCEND_SIM_STACK_BYTES);
        std::memset(sl.arena, 0xFF, dirty);        // poison: garbage reads show up as NaN
        std::memset(sl.arena + kUbAlloc, 0, dirty);  // shadow: nothing written yet
        getcontext(&sl.ctx);
        sl.ctx.uc_stack.ss_sp = sl.stack;
        sl.ctx.uc_stack.ss_size = ASCEND_SIM_STACK_BYTES;
        sl.ctx.uc_link = nullptr;
        makecontext(&sl.ctx, block_main, 0);
        s.inBlock = true;
        s.blockIdx = b;
        s.ub = sl.arena;
        s.ubHigh = 0;
        s.lastLoc = sc.launchLoc;
        s.race = g_raceCheck ? new RaceState() : nullptr;
        sl.owner = t_worker;
    }
    sl.st = BlkSt::Running;
    t_cur = &s;
    swapcontext(t_main, &sl.ctx);
    t_cur = nullptr;
    if (sc.threads > 1) {  // publish (with the block's GM writes) that it stopped in this phase: atomic_turn waits for it
        pthread_mutex_lock(&sc.turnMu);
        sl.stopped = sl.st == BlkSt::AtBarrier || sl.st == BlkSt::AtFlag ? sc.phaseNo : kEnded;
        pthread_cond_broadcast(&sc.turnCv);
        pthread_mutex_unlock(&sc.turnMu);
    }
    if (sl.st != BlkSt::AtBarrier && sl.st != BlkSt::AtFlag) {  // finished: give the stack and UB back, drop the block's scratch state
        delete s.race;
        s.race = nullptr;
        if (s.cubeArena) ::operator delete(s.cubeArena, std::align_val_t(4096));
        s.cubeArena = nullptr;
        s.liveQueues.clear();
        s.curPipe = nullptr;
        pthread_mutex_lock(&sc.poolMu);
        sc.freeStacks.push_back(sl.stack);
        // Tensors reach UB only inside InitBuffer reservations, so a block wrote no byte at or past ubHigh;
        // after a fault the whole arena is reset (conservative).
        sc.freeArenas.emplace_back(sl.arena, s.blockFaulted || s.ubHigh > kUbAlloc ? kUbAlloc : s.ubHigh);
        pthread_mutex_unlock(&sc.poolMu);
        sl.stack = nullptr;
        sl.arena = nullptr;
        s.ub = nullptr;
    }
}

// Runs this thread's share of the current phase: starts blocks from sc.order (shared counter) or
// resumes its own blocks waiting in SyncAll.
inline void run_share(Sched& sc, bool resume) {
    if (resume) {
        for (uint32_t b : sc.order)
            if (sc.slots[b].owner == t_worker) run_block(b);
        return;
    }
    for (;;) {
        const uint32_t i = __atomic_fetch_add(&sc.next, 1u, __ATOMIC_RELAXED);
        if (i >= sc.order.size()) break;
        run_block(sc.order[i]);
    }
}

struct WorkerArg {
    Sched* sc;
    int id;
};

inline void* worker_main(void* p) {
    const WorkerArg w = *static_cast<const WorkerArg*>(p);
    delete static_cast<const WorkerArg*>(p);
    Sched& sc = *w.sc;
    ucontext_t mainCtx{};
    t_main = &mainCtx;
    t_worker = w.id;
    stack_t alt{};
    alt.ss_size = 1 << 16;
    alt.ss_sp = ::operator new(alt.ss_size);
    sigaltstack(&alt, nullptr);  // the crash handler runs on it (SA_ONSTACK)
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&sc.mu);
        while (sc.phase == seen && !sc.quit) pthread_cond_wait(&sc.go, &sc.mu);
        if (sc.quit) {
            pthread_mutex_unlock(&sc.mu);
            break;
        }
        seen = sc.phase;
        const bool resume = sc.resume;
        pthread_mutex_unlock(&sc.mu);
        run_share(sc, resume);
        pthread_mutex_lock(&sc.mu);
        ++sc.finished;
        pthread_cond_signal(&sc.done);
        pthread_mutex_unlock(&sc.mu);
    }
    stack_t none{};
    none.ss_flags = SS_DISABLE;
    sigaltstack(&none, nullptr);
    ::operator delete(alt.ss_sp);
    t_main = nullptr;
    return nullptr;
}

// Runs one phase: starts (resume = false) or resumes the blocks in sc.order. With one thread they run
// here in order; otherwise on the worker threads (started on first use, kept for the whole launch).
inline void run_phase(Sched& sc, bool resume) {
    if (sc.threads <= 1) {
        ucontext_t mainCtx{};
        ucontext_t* saved = t_main;
        t_main = &mainCtx;
        t_worker = 0;
        sc.next = 0;
        run_share(sc, resume);
        t_main = saved;
        return;
    }
    if (sc.workers.empty()) {
        for (uint32_t i = 0; i < sc.threads; ++i) {
            pthread_attr_t attr;
            pthread_attr_init(&attr);
            pthread_attr_setstacksize(&attr, size_t(1) << 20);
            pthread_t tid;
            auto* arg = new WorkerArg{&sc, static_cast<int>(i)};
            if (pthread_create(&tid, &attr, worker_main, arg) == 0) {
                sc.workers.push_back(tid);
            } else {
                delete arg;
            }
            pthread_attr_destroy(&attr);
        }
        if (sc.workers.empty()) {  // no thread could be started: run here
            sc.threads = 1;
            run_phase(sc, resume);
            return;
        }
    }
    pthread_mutex_lock(&sc.mu);
    sc.next = 0;
    sc.resume = resume;
    sc.finished = 0;
    ++sc.phase;
    pthread_cond_broadcast(&sc.go);
    while (sc.finished < sc.workers.size()) pthread_cond_wait(&sc.done, &sc.mu);
    pthread_mutex_unlock(&sc.mu);
}

inline void stop_workers(Sched& sc) {
    if (sc.workers.empty()) return;
    pthread_mutex_lock(&sc.mu);
    sc.quit = true;
    pthread_cond_broadcast(&sc.go);
    pthread_mutex_unlock(&sc.mu);
    for (pthread_t t : sc.workers) pthread_join(t, nullptr);
    sc.workers.clear();
}

// ---- end of a phase: cross-block GM checks -------------------------------------------------------------

struct TaggedSpan {
    GmSpan s;
    uint32_t block;
    bool atomic;
};

// Bottom-up merge sort by (begin, block); <algorithm> is not included (it declares ::abs, ::div).
inline void sort_spans(std::vector<TaggedSpan>& w) {
    auto less = [](const TaggedSpan& x, const TaggedSpan& y) { return x.s.begin != y.s.begin ? x.s.begin < y.s.begin : x.block < y.block; };
    std::vector<TaggedSpan> tmp(w.size());
    for (size_t width = 1; width < w.size(); width *= 2) {
        for (size_t lo = 0; lo < w.size(); lo += 2 * width) {
            const size_t mid = lo + width < w.size() ? lo + width : w.size();
            const size_t hi = lo + 2 * width < w.size() ? lo + 2 * width : w.size();
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = less(w[j], w[i]) ? w[j++] : w[i++];
            while (i < mid) tmp[k++] = w[i++];
            while (j < hi) tmp[k++] = w[j++];
        }
        w.swap(tmp);
    }
}

// Two blocks writing the same GM bytes (plain writes, or a plain write and an atomic add), or one block
// reading bytes another block writes, in one launch phase (no SyncAll in between): the result depends on
// core timing (GM-RACE). Atomic adds of different blocks into the same bytes are the intended use.
inline void gm_check_phase(Sched& sc) {
    std::vector<TaggedSpan> w, r;
    for (uint32_t b = 0; b < sc.slots.size(); ++b) {
        State& s = sc.slots[b].state;
        for (const GmSpan& x : s.gmWrites) w.push_back(TaggedSpan{x, b, false});
        for (const GmSpan& x : s.gmAtomics) w.push_back(TaggedSpan{x, b, true});
        for (const GmSpan& x : s.gmReads) r.push_back(TaggedSpan{x, b, false});
        s.gmWrites.clear();
        s.gmAtomics.clear();
        s.gmReads.clear();
    }
    if (w.empty()) return;
    sort_spans(w);
    // write-write
    size_t cover = 0;  // the interval reaching furthest so far
    for (size_t i = 1; i < w.size(); ++i) {
        const TaggedSpan& c = w[i];
        const TaggedSpan& p = w[cover];
        if (c.s.begin < p.s.end && c.block != p.block && !(c.atomic && p.atomic)) {
            const TaggedSpan& later = c.block > p.block ? c : p;
            const TaggedSpan& earlier = c.block > p.block ? p : c;
            const uintptr_t hi = c.s.end < p.s.end ? c.s.end : p.s.end;
            report_for(later.block, "GM-RACE", later.s.loc,
                       "%s: block %u %s %llu GM bytes that block %u also %s (%s at %s:%u) in the same launch phase, without %s"
                       "a SyncAll in between: the result depends on core timing",
                       later.s.api, later.block, later.atomic ? "atomically adds to" : "writes",
                       static_cast<unsigned long long>(hi - c.s.begin), earlier.block, earlier.atomic ? "atomically adds to" : "writes",
                       earlier.s.api, base_name(earlier.s.loc.file_name()), earlier.s.loc.line(),
                       later.atomic || earlier.atomic ? "" : "SetAtomicAdd and without ");
        }
        if (c.s.end > p.s.end) cover = i;
    }
    if (r.empty()) return;
    // read-write: prefix maximum of the write ends, to walk back from the first write starting past a read
    std::vector<uintptr_t> maxEnd(w.size());
    for (size_t i = 0; i < w.size(); ++i) maxEnd[i] = i && maxEnd[i - 1] > w[i].s.end ? maxEnd[i - 1] : w[i].s.end;
    for (const TaggedSpan& x : r) {
        size_t lo = 0, hi = w.size();  // first write with begin >= x.end
        while (lo < hi) {
            const size_t mid = (lo + hi) / 2;
            if (w[mid].s.begin < x.s.end) lo = mid + 1;
            else hi = mid;
        }
        for (size_t j = lo; j-- > 0 && maxEnd[j] > x.s.begin;) {
            const TaggedSpan& y = w[j];
            if (y.s.end <= x.s.begin || y.block == x.block) continue;
            const uintptr_t b0 = x.s.begin > y.s.begin ? x.s.begin : y.s.begin;
            const uintptr_t b1 = x.s.end < y.s.end ? x.s.end : y.s.end;
            report_for(x.block, "GM-RACE", x.s.loc,
                       "%s: block %u reads %llu GM bytes that block %u %s (%s at %s:%u) in the same launch phase, without a SyncAll "
                       "in between: the value read depends on core timing (cross-core exchange through GM needs SyncAll)",
                       x.s.api, x.block, static_cast<unsigned long long>(b1 - b0), y.block, y.atomic ? "atomically adds to" : "writes",
                       y.s.api, base_name(y.s.loc.file_name()), y.s.loc.line());
            break;
        }
    }
}

// ---- counters line -----------------------------------------------------------------------------------

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

// The C library's free (for open_memstream's buffer), declared here: <cstdlib> is not included (it declares
// ::abs, ::div).
extern "C" void free(void*) noexcept;

// One line `sim-counters: {json}` on stderr (parsed and removed by npu_harness.sim.compiler).
inline void print_counters(uint32_t blockDim, const Sched* sc, double launchUs, double cpuUs) {
    static const char* const kSz[kSizeClasses] = {"b8", "b16", "b32", "b64"};
    // Built in memory and written with one call: stderr is unbuffered (a write per fprintf otherwise).
    char* text = nullptr;
    size_t textLen = 0;
    FILE* mem = open_memstream(&text, &textLen);
    FILE* f = mem ? mem : stderr;
    std::fprintf(f, "sim-counters: {\"version\":1,\"blockDim\":%u,\"aiv_per_aic\":%u,\"launch_us\":%.0f,\"launch_cpu_us\":%.0f,"
                    "\"threads\":%u,\"workspace_bytes\":%llu,", blockDim, g_launch.mixRatio, launchUs, cpuUs,
                 sc ? sc->threads : 1u, (unsigned long long)gm_workspace_bytes());
    const size_t nb = sc ? sc->slots.size() : 0;
    {  // the union of the cube's operand extents over all blocks: the bytes the launch's cube reads at least once
        std::map<uintptr_t, uint64_t> ops;  // start -> longest extent from it, in address order
        for (size_t b = 0; b < nb; ++b) {
            for (const auto& [at, bytes] : sc->slots[b].state.cnt.cubeOperands) {
                uint64_t& len = ops[at];
                len = bytes > len ? bytes : len;
            }
        }
        uint64_t unionBytes = 0;
        uintptr_t end = 0;
        for (const auto& [at, bytes] : ops) {
            const uintptr_t last = at + bytes;
            if (last <= end) continue;
            unionBytes += last - (at > end ? at : end);
            end = last;
        }
        if (unionBytes) std::fprintf(f, "\"cube_operand_bytes\":%llu,", (unsigned long long)unionBytes);
    }
    std::fprintf(f, "\"blocks\":[");
    for (size_t b = 0; b < nb; ++b) {
        const Counters& c = sc->slots[b].state.cnt;
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
        std::fputc('}', f);  // end of "vec"
        if (sc->slots[b].state.isAic && g_launch.aicRuns) std::fprintf(f, ",\"core\":\"aic\"");
        if (c.crossSets || c.crossWaits) {
            std::fprintf(f, ",\"cross_sets\":%llu,\"cross_waits\":%llu", (unsigned long long)c.crossSets, (unsigned long long)c.crossWaits);
        }
        std::fprintf(f, ",\"ub_get\":%llu,\"ub_set\":%llu,\"gm_get\":%llu,\"gm_set\":%llu,\"cube_macs\":%llu,\"sync_all\":%llu",
                     (unsigned long long)c.ubGet, (unsigned long long)c.ubSet, (unsigned long long)c.gmGet, (unsigned long long)c.gmSet,
                     (unsigned long long)c.cubeMacs, (unsigned long long)c.syncAll);
        if (c.cubeMacsF32) std::fprintf(f, ",\"cube_macs_f32\":%llu", (unsigned long long)c.cubeMacsF32);
        if (c.cubeMacsUseful) std::fprintf(f, ",\"cube_macs_useful\":%llu", (unsigned long long)c.cubeMacsUseful);
        if (c.cubeMacsUsefulF32) std::fprintf(f, ",\"cube_macs_useful_f32\":%llu", (unsigned long long)c.cubeMacsUsefulF32);
        if (c.gm2l1) std::fprintf(f, ",\"gm2l1\":%llu", (unsigned long long)c.gm2l1);
        if (c.cubeMacsAsync) std::fprintf(f, ",\"cube_macs_async\":%llu", (unsigned long long)c.cubeMacsAsync);
        if (c.gm2l1Async) std::fprintf(f, ",\"gm2l1_async\":%llu", (unsigned long long)c.gm2l1Async);
        if (c.l0c2gm) std::fprintf(f, ",\"l0c2gm\":%llu", (unsigned long long)c.l0c2gm);
        if (c.l0c2gmN) std::fprintf(f, ",\"l0c2gm_n\":%llu", (unsigned long long)c.l0c2gmN);
        if (c.l0c2gmUnitFlag) std::fprintf(f, ",\"l0c2gm_unitflag\":%llu", (unsigned long long)c.l0c2gmUnitFlag);
        if (c.wsGm2ub) std::fprintf(f, ",\"ws_gm2ub\":%llu", (unsigned long long)c.wsGm2ub);
        if (c.wsUb2gm) std::fprintf(f, ",\"ws_ub2gm\":%llu", (unsigned long long)c.wsUb2gm);
        if (c.wsGm2l1) std::fprintf(f, ",\"ws_gm2l1\":%llu", (unsigned long long)c.wsGm2l1);
        if (c.wsL0c2gm) std::fprintf(f, ",\"ws_l0c2gm\":%llu", (unsigned long long)c.wsL0c2gm);
        // [upper bound of the bucket in B, bytes], non-empty buckets only
        const auto buckets = [f](const char* key, const uint64_t (&bytes)[kReuseBuckets]) {
            bool any = false;
            for (uint32_t k = 0; k < kReuseBuckets; ++k) {
                if (!bytes[k]) continue;
                if (any) std::fputc(',', f);
                else std::fprintf(f, ",\"%s\":[", key);
                std::fprintf(f, "[%llu,%llu]", (unsigned long long)(uint64_t(1) << k), (unsigned long long)bytes[k]);
                any = true;
            }
            if (any) std::fputc(']', f);
        };
        buckets("reread", c.reuse.bytes);        // MTE2 re-reads by reuse distance
        buckets("panel_reload", c.panels.bytes);  // the cube's panel re-loads by stack distance
        if (c.mte1Cycles) std::fprintf(f, ",\"mte1_cycles\":%llu", (unsigned long long)c.mte1Cycles);
        if (c.inBufsMin != 0xffffffffu) std::fprintf(f, ",\"in_bufs\":%u", c.inBufsMin);
        if (c.outBufsMin != 0xffffffffu) std::fprintf(f, ",\"out_bufs\":%u", c.outBufsMin);
        if (c.inQueues) std::fprintf(f, ",\"in_queues\":%u", c.inQueues);
        if (c.outQueues) std::fprintf(f, ",\"out_queues\":%u", c.outQueues);
        bool anyFlag = false;  // "flags": {"EVENT": [SetFlag calls, distinct event ids], ...}
        for (uint32_t e = 0; e < kNumHardEvents; ++e) {
            if (!c.flagSets[e]) continue;
            std::fprintf(f, "%s\"%s\":[%llu,%d]", anyFlag ? "," : ",\"flags\":{", kHardEventNames[e], (unsigned long long)c.flagSets[e],
                         __builtin_popcount(c.flagIds[e]));
            anyFlag = true;
        }
        if (anyFlag) std::fputc('}', f);
        if (g_launch.aicRuns) cross_print_events(f, sc->slots[b].state);  // the work between cross-core flag events
        std::fputc('}', f);
    }
    std::fprintf(f, "]}\n");
    if (mem) {
        std::fclose(mem);
        std::fwrite(text, 1, textLen, stderr);
        free(text);
    }
    std::fflush(stderr);
}

// ---- one run of all blocks, phase by phase ------------------------------------------------------------------

inline void run_all(Sched& sc, bool reverse) {
    const uint32_t n = static_cast<uint32_t>(sc.slots.size());
    auto order_of = [&](auto pred) {
        sc.order.clear();
        for (uint32_t k = 0; k < n; ++k) {
            const uint32_t b = reverse ? n - 1 - k : k;
            if (pred(b)) sc.order.push_back(b);
        }
    };
    order_of([](uint32_t) { return true; });
    sc.phaseNo = 1;
    run_phase(sc, false);
    for (;;) {
        uint32_t waiting = 0;
        for (const Slot& sl : sc.slots) waiting += sl.st == BlkSt::AtBarrier;
        if (waiting == 0) break;
        if (waiting == n) {  // barrier complete: next phase
            gm_check_phase(sc);
            order_of([&](uint32_t b) { return sc.slots[b].st == BlkSt::AtBarrier; });
            ++sc.phaseNo;
            run_phase(sc, true);
            continue;
        }
        // Some blocks ended (or faulted) without reaching the barrier: on hardware the others would wait forever.
        uint32_t first = 0;
        while (sc.slots[first].st != BlkSt::AtBarrier) ++first;
        char ended[256];
        size_t len = 0;
        ended[0] = 0;
        for (uint32_t b = 0; b < n && len + 16 < sizeof ended; ++b) {
            if (sc.slots[b].st == BlkSt::AtBarrier) continue;
            len += static_cast<size_t>(std::snprintf(ended + len, sizeof ended - len, "%s%u", len ? ", " : "", b));
        }
        report_for(first, "HANG", sc.slots[first].barrierLoc,
                   "SyncAll: %u of %u blocks wait here, but block(s) %s ended without reaching this SyncAll: on hardware the "
                   "kernel never finishes",
                   waiting, n, ended);
        sc.abort = true;
        order_of([&](uint32_t b) { return sc.slots[b].st == BlkSt::AtBarrier; });
        ++sc.phaseNo;
        run_phase(sc, true);
        break;
    }
    gm_check_phase(sc);
}

inline void free_pools(Sched& sc) {
    stop_workers(sc);
    for (const auto& fa : sc.freeArenas) ::operator delete(fa.first, std::align_val_t(4096));
    for (void* s : sc.freeStacks) ::operator delete(s);
    sc.freeArenas.clear();
    sc.freeStacks.clear();
}

// ---- order check: the same launch again with the blocks in reverse order ----------------------------------

struct GmCopy {
    uintptr_t begin;
    uint64_t size;
    std::vector<uint8_t> bytes;
};

inline std::vector<GmCopy> gm_snapshot() {
    std::vector<GmCopy> v;
    for (const auto& [begin, chunk] : g_gmAllocs) {
        GmCopy c{begin, chunk.size, {}};
        c.bytes.assign(reinterpret_cast<const uint8_t*>(begin), reinterpret_cast<const uint8_t*>(begin) + chunk.size);
        v.push_back(static_cast<GmCopy&&>(c));
    }
    return v;
}

inline void gm_restore(const std::vector<GmCopy>& v) {
    for (const GmCopy& c : v) std::memcpy(reinterpret_cast<void*>(c.begin), c.bytes.data(), c.size);
}

inline void init_sched(Sched& sc, uint32_t blockDim, const KernelBody& body, const std::source_location& loc, uint32_t threads) {
    sc.slots.resize(blockDim);
    sc.call = body.sim_call();
    sc.obj = body.sim_obj();
    sc.launchLoc = loc;
    sc.threads = threads;
    g_launch.blocks.clear();
    const uint32_t aivs = g_launch.mixRatio * g_launch.launched;
    for (uint32_t b = 0; b < blockDim; ++b) {
        State& s = sc.slots[b].state;
        s.isAic = g_launch.aicMode || (g_launch.aicRuns && b >= aivs);
        s.coreIdx = g_launch.aicRuns && b >= aivs ? b - aivs : b / g_launch.mixRatio;
        g_launch.blocks.push_back(&s);
    }
    if (g_launch.aicRuns) cross_begin_launch(sc);
}

// Reports GM bytes that differ between the first run (snapshot `first`) and the current GM contents
// (the run with the blocks in reverse order), skipping bytes written by atomic adds (float sums may
// round differently in another order).
inline void compare_orders(const std::vector<GmCopy>& first, const std::vector<GmSpan>& atomics, const std::source_location& loc) {
    for (const GmCopy& c : first) {
        const uint8_t* now = reinterpret_cast<const uint8_t*>(c.begin);
        uint64_t i = 0;
        while (i < c.size) {
            if (now[i] == c.bytes[i]) {
                ++i;
                continue;
            }
            const uintptr_t a = c.begin + i;
            bool atomic = false;
            uintptr_t skipTo = a + 1;
            for (const GmSpan& x : atomics) {
                if (a >= x.begin && a < x.end) {
                    atomic = true;
                    skipTo = x.end;
                    break;
                }
            }
            if (atomic) {
                i = skipTo - c.begin;
                continue;
            }
            uint64_t j = i;
            while (j < c.size && now[j] != c.bytes[j]) ++j;
            report("ORDER-DEPENDENT", loc,
                   "the launch's results depend on the order in which blocks run: GM bytes [%llu, %llu) of a %llu-byte allocation differ "
                   "between running blocks 0, 1, ... and running them in reverse order (a cross-core exchange through GM without "
                   "SyncAll, or a spin-wait on another block?)",
                   (unsigned long long)i, (unsigned long long)j, (unsigned long long)c.size);
            return;
        }
    }
}

}  // namespace AscendC::sim::detail

namespace AscendC::sim {

ASCEND_SIM_RT int Launch(uint32_t blockDim, const KernelBody& body, std::source_location loc) {
    using namespace detail;
    const RunConfig cfg = read_config();
    g_host.reports.clear();
    g_host.reportText.clear();
    g_launch.mixRatio = g_simKernelMode == KernelMode::MIX_MODE ? 2u : 1u;
    g_launch.blockDim = blockDim;
    g_launch.launched = blockDim;
    g_launch.aicMode = g_simKernelMode == KernelMode::AIC_MODE;
    // a program that uses the cross-core flags runs the AIC of its MIX launches as blocks too (crossflag.h)
    g_launch.aicRuns = g_simKernelMode == KernelMode::MIX_MODE && g_crossCore;
    g_launch.inLaunch = true;
    g_launch.quiet = false;
    g_launch.blocks.clear();
    Sched sc;
    timespec w0{}, c0{}, w1{}, c1{};
    clock_gettime(CLOCK_MONOTONIC, &w0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    if (blockDim == 0 || blockDim > ASCEND_SIM_MAX_BLOCKS) {
        report("BLOCK-DIM", loc, "Launch with blockDim = %u; it must be in [1, %u] on this target (ASCEND_SIM_MAX_BLOCKS)", blockDim,
               unsigned(ASCEND_SIM_MAX_BLOCKS));
    } else {
        blockDim *= g_launch.mixRatio;  // MIX: the body runs on the 2 AIV of every launched block
        if (g_launch.aicRuns) blockDim += g_launch.launched;  // ... and on its AIC (slots after the AIV)
        g_launch.blockDim = blockDim;
        // blocks that wait for each other's flags run one at a time, switching at a wait (impl/crossflag_rt.h)
        const bool serial = g_serialBlocks || cfg.orderCheck || g_launch.aicRuns;
        const uint32_t threads = serial ? 1u : cfg.threads;
        // The Matmul GEMM splits its rows over threads too: with the blocks already on parallel threads it gets the
        // threads the blocks leave idle (all of them when blocks run one at a time).
        const uint32_t busy = threads < blockDim ? threads : blockDim;
        g_gemmThreads = threads > 1 ? (cfg.threads / busy > 1 ? cfg.threads / busy : 1u) : cfg.threads;
        std::vector<GmCopy> before;
        if (cfg.orderCheck && blockDim > 1) before = gm_snapshot();
        Sched* prev = g_sched;
        init_sched(sc, blockDim, body, loc, threads);
        g_sched = &sc;
        {
            SignalGuard guard(cfg.timeLimit);
            if (g_launch.aicRuns) run_all_cross(sc, false);
            else run_all(sc, false);
            if (cfg.orderCheck && blockDim > 1) {
                // Same inputs, blocks in reverse order; outputs that differ depend on the block order (a
                // cross-core exchange without SyncAll, a spin-wait, ...). Atomic sums may differ in rounding.
                std::vector<GmSpan> atomics;
                for (const Slot& sl : sc.slots) atomics.insert(atomics.end(), sl.state.gmAtomicsAll.begin(), sl.state.gmAtomicsAll.end());
                std::vector<GmCopy> after = gm_snapshot();
                gm_restore(before);
                Sched again;
                init_sched(again, blockDim, body, loc, 1);
                g_sched = &again;
                g_launch.quiet = true;
                if (g_launch.aicRuns) run_all_cross(again, true);
                else run_all(again, true);
                g_launch.quiet = false;
                if (g_launch.aicRuns) cross_free(again);
                for (Slot& sl : again.slots) atomics.insert(atomics.end(), sl.state.gmAtomicsAll.begin(), sl.state.gmAtomicsAll.end());
                free_pools(again);
                g_sched = &sc;
                g_launch.blocks.clear();
                for (Slot& sl : sc.slots) g_launch.blocks.push_back(&sl.state);
                compare_orders(after, atomics, loc);
                gm_restore(after);
            }
        }
        if (g_launch.aicRuns) cross_end_launch(sc);
        free_pools(sc);
        g_sched = prev;
    }
    clock_gettime(CLOCK_MONOTONIC, &w1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    auto us = [](const timespec& a, const timespec& b) { return double(b.tv_sec - a.tv_sec) * 1e6 + double(b.tv_nsec - a.tv_nsec) / 1e3; };
    {  // re-reads by reuse distance, over all blocks (impl/reuse_rt.h)
        std::vector<ReuseCounters*> reuse;
        for (Slot& sl : sc.slots) reuse.push_back(&sl.state.cnt.reuse);
        reuse_count_launch(reuse);
        std::vector<Counters*> panels;  // the cube's panel re-loads by stack distance (impl/panel_reuse_rt.h)
        for (Slot& sl : sc.slots) panels.push_back(&sl.state.cnt);
        panel_count_launch(panels);
    }
    print_counters(g_launch.blockDim, &sc, us(w0, w1), us(c0, c1));
    std::vector<SiteSum> sites;
    collect_sites(sites, g_host, false);
    for (const Slot& sl : sc.slots) collect_sites(sites, sl.state, true);
    const unsigned long long errors = print_sites(sites);
    if (g_launch.aicRuns) {
        cross_print_notes();
        cross_free(sc);
    }
    std::fprintf(stderr, "sim: %u blocks, %llu errors\n", g_launch.blockDim, errors);
    std::fflush(stderr);
    g_launch.inLaunch = false;
    g_launch.blocks.clear();
    return errors > INT_MAX ? INT_MAX : static_cast<int>(errors);
}

}  // namespace AscendC::sim

namespace AscendC::sim::detail {

ASCEND_SIM_RT void sync_all(const std::source_location& loc, bool aivOnly) {
    touch(loc);
    Sched* sc = g_sched;
    State& s = st();
    if (sc == nullptr || !s.inBlock) fatal("PARAM-RANGE", loc, "SyncAll outside a kernel launch");
    s.cnt.syncAll += 1;
    Slot& sl = sc->slots[s.blockIdx];
    sl.st = BlkSt::AtBarrier;
    sl.barrierLoc = loc;
    sl.barrierAivOnly = aivOnly;
    swapcontext(&sl.ctx, t_main);
    touch(loc);
    if (sc->abort) throw Fault{};
}

ASCEND_SIM_RT void atomic_turn() {
    Sched* sc = g_sched;
    State& s = st();
    if (sc == nullptr || !s.inBlock || sc->threads <= 1 || s.atomicTurn == sc->phaseNo) return;
    pthread_mutex_lock(&sc->turnMu);
    for (;;) {
        uint32_t a = 0;
        while (a < s.blockIdx && (sc->slots[a].stopped == kEnded || sc->slots[a].stopped == sc->phaseNo)) ++a;
        if (a == s.blockIdx) break;
        pthread_cond_wait(&sc->turnCv, &sc->turnMu);
    }
    pthread_mutex_unlock(&sc->turnMu);
    s.atomicTurn = sc->phaseNo;
}

ASCEND_SIM_RT void set_atomic(void (*fn)(void*, const void*, uint64_t, const std::source_location&), const char* type) {
    State& s = st();
    s.atomicAdd = fn;
    s.atomicType = type;
}

ASCEND_SIM_RT void report_atomic_uninit(const void* gm, uint64_t index, const char* type, const std::source_location& loc) {
    char where[160];
    uintptr_t begin = 0;
    uint64_t size = 0;
    const uintptr_t a = reinterpret_cast<uintptr_t>(gm);
    if (gm_floor(a, begin, size) && a - begin < size) {
        std::snprintf(where, sizeof where, "GM byte %llu of a %llu-byte allocation", (unsigned long long)(a - begin), (unsigned long long)size);
    } else {
        std::snprintf(where, sizeof where, "GM address %p", gm);
    }
    (void)index;
    report("ATOMIC-UNINIT", loc,
           "SetAtomicAdd<%s>: this copy adds into %s, which still holds the 0xFF poison the launch leaves in outputs: the kernel never "
           "zeroed (or wrote) the output before accumulating into it (on hardware the sum starts from whatever GM held)",
           type, where);
}

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_LAUNCH_RT_H
