// ascend_sim/impl/core_rt.h - runtime definitions of core.h: fault reporting, the GM registry and the
// per-phase GM access logs.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_CORE_RT_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_CORE_RT_H

namespace AscendC::sim::detail {

inline unsigned long long g_outsideErrors = 0;  // errors reported outside any launch

ASCEND_SIM_RT void vreport(const char* code, const std::source_location& loc, const char* fmt, va_list ap) {
    State& s = st();
    const char* file = base_name(loc.file_name());
    const uint32_t line = loc.line();
    if (!g_launch.inLaunch) {
        ++g_outsideErrors;
        char msg[1536];
        std::vsnprintf(msg, sizeof msg, fmt, ap);
        std::fprintf(stderr, "error[%s]: %s\n --> %s:%u\n", code, msg, file, line);
        std::fflush(stderr);
        return;
    }
    if (g_launch.quiet) return;
    for (PendingReport& r : s.reports) {
        if (r.line == line && std::strcmp(r.code, code) == 0 && std::strcmp(r.file, file) == 0) {
            ++r.count;  // deduplicated: the first occurrence per (code, file, line) keeps its message
            return;
        }
    }
    char msg[1536];
    const int n = std::vsnprintf(msg, sizeof msg, fmt, ap);
    const size_t len = n < 0 ? 0 : (static_cast<size_t>(n) < sizeof msg ? static_cast<size_t>(n) : sizeof msg - 1);
    const uint32_t off = static_cast<uint32_t>(s.reportText.size());
    s.reportText.insert(s.reportText.end(), msg, msg + len);
    s.reportText.push_back('\0');
    s.reports.push_back(PendingReport{code, file, line, off, 1});
}

ASCEND_SIM_RT void report(const char* code, const std::source_location& loc, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(code, loc, fmt, ap);
    va_end(ap);
}

ASCEND_SIM_RT void report_for(uint32_t b, const char* code, const std::source_location& loc, const char* fmt, ...) {
    State* const saved = t_cur;
    t_cur = b < g_launch.blocks.size() ? g_launch.blocks[b] : nullptr;
    va_list ap;
    va_start(ap, fmt);
    vreport(code, loc, fmt, ap);
    va_end(ap);
    t_cur = saved;
}

ASCEND_SIM_RT void print_pending(const State& s, std::vector<const PendingReport*>* printed, unsigned long long& total);

ASCEND_SIM_RT void fatal(const char* code, const std::source_location& loc, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(code, loc, fmt, ap);
    va_end(ap);
    if (st().inBlock) throw Fault{};
    unsigned long long total = g_outsideErrors;
    if (g_launch.inLaunch) print_pending(g_host, nullptr, total);
    std::fprintf(stderr, "sim: fatal error outside sim::Launch\nsim: 0 blocks, %llu errors\n", total);
    std::fflush(stderr);
    __builtin_exit(1);
}

ASCEND_SIM_RT bool gm_floor(uintptr_t addr, uintptr_t& begin, uint64_t& size) {
    // One cached allocation per thread: consecutive accesses usually hit the same tensor.
    static thread_local uintptr_t cacheBegin = 0;
    static thread_local uint64_t cacheSize = 0;
    static thread_local uint64_t cacheGen = ~0ull;  // invalidated when the registry changes
    if (cacheGen == g_gmGeneration && addr >= cacheBegin && addr - cacheBegin < cacheSize) {
        begin = cacheBegin;
        size = cacheSize;
        return true;
    }
    auto it = g_gmAllocs.upper_bound(addr);
    if (it == g_gmAllocs.begin()) return false;
    --it;
    begin = it->first;
    size = it->second.size;
    cacheBegin = begin;
    cacheSize = size;
    cacheGen = g_gmGeneration;
    return true;
}

namespace {
inline void log_span(std::vector<GmSpan>& w, const char* api, const void* gmPtr, uint64_t bytes, const std::source_location& loc) {
    const uintptr_t b = reinterpret_cast<uintptr_t>(gmPtr);
    // consecutive accesses of one call site are merged (looking back a few entries: loops interleave sites)
    const uint32_t epoch = cross_epoch();
    for (size_t k = w.size(), stop = w.size() > 4 ? w.size() - 4 : 0; k > stop; --k) {
        GmSpan& last = w[k - 1];
        if (last.end == b && last.epoch == epoch && last.loc.line() == loc.line() && last.loc.file_name() == loc.file_name()) {
            last.end += bytes;
            return;
        }
    }
    w.push_back(GmSpan{b, b + bytes, api, loc, epoch});
}
}  // namespace

// GM regions whose bytes start undefined (sim::GmTrackUninit): one flag per byte, set by every write.
struct UninitRegion {
    uintptr_t begin, end;
    std::vector<uint8_t> written;
};
inline std::vector<UninitRegion> g_uninit;

inline void uninit_write(const void* gmPtr, uint64_t bytes) {
    const auto b = reinterpret_cast<uintptr_t>(gmPtr);
    for (UninitRegion& r : g_uninit) {
        const uintptr_t lo = b > r.begin ? b : r.begin, hi = b + bytes < r.end ? b + bytes : r.end;
        // blocks run on several threads: relaxed atomic byte stores (GCC builtins: <atomic> would declare C
        // library names such as abs and div, which kernels may use as entry names)
        for (uintptr_t x = lo; x < hi; ++x) __atomic_store_n(&r.written[x - r.begin], uint8_t{1}, __ATOMIC_RELAXED);
    }
}

inline void uninit_read(const char* api, const void* gmPtr, uint64_t bytes, const std::source_location& loc) {
    const auto b = reinterpret_cast<uintptr_t>(gmPtr);
    for (UninitRegion& r : g_uninit) {
        const uintptr_t lo = b > r.begin ? b : r.begin, hi = b + bytes < r.end ? b + bytes : r.end;
        uint64_t missing = 0;
        uintptr_t first = 0;
        for (uintptr_t x = lo; x < hi; ++x) {
            if (__atomic_load_n(&r.written[x - r.begin], __ATOMIC_RELAXED) == 0) {
                if (missing++ == 0) first = x;
            }
        }
        if (missing != 0) {
            report("GM-UNINIT", loc,
                   "%s reads %llu GM bytes of a workspace region that nothing has written yet (the first at byte %llu of the "
                   "region): a stage reads a workspace tensor before the stage that writes it (or a SyncAll after it)",
                   api, static_cast<unsigned long long>(missing), static_cast<unsigned long long>(first - r.begin));
        }
    }
}

// An access to GM that an asynchronous IterateAll<false>(..., waitIterateAll = true) of this block is still writing:
// its result is defined only after WaitIterateAll() (CANN "异步场景", atlas_ascendc_10_10015: "需要IterateAll的结果时,
// 调用WaitIterateAll等待IterateAll异步接口返回"). The emulator computes it at once, so the check stands in for the race.
inline void async_result_check(const State& s, const char* api, const void* gmPtr, uint64_t bytes, bool write,
                               const std::source_location& loc) {
    const auto lo = reinterpret_cast<uintptr_t>(gmPtr), hi = lo + bytes;
    for (const GmSpan& r : s.asyncResults) {
        if (lo < r.end && r.begin < hi) {
            report("MATMUL-ASYNC", loc,
                   "%s %s GM bytes that IterateAll<false> (at %s:%u) is still writing: its result is defined only after "
                   "WaitIterateAll()",
                   api, write ? "writes" : "reads", base_name(r.loc.file_name()), r.loc.line());
            return;
        }
    }
}

ASCEND_SIM_RT void gm_mark_write(const char* api, const void* gmPtr, uint64_t bytes, const std::source_location& loc) {
    State& s = st();
    if (!s.inBlock || bytes == 0) return;
    log_span(s.gmWrites, api, gmPtr, bytes, loc);
    if (!s.asyncResults.empty()) async_result_check(s, api, gmPtr, bytes, true, loc);
    if (!g_uninit.empty()) uninit_write(gmPtr, bytes);
}

ASCEND_SIM_RT void gm_mark_atomic(const char* api, const void* gmPtr, uint64_t bytes, const std::source_location& loc) {
    State& s = st();
    if (!s.inBlock || bytes == 0) return;
    log_span(s.gmAtomics, api, gmPtr, bytes, loc);
    log_span(s.gmAtomicsAll, api, gmPtr, bytes, loc);
    if (!s.asyncResults.empty()) async_result_check(s, api, gmPtr, bytes, true, loc);
    if (!g_uninit.empty()) uninit_write(gmPtr, bytes);
}

ASCEND_SIM_RT bool gm_in_workspace(const void* gmPtr) {
    const auto b = reinterpret_cast<uintptr_t>(gmPtr);
    for (const UninitRegion& r : g_uninit) {
        if (b >= r.begin && b < r.end) return true;
    }
    return false;
}

ASCEND_SIM_RT uint64_t gm_workspace_bytes() {
    uint64_t n = 0;
    for (const UninitRegion& r : g_uninit) n += r.end - r.begin;
    return n;
}

ASCEND_SIM_RT void gm_mark_read(const char* api, const void* gmPtr, uint64_t bytes, const std::source_location& loc) {
    State& s = st();
    if (!s.inBlock || bytes == 0) return;
    log_span(s.gmReads, api, gmPtr, bytes, loc);
    if (!s.asyncResults.empty()) async_result_check(s, api, gmPtr, bytes, false, loc);
    if (!g_uninit.empty()) uninit_read(api, gmPtr, bytes, loc);
}

}  // namespace AscendC::sim::detail

namespace AscendC::sim {

ASCEND_SIM_RT uint8_t* GmAlloc(size_t bytes) {
    // Large buffers: 2 MiB aligned and backed by transparent huge pages where the host allows it
    // (MADV_HUGEPAGE), so filling them costs a few page faults instead of one per 4 KiB.
    constexpr size_t kHuge = size_t(2) << 20;
    const bool huge = bytes >= 2 * kHuge;
    const size_t align = huge ? kHuge : 512;
    const size_t padded = static_cast<size_t>(detail::align_up(bytes ? bytes : 1, align));
    void* p = ::operator new(padded, std::align_val_t(align), std::nothrow);
    if (!p) {
        std::fprintf(stderr, "error[MEMORY-LIMIT]: sim::GmAlloc(%zu B) failed: the emulator's memory limit (or the host's memory) is "
                             "exhausted\n", bytes);
        std::fflush(stderr);
        return nullptr;
    }
#ifdef MADV_HUGEPAGE
    if (huge) (void)madvise(p, padded, MADV_HUGEPAGE);  // advice only: failure changes nothing
#endif
    std::memset(p, 0xFF, padded);
    detail::g_gmAllocs[reinterpret_cast<uintptr_t>(p)] = detail::GmChunk{bytes};
    ++detail::g_gmGeneration;
    return static_cast<uint8_t*>(p);
}

namespace detail {
// An output's bytes into its file, 64 MiB at a time. `release`: each written piece of a large output is
// given back to the OS at once (MADV_DONTNEED), so the output is not held twice (heap + page cache).
// Async-signal-safe: the crash and time-limit handlers call it through flush_outputs.
ASCEND_SIM_RT bool write_output(int fd, uint8_t* p, size_t bytes, bool release) {
    constexpr size_t kPiece = size_t(64) << 20;
    size_t off = 0;
    while (off < bytes) {
        const size_t want = bytes - off < kPiece ? bytes - off : kPiece;
        const ssize_t n = pwrite(fd, p + off, want, static_cast<off_t>(off));
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            static const char kMsg[] = "error[LAUNCH]: cannot write an output file of the launch (disk full or a file-size limit)\n";
            (void)!write(2, kMsg, sizeof kMsg - 1);
            return false;
        }
        // a whole piece at a 64 MiB offset of a 2 MiB aligned buffer (GmAlloc's alignment from 4 MiB)
        if (release && static_cast<size_t>(n) == kPiece) (void)madvise(p + off, kPiece, MADV_DONTNEED);
        off += static_cast<size_t>(n);
    }
    return true;
}

// Writes every live GmMapOutput buffer into its file: the kernel's results so far when the program
// crashes, hits the time limit or exits without GmFree (the file then shows what a shared mapping would).
ASCEND_SIM_RT void flush_outputs() {
    for (const auto& [begin, chunk] : g_gmAllocs)
        if (chunk.outFd >= 0) write_output(chunk.outFd, reinterpret_cast<uint8_t*>(begin), chunk.size, false);
}

}  // namespace detail

ASCEND_SIM_RT void GmFree(void* p, std::source_location loc) {
    if (!p) return;
    auto it = detail::g_gmAllocs.find(reinterpret_cast<uintptr_t>(p));
    if (it == detail::g_gmAllocs.end()) {
        detail::report("GM-FREE", loc, "GmFree(%p): not a live sim::GmAlloc allocation (double free or foreign pointer)", p);
        return;
    }
    const detail::GmChunk chunk = it->second;
    detail::g_gmAllocs.erase(it);
    ++detail::g_gmGeneration;
    if (chunk.mapped) {
        munmap(p, chunk.mapped);
        return;
    }
    if (chunk.outFd >= 0) {
        detail::write_output(chunk.outFd, static_cast<uint8_t*>(p), chunk.size, true);
        close(chunk.outFd);
    }
    const bool huge = chunk.size >= (size_t(4) << 20);
    ::operator delete(p, std::align_val_t(huge ? (size_t(2) << 20) : 512));
}

namespace detail {
inline uint8_t* gm_map(const char* path, size_t bytes, bool output) {
    if (bytes == 0) return GmAlloc(0);
    // Outputs are not truncated: an existing file keeps its pages (they are all rewritten by GmFree).
    const int fd = output ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        std::fprintf(stderr, "error[LAUNCH]: cannot open %s\n", path);
        return nullptr;
    }
    struct stat sb {};
    if (fstat(fd, &sb) != 0 || (!output && static_cast<uint64_t>(sb.st_size) < bytes)) {
        std::fprintf(stderr, "error[LAUNCH]: %s holds %lld bytes, %zu expected\n", path, static_cast<long long>(sb.st_size), bytes);
        close(fd);
        return nullptr;
    }
    if (output) {
        if (static_cast<uint64_t>(sb.st_size) != bytes && ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
            std::fprintf(stderr, "error[LAUNCH]: cannot size %s to %zu bytes\n", path, bytes);
            close(fd);
            return nullptr;
        }
        // Heap GM (poisoned with 0xFF, huge pages from 4 MiB: GmAlloc) written into the file by GmFree: on
        // a memory file system about half the cost of populating a shared mapping of a new file.
        uint8_t* p = GmAlloc(bytes);
        if (!p) {
            close(fd);
            return nullptr;
        }
        g_gmAllocs[reinterpret_cast<uintptr_t>(p)].outFd = fd;
        return p;
    }
    const uint64_t len = align_up(bytes, 4096);
    // Inputs: a private writable mapping faulted in as the kernel reads it (the page cache's pages, no
    // copy); only pages a kernel writes into get copied (copy-on-write).
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        std::fprintf(stderr, "error[MEMORY-LIMIT]: cannot map %s (%zu bytes): the emulator's memory limit (or the host's memory) is "
                             "exhausted\n", path, bytes);
        return nullptr;
    }
    g_gmAllocs[reinterpret_cast<uintptr_t>(p)] = GmChunk{bytes, len};
    ++g_gmGeneration;
    return static_cast<uint8_t*>(p);
}

// Outputs still live at exit (a driver that returns without GmFree) reach their files too. Defined after
// g_gmAllocs, so it is destroyed (and flushes) before the registry is.
struct OutputFlushAtExit {
    ~OutputFlushAtExit() { flush_outputs(); }
};
inline OutputFlushAtExit g_outputFlushAtExit;
}  // namespace detail

ASCEND_SIM_RT uint8_t* GmMapInput(const char* path, size_t bytes) { return detail::gm_map(path, bytes, false); }
ASCEND_SIM_RT uint8_t* GmMapOutput(const char* path, size_t bytes) { return detail::gm_map(path, bytes, true); }

ASCEND_SIM_RT void GmTrackUninit(const void* p, size_t bytes) {
    const auto b = reinterpret_cast<uintptr_t>(p);
    detail::g_uninit.push_back(detail::UninitRegion{b, b + bytes, std::vector<uint8_t>(bytes, 0)});
}

ASCEND_SIM_RT void GmUntrackAll() { detail::g_uninit.clear(); }

}  // namespace AscendC::sim

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_CORE_RT_H
