// ascend_sim/impl/race_rt.h - runtime of race.h: per-block vector clocks and an interval map of the
// last accesses to every byte range (ref_next §5.7; msSanitizer's racecheck model, ref_next §5.6).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_RACE_RT_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_RACE_RT_H

namespace AscendC::sim::detail {

struct PipeClock {
    uint32_t t[kPipes]{};
    void join(const uint32_t* o) {
        for (uint32_t q = 0; q < kPipes; ++q) t[q] = o[q] > t[q] ? o[q] : t[q];
    }
};

// The last access of a byte range by one pipe: issue stamp on that pipe, API and call site.
struct RaceRec {
    uint32_t stamp = 0;  // 0: none
    Pipe pipe = Pipe::S;
    const char* api = nullptr;
    std::source_location loc{};
    bool operator==(const RaceRec& o) const {
        return stamp == o.stamp && pipe == o.pipe && (stamp == 0 || (api == o.api && loc.line() == o.loc.line() &&
                                                                     loc.file_name() == o.loc.file_name()));
    }
};

struct RaceSeg {
    uintptr_t end;
    RaceRec w;               // last write
    RaceRec r[kPipes];       // last read per pipe since that write
    bool same_state(const RaceSeg& o) const {
        if (!(w == o.w)) return false;
        for (uint32_t q = 0; q < kPipes; ++q)
            if (!(r[q] == o.r[q])) return false;
        return true;
    }
};

struct RaceState {
    uint32_t issue[kPipes]{};     // instructions issued to each pipe (stamps 1, 2, ...)
    PipeClock vc[kPipes];         // vc[P].t[Q]: Q's instructions up to this stamp have completed before P's next one starts
    std::map<uintptr_t, RaceSeg> segs;  // begin -> segment; segments do not overlap
    std::vector<PipeClock> flags[kNumHardEvents][kMaxEventIds];  // SetFlag snapshots not yet waited for (FIFO)
    // the latest GM write of MTE3 (UB -> GM) and FIX (Fixpipe) and the stamp up to which a CrossCoreSetFlag covered
    // them (impl/crossflag_rt.h: a set must follow the pipe that wrote the data the other core reads)
    uint32_t gmWrite[kPipes]{}, gmCovered[kPipes]{};
    const char* gmWriteApi[kPipes]{};
    std::source_location gmWriteLoc[kPipes]{};
};

// (source pipe, destination pipe) of each HardEvent (names read SRC_DST).
inline void event_pipes(HardEvent e, Pipe& src, Pipe& dst) {
    static const Pipe kSrc[kNumHardEvents] = {
        Pipe::MTE2, Pipe::MTE1, Pipe::MTE1, Pipe::M,    Pipe::MTE2, Pipe::V,    Pipe::MTE3, Pipe::V,    Pipe::M,
        Pipe::V,    Pipe::V,    Pipe::MTE3, Pipe::MTE1, Pipe::MTE1, Pipe::MTE2, Pipe::M,    Pipe::V,    Pipe::M,
        Pipe::FIX,  Pipe::MTE3, Pipe::MTE2, Pipe::S,    Pipe::V,    Pipe::S,    Pipe::MTE2, Pipe::S,    Pipe::MTE3,
        Pipe::MTE2, Pipe::FIX,  Pipe::FIX,  Pipe::M,    Pipe::FIX,  Pipe::MTE1, Pipe::FIX,  Pipe::FIX};
    static const Pipe kDst[kNumHardEvents] = {
        Pipe::MTE1, Pipe::MTE2, Pipe::M,    Pipe::MTE1, Pipe::V,    Pipe::MTE2, Pipe::V,    Pipe::MTE3, Pipe::V,
        Pipe::M,    Pipe::V,    Pipe::MTE1, Pipe::MTE3, Pipe::V,    Pipe::M,    Pipe::MTE2, Pipe::MTE1, Pipe::FIX,
        Pipe::M,    Pipe::MTE2, Pipe::MTE3, Pipe::V,    Pipe::S,    Pipe::MTE2, Pipe::S,    Pipe::MTE3, Pipe::S,
        Pipe::FIX,  Pipe::MTE2, Pipe::S,    Pipe::S,    Pipe::MTE3, Pipe::FIX,  Pipe::MTE1, Pipe::FIX};
    src = kSrc[static_cast<uint32_t>(e)];
    dst = kDst[static_cast<uint32_t>(e)];
}

inline Pipe pipe_of(pipe_t p) {
    switch (p) {
        case PIPE_S: return Pipe::S;
        case PIPE_V: return Pipe::V;
        case PIPE_M: return Pipe::M;
        case PIPE_MTE1: return Pipe::MTE1;
        case PIPE_MTE2: return Pipe::MTE2;
        case PIPE_MTE3: return Pipe::MTE3;
        case PIPE_FIX: return Pipe::FIX;
        default: return Pipe::kCount;
    }
}

// What `src` has completed once everything issued to it so far finishes (the snapshot a flag carries):
// its own instructions, what it had observed, and what the scalar unit had observed when it issued
// the flag (the scalar unit's own instructions are not included: they complete asynchronously).
inline PipeClock race_snapshot(const RaceState& r, Pipe src) {
    PipeClock c = r.vc[static_cast<uint32_t>(src)];
    const PipeClock& s = r.vc[static_cast<uint32_t>(Pipe::S)];
    for (uint32_t q = 1; q < kPipes; ++q) c.t[q] = s.t[q] > c.t[q] ? s.t[q] : c.t[q];
    c.t[static_cast<uint32_t>(src)] = r.issue[static_cast<uint32_t>(src)];
    if (src == Pipe::S) c.t[0] = r.issue[0];
    return c;
}

// The compiler's --cce-auto-sync inserts S <-> V / MTE2 / MTE3 flags and V -> V barriers where one
// instruction depends on another (ref_next §5.4).
inline bool auto_synced(Pipe a, Pipe b) {
    auto vec_or_mte = [](Pipe p) { return p == Pipe::V || p == Pipe::MTE2 || p == Pipe::MTE3; };
    if (a == Pipe::S) return vec_or_mte(b);
    if (b == Pipe::S) return vec_or_mte(a);
    return a == Pipe::V && b == Pipe::V;
}

// Describes host bytes [b, e) for a report: UB / L1 / L0 offsets of this block, or a GM allocation.
inline void describe_bytes(char* out, size_t cap, uintptr_t b, uintptr_t e) {
    const State& s = st();
    const uintptr_t ub = reinterpret_cast<uintptr_t>(s.ub);
    if (s.ub && b >= ub && b < ub + ASCEND_SIM_UB_BYTES) {
        std::snprintf(out, cap, "UB bytes [%llu, %llu)", (unsigned long long)(b - ub), (unsigned long long)(e - ub));
        return;
    }
    const uintptr_t ca = reinterpret_cast<uintptr_t>(s.cubeArena);
    if (s.cubeArena && b >= ca && b < ca + kCubeArenaBytes) {
        uint64_t off = b - ca;
        uint32_t m = 1;
        while (m + 1 < static_cast<uint32_t>(Mem::kCount) && off >= kMemBytes[m]) off -= kMemBytes[m++];
        std::snprintf(out, cap, "%s bytes [%llu, %llu)", kMemNames[m], (unsigned long long)off, (unsigned long long)(off + (e - b)));
        return;
    }
    uintptr_t begin = 0;
    uint64_t size = 0;
    if (gm_floor(b, begin, size) && b - begin < size) {
        std::snprintf(out, cap, "GM bytes [%llu, %llu) of a %llu-byte allocation", (unsigned long long)(b - begin),
                      (unsigned long long)(e - begin), (unsigned long long)size);
        return;
    }
    std::snprintf(out, cap, "%llu bytes at %p", (unsigned long long)(e - b), reinterpret_cast<void*>(b));
}

inline void race_report(Pipe p, const char* api, const std::source_location& loc, const char* kind, const RaceRec& prev, uintptr_t b,
                        uintptr_t e) {
    char where[160];
    describe_bytes(where, sizeof where, b, e);
    const uint32_t q = static_cast<uint32_t>(prev.pipe), pp = static_cast<uint32_t>(p);
    const char* verb = kind[0] == 'R' ? "reads what" : kind[1] == 'A' && kind[2] == 'R' ? "overwrites what" : "overwrites what";
    const char* prevVerb = kind[0] == 'W' && kind[1] == 'A' && kind[2] == 'R' ? "reads" : "writes";
    char missing[160];
    if (q == pp) {
        std::snprintf(missing, sizeof missing, "PipeBarrier<%s>() between them (instructions of one pipe start in order but may "
                                               "finish out of order)", kPipeNames[pp]);
    } else {
        char name[32];
        std::snprintf(name, sizeof name, "%s_%s", kPipeShort[q], kPipeShort[pp]);
        bool legal = false;
        for (uint32_t k = 0; k < kNumHardEvents; ++k) legal |= std::strcmp(kHardEventNames[k], name) == 0;
        if (legal) {
            std::snprintf(missing, sizeof missing, "SetFlag<HardEvent::%s> after the first and WaitFlag<HardEvent::%s> before the second%s",
                          name, name, (q == 4 && pp == 1) || (q == 1 && pp == 5) ? " (or a TQue EnQue / DeQue)" : "");
        } else {
            std::snprintf(missing, sizeof missing, "an event ordering %s before %s", kPipeNames[q], kPipeNames[pp]);
        }
    }
    report("PIPE-RACE", loc, "%s hazard on %s: %s on %s %s %s on %s %s at %s:%u, and nothing orders the two: missing %s", kind, where,
           api, kPipeNames[pp], verb, prev.api, kPipeNames[q], prevVerb, base_name(prev.loc.file_name()), prev.loc.line(), missing);
}

// Is the earlier access `prev` complete before pipe `p`'s current instruction starts?
inline bool race_ordered(RaceState& r, Pipe p, const RaceRec& prev) {
    const uint32_t pp = static_cast<uint32_t>(p), q = static_cast<uint32_t>(prev.pipe);
    if (r.vc[pp].t[q] >= prev.stamp) return true;
    if (pp == q && prev.stamp == r.issue[pp]) return true;  // the same instruction (e.g. in place: dst is a source)
    if (g_autoSync && auto_synced(prev.pipe, p)) {
        // the compiler inserted SetFlag<prev_p> / WaitFlag<prev_p> (or PipeBarrier<PIPE_V>) here
        const PipeClock snap = race_snapshot(r, prev.pipe);
        r.vc[pp].join(snap.t);
        return true;
    }
    return false;
}

inline void race_apply(RaceState& r, Pipe p, const RaceAccess& a, const RaceRec& rec, bool& reported) {
    auto& m = r.segs;
    // split so that segment boundaries fall on a.begin and a.end, filling gaps with empty segments
    auto split_at = [&m](uintptr_t x) {
        auto it = m.upper_bound(x);
        if (it == m.begin()) return;
        --it;
        if (it->first < x && it->second.end > x) {
            RaceSeg tail = it->second;
            it->second.end = x;
            m.emplace(x, tail);
        }
    };
    split_at(a.begin);
    split_at(a.end);
    uintptr_t cur = a.begin;
    auto it = m.lower_bound(a.begin);
    while (cur < a.end) {
        if (it == m.end() || it->first > cur) {  // gap: bytes nobody accessed yet
            const uintptr_t gapEnd = (it == m.end() || it->first > a.end) ? a.end : it->first;
            RaceSeg s{};
            s.end = gapEnd;
            it = m.emplace_hint(it, cur, s);
        }
        RaceSeg& s = it->second;
        if (!reported) {
            // a write first checks the readers since the last write (the write-after-read a reused buffer
            // needs an event for), then the last write itself
            if (a.write) {
                for (uint32_t q = 0; q < kPipes && !reported; ++q) {
                    if (s.r[q].stamp && !race_ordered(r, p, s.r[q])) {
                        race_report(p, rec.api, rec.loc, "WAR", s.r[q], it->first, s.end);
                        reported = true;
                    }
                }
            }
            if (!reported && s.w.stamp && !race_ordered(r, p, s.w)) {
                race_report(p, rec.api, rec.loc, a.write ? "WAW" : "RAW", s.w, it->first, s.end);
                reported = true;
            }
        }
        if (a.write) {
            s.w = rec;
            for (RaceRec& x : s.r) x = RaceRec{};
        } else {
            s.r[static_cast<uint32_t>(p)] = rec;
        }
        cur = s.end;
        ++it;
    }
    // merge runs of equal segments inside the range (and with the neighbour before it)
    auto first = m.lower_bound(a.begin);
    if (first != m.begin()) --first;
    while (first != m.end() && first->first < a.end) {
        auto next = std::next(first);
        if (next != m.end() && first->second.end == next->first && first->second.same_state(next->second)) {
            first->second.end = next->second.end;
            m.erase(next);
        } else {
            first = next;
        }
    }
}

// The waits --cce-auto-sync inserts before a scalar access (S <-> V / MTE2 / MTE3 dependencies).
inline void race_scalar_waits(RaceState& r, const RaceAccess& a) {
    auto it = r.segs.upper_bound(a.begin);
    if (it != r.segs.begin()) --it;
    for (; it != r.segs.end() && it->first < a.end; ++it) {
        const RaceSeg& s = it->second;
        if (s.end <= a.begin) continue;
        if (s.w.stamp && s.w.pipe != Pipe::S) (void)race_ordered(r, Pipe::S, s.w);
        if (a.write) {
            for (uint32_t q = 1; q < kPipes; ++q)
                if (s.r[q].stamp) (void)race_ordered(r, Pipe::S, s.r[q]);
        }
    }
}

// A MIX launch that runs the AIC (crossflag.h): the AIC has no UB (nor vector unit), an AIV no L1 / L0 (nor cube unit).
// An access of the wrong core's buffers is CORE-TYPE (a branch that misses `if ASCEND_IS_AIV` / `ASCEND_IS_AIC`).
inline void core_type_check(const State& s, Pipe pipe, const char* api, const std::source_location& loc, const RaceAccess* acc, uint32_t n) {
    const uintptr_t ub = reinterpret_cast<uintptr_t>(s.ub), ca = reinterpret_cast<uintptr_t>(s.cubeArena);
    for (uint32_t i = 0; i < n; ++i) {
        const uintptr_t b = acc[i].begin;
        const bool inUb = s.ub && b >= ub && b < ub + ASCEND_SIM_UB_BYTES;
        const bool inCube = s.cubeArena && b >= ca && b < ca + kCubeArenaBytes;
        if (!(s.isAic ? inUb : inCube)) continue;
        char what[160];
        describe_bytes(what, sizeof what, b, acc[i].end);
        report("CORE-TYPE", loc,
               "%s on %s %s %s: %s (a branch missing `if %s`?)", api, kPipeNames[static_cast<uint32_t>(pipe)],
               acc[i].write ? "writes" : "reads", what,
               s.isAic ? "the AIC of a MIX launch has no UB and no vector unit" : "an AIV has no L1 / L0 buffers and no cube unit",
               s.isAic ? "ASCEND_IS_AIV" : "ASCEND_IS_AIC");
        return;
    }
}

ASCEND_SIM_RT void race_instr_n(Pipe pipe, const char* api, const std::source_location& loc, const RaceAccess* acc, uint32_t n) {
    State& s = st();
    RaceState* r = s.race;
    if (!r) return;
    if (g_launch.aicRuns) core_type_check(s, pipe, api, loc, acc, n);
    // With --cce-auto-sync every scalar access that depends on a V / MTE2 / MTE3 access (the only other
    // pipes touching UB and GM on a vector core) gets a compiler-inserted wait: nothing to report and
    // nothing to record, but the waits order what the scalar unit issues afterwards.
    if (pipe == Pipe::S && g_autoSync) {
        for (uint32_t i = 0; i < n; ++i) race_scalar_waits(*r, acc[i]);
        return;
    }
    const uint32_t pp = static_cast<uint32_t>(pipe);
    // the instruction starts after the scalar unit issued it: it inherits what the scalar unit had waited for
    if (pipe != Pipe::S) {
        const PipeClock& sc = r->vc[0];
        for (uint32_t q = 1; q < kPipes; ++q) r->vc[pp].t[q] = sc.t[q] > r->vc[pp].t[q] ? sc.t[q] : r->vc[pp].t[q];
    }
    const uint32_t stamp = ++r->issue[pp];
    if (pipe == Pipe::S) r->vc[0].t[0] = stamp;  // scalar instructions complete in program order
    const RaceRec rec{stamp, pipe, api, loc};
    if (pipe == Pipe::MTE3 || pipe == Pipe::FIX) {  // their writes go to GM
        for (uint32_t i = 0; i < n; ++i) {
            if (!acc[i].write) continue;
            r->gmWrite[pp] = stamp;
            r->gmWriteApi[pp] = api;
            r->gmWriteLoc[pp] = loc;
        }
    }
    bool reported = false;
    for (uint32_t i = 0; i < n; ++i) {
        if (acc[i].end > acc[i].begin) race_apply(*r, pipe, acc[i], rec, reported);
    }
}

ASCEND_SIM_RT void race_strided(Pipe pipe, const char* api, const std::source_location& loc, const void* p, uint32_t count, uint64_t len,
                                uint64_t pitch, bool write) {
    if (!race_on() || count == 0 || len == 0) return;
    const uintptr_t b = reinterpret_cast<uintptr_t>(p);
    if (count == 1 || pitch == len) {
        const RaceAccess a{b, b + (count - 1) * pitch + len, write};
        race_instr_n(pipe, api, loc, &a, 1);
        return;
    }
    // Every burst on its own (a bounding interval would over-report: two copies of one pipe writing interleaved
    // column blocks of the same rows, as a matmul epilogue does, touch no common byte).
    RaceAccess small[64];
    std::vector<RaceAccess> large(count > 64 ? count : 0);
    RaceAccess* acc = count > 64 ? large.data() : small;
    for (uint32_t i = 0; i < count; ++i) acc[i] = RaceAccess{b + i * pitch, b + i * pitch + len, write};
    race_instr_n(pipe, api, loc, acc, count);
}

ASCEND_SIM_RT void race_sync_write(const void* p, uint64_t bytes) {
    RaceState* r = st().race;
    if (!r || bytes == 0) return;
    const uintptr_t b = reinterpret_cast<uintptr_t>(p), e = b + bytes;
    auto& m = r->segs;
    auto it = m.upper_bound(b);
    if (it != m.begin()) --it;
    while (it != m.end() && it->first < e) {
        RaceSeg& s = it->second;
        if (s.end <= b) {
            ++it;
            continue;
        }
        if (it->first < b) {  // keep the part before the range
            RaceSeg tail = s;
            s.end = b;
            it = m.emplace(b, tail).first;
            continue;
        }
        if (s.end > e) {  // keep the part after the range
            m.emplace(e, s);
        }
        it = m.erase(it);
    }
}

ASCEND_SIM_RT void race_set_flag(HardEvent e, int32_t id) {
    RaceState* r = st().race;
    if (!r || id < 0 || id >= static_cast<int32_t>(kMaxEventIds)) return;
    Pipe src, dst;
    event_pipes(e, src, dst);
    r->flags[static_cast<uint32_t>(e)][id].push_back(race_snapshot(*r, src));
}

ASCEND_SIM_RT void race_wait_flag(HardEvent e, int32_t id) {
    RaceState* r = st().race;
    if (!r || id < 0 || id >= static_cast<int32_t>(kMaxEventIds)) return;
    auto& fifo = r->flags[static_cast<uint32_t>(e)][id];
    if (fifo.empty()) return;  // unpaired: SYNC-UNPAIRED is reported by WaitFlag
    Pipe src, dst;
    event_pipes(e, src, dst);
    r->vc[static_cast<uint32_t>(dst)].join(fifo.front().t);
    fifo.erase(fifo.begin());
}

ASCEND_SIM_RT void race_barrier(pipe_t p) {
    RaceState* r = st().race;
    if (!r) return;
    if (p == PIPE_ALL) {
        for (uint32_t a = 0; a < kPipes; ++a)
            for (uint32_t q = 0; q < kPipes; ++q) r->vc[a].t[q] = r->issue[q];
        return;
    }
    const Pipe pp = pipe_of(p);
    if (pp == Pipe::kCount) return;
    const uint32_t k = static_cast<uint32_t>(pp);
    r->vc[k].t[k] = r->issue[k];
}

ASCEND_SIM_RT void race_que_set(QueEvent& ev, Pipe src) {
    RaceState* r = st().race;
    if (!r) return;
    const PipeClock c = race_snapshot(*r, src);
    std::memcpy(ev.t, c.t, sizeof ev.t);
    ev.valid = true;
}

ASCEND_SIM_RT void race_que_wait(QueEvent& ev, Pipe dst) {
    RaceState* r = st().race;
    if (!r || !ev.valid) return;
    r->vc[static_cast<uint32_t>(dst)].join(ev.t);
}

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_RACE_RT_H
