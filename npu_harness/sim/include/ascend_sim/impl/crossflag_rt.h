// ascend_sim/impl/crossflag_rt.h - runtime of crossflag.h: the flag counters of each core, the scheduler of a MIX
// launch that runs the AIC (blocks switch when one waits; a wait no set can release is CROSS-DEADLOCK), vector clocks
// that turn every set -> wait pair (and SyncAll) into a happens-before edge for the GM-RACE check, and the end-of-launch
// checks (reserved ids, counts left over). Model: ref_next §2.4 / §2.5.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_CROSSFLAG_RT_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_CROSSFLAG_RT_H

namespace AscendC::sim::detail {

inline constexpr uint32_t kCrossFlags = 16;     // flagId 0-15 for modes 0-2 on A2 (ref_next §2.4)
inline constexpr uint32_t kCrossMaxCount = 16;  // "the counter of one flagId is set at most 16 times" (CrossCoreSetFlag page)
inline constexpr uint32_t kCrossModes = 3;

using VClock = std::vector<uint32_t>;

// One core's flags (a block: the AIC or one AIV of an AI Core).
struct CrossState {
    uint32_t counter[kCrossFlags]{};
    std::vector<VClock> pending[kCrossFlags];  // the clock each count carries, oldest first
    uint8_t counterMode[kCrossFlags]{};        // mode of the last increment (the leftover check)
    std::source_location counterLoc[kCrossFlags]{};
    // sets of modes 0 / 1 / 2 (from an AIV) not yet turned into counts: they count once every participant has set
    uint32_t arrivals[kCrossModes][kCrossFlags]{};
    std::vector<VClock> arrClock[kCrossModes][kCrossFlags];
    std::source_location arrLoc[kCrossModes][kCrossFlags]{};
    VClock clock;                 // vector clock over the launch's blocks; clock[self] is this block's epoch (from 1)
    std::vector<VClock> history;  // history[e - 1]: the clock during epoch e
    uint16_t idsUsed = 0;         // flag ids this block set or waited on, and the first site of each
    std::source_location idLoc[kCrossFlags]{};
    int waitId = -1;              // blocked in CrossCoreWaitFlag(waitId)
    std::source_location waitLoc{};
    // the work log for the cost model (impl/crosstime_rt.h): each count carries the (block, event index) pairs of the sets
    // that made it (pendSrc, beside pending); arrivals not yet counted, the index of their set event (arrEv)
    CrossLog log;
    std::vector<std::vector<uint32_t>> pendSrc[kCrossFlags];
    std::vector<uint32_t> arrEv[kCrossModes][kCrossFlags];
};

inline std::vector<char> g_crossNotes;  // (no <string>: it declares ::abs, ::div through <cstdlib>)  // notes of the last launch (counts left over), printed after its errors

inline uint32_t cross_aiv_count() { return g_launch.mixRatio * g_launch.launched; }
inline bool cross_slot_is_aic(uint32_t b) { return b >= cross_aiv_count(); }
inline uint32_t cross_aic_slot(uint32_t core) { return cross_aiv_count() + core; }
inline CrossState& cross_of(uint32_t b) { return *g_launch.blocks[b]->cross; }

inline const char* cross_name(uint32_t b, char* buf, size_t n) {
    if (cross_slot_is_aic(b)) std::snprintf(buf, n, "AIC %u", b - cross_aiv_count());
    else std::snprintf(buf, n, "AIV %u", b);
    return buf;
}

inline void vc_join(VClock& a, const VClock& b) {
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) a[i] = b[i] > a[i] ? b[i] : a[i];
}

inline void cross_new_epoch(State& s) {
    CrossState& c = *s.cross;
    c.clock[s.blockIdx] += 1;
    c.history.push_back(c.clock);
}

ASCEND_SIM_RT uint32_t cross_epoch() {
    State* p = t_cur;
    return p && p->cross ? p->cross->clock[p->blockIdx] : 0;
}

inline void cross_begin_launch(Sched& sc) {
    const uint32_t n = static_cast<uint32_t>(sc.slots.size());
    for (uint32_t b = 0; b < n; ++b) {
        auto* c = new CrossState();
        c->clock.assign(n, 0);
        c->clock[b] = 1;
        c->history.push_back(c->clock);
        sc.slots[b].state.cross = c;
    }
}

inline void cross_free(Sched& sc) {
    for (Slot& sl : sc.slots) {
        delete sl.state.cross;
        sl.state.cross = nullptr;
    }
}

// The kernel-facing checks shared by set and wait; returns the caller's state.
inline State& cross_check(const char* api, uint32_t flagId, const std::source_location& loc) {
    touch(loc);
    State& s = st();
    if (!g_launch.inLaunch || !s.inBlock) fatal("CROSS-FLAG", loc, "%s outside a kernel launch", api);
    if (!g_launch.aicRuns || s.cross == nullptr) {
        fatal("CROSS-FLAG", loc,
              "%s in a%s launch: the cross-core flags need a MIX kernel (KERNEL_TYPE_MIX_AIC_1_2, SetKernelMode(KernelMode::MIX_MODE)); "
              "with AIC_ONLY / AIV_ONLY the hardware scheduler that implements them is off (ref_next §2.4)",
              api, g_launch.aicMode ? "n AIC-only" : "n AIV-only");
    }
    if (flagId >= kCrossFlags) fatal("CROSS-FLAG", loc, "%s(%u): flagId out of range [0, 15] (ref_next §2.4)", api, flagId);
    CrossState& c = *s.cross;
    if (!(c.idsUsed & (1u << flagId))) c.idLoc[flagId] = loc;
    c.idsUsed = static_cast<uint16_t>(c.idsUsed | (1u << flagId));
    return s;
}

inline void cross_add(uint32_t target, uint32_t id, uint32_t mode, const VClock& clk, const std::vector<uint32_t>& src,
                      const std::source_location& loc) {
    CrossState& c = cross_of(target);
    char nm[32];
    if (c.counter[id] >= kCrossMaxCount) {
        report("CROSS-FLAG", loc,
               "CrossCoreSetFlag<%u>(%u): the counter of %s already holds %u sets nobody waited for; a flag's counter can be set at most "
               "%u times (CrossCoreSetFlag page, atlasascendc_api_07_0273)",
               mode, id, cross_name(target, nm, sizeof nm), c.counter[id], kCrossMaxCount);
    }
    c.counter[id] += 1;
    c.pending[id].push_back(clk);
    c.pendSrc[id].push_back(src);
    c.counterMode[id] = static_cast<uint8_t>(mode);
    c.counterLoc[id] = loc;
}

// A set of mode 0, 1 or 2 (from an AIV) by block `self` to the participants `group`: it counts once every participant has
// set; then each target's counter gets one count carrying the join of the participants' clocks.
inline void cross_arrive(uint32_t self, uint32_t mode, uint32_t id, const VClock& snap, uint32_t ev, const std::vector<uint32_t>& group,
                         const std::vector<uint32_t>& targets, const std::source_location& loc) {
    CrossState& me = cross_of(self);
    me.arrivals[mode][id] += 1;
    me.arrClock[mode][id].push_back(snap);
    me.arrEv[mode][id].push_back(ev);
    me.arrLoc[mode][id] = loc;
    for (uint32_t g : group)
        if (cross_of(g).arrivals[mode][id] == 0) return;
    VClock joined(snap.size(), 0);
    std::vector<uint32_t> src;
    for (uint32_t g : group) {
        CrossState& c = cross_of(g);
        vc_join(joined, c.arrClock[mode][id].front());
        c.arrClock[mode][id].erase(c.arrClock[mode][id].begin());
        src.push_back(g);
        src.push_back(c.arrEv[mode][id].front());
        c.arrEv[mode][id].erase(c.arrEv[mode][id].begin());
        c.arrivals[mode][id] -= 1;
    }
    for (uint32_t t : targets) cross_add(t, id, mode, joined, src, loc);
}

// "Set is issued after the preceding work of `pipe` on this core completes" (ref_next §2.4): a GM write of MTE3 / FIX
// that nothing orders before `pipe` (the same pipe, a SetFlag / WaitFlag, PipeBarrier or what the scalar unit waited
// for) may still be in flight when the other core is released: CROSS-FLAG-PIPE (pipe-race model on only).
inline void cross_set_pipe_check(State& s, uint32_t mode, pipe_t pipe, uint32_t flagId, const std::source_location& loc) {
    RaceState* r = s.race;
    if (!r) return;
    const Pipe p = pipe_of(pipe);
    const uint32_t pp = static_cast<uint32_t>(p);
    for (Pipe q : {Pipe::MTE3, Pipe::FIX}) {
        const uint32_t qq = static_cast<uint32_t>(q);
        if (r->gmWrite[qq] <= r->gmCovered[qq]) continue;
        const uint32_t seen = r->vc[pp].t[qq] > r->vc[0].t[qq] ? r->vc[pp].t[qq] : r->vc[0].t[qq];
        if (q == p || seen >= r->gmWrite[qq]) {
            r->gmCovered[qq] = r->gmWrite[qq];
            continue;
        }
        report("CROSS-FLAG-PIPE", loc,
               "CrossCoreSetFlag<%u, %s>(%u) fires once the earlier work of %s is done, but the GM write of %s on %s at %s:%u is not "
               "ordered before it: the other core may read the data before it lands (set it on %s, or order %s before %s with "
               "SetFlag / WaitFlag or PipeBarrier; ref_next §2.2: the set pipe is the pipe that produced the data)",
               mode, kPipeNames[pp], flagId, kPipeNames[pp], r->gmWriteApi[qq], kPipeNames[qq], base_name(r->gmWriteLoc[qq].file_name()),
               r->gmWriteLoc[qq].line(), kPipeNames[qq], kPipeShort[qq], kPipeShort[pp]);
        r->gmCovered[qq] = r->gmWrite[qq];
    }
}

ASCEND_SIM_RT void cross_set(uint32_t mode, pipe_t pipe, uint32_t flagId, const std::source_location& loc) {
    if (mode > 2) {
        touch(loc);
        fatal("CROSS-FLAG", loc, "CrossCoreSetFlag<%u, ...>(%u): A2 has the modes 0, 1 and 2 (mode 4 exists only on Ascend 950; ref_next §2.4)",
              mode, flagId);
    }
    if (pipe == PIPE_S || pipe == PIPE_ALL) {
        touch(loc);
        fatal("CROSS-FLAG", loc, "CrossCoreSetFlag<%u, %s>(%u): the pipe may be V, M, MTE1, MTE2, MTE3 or FIX, not PIPE_S or PIPE_ALL (ref_next §2.4)",
              mode, pipe == PIPE_S ? "PIPE_S" : "PIPE_ALL", flagId);
    }
    State& s = cross_check("CrossCoreSetFlag", flagId, loc);
    if (mode == 1 && s.isAic) {
        fatal("CROSS-FLAG", loc, "CrossCoreSetFlag<1, ...>(%u) on the AIC: mode 1 synchronises the two AIV of an AI Core (ref_next §2.4)", flagId);
    }
    s.cnt.crossSets += 1;
    cross_set_pipe_check(s, mode, pipe, flagId, loc);
    CrossState& c = *s.cross;
    const VClock snap = c.clock;
    cross_new_epoch(s);
    const uint32_t lp = static_cast<uint32_t>(pipe_of(pipe));  // the set's pipe for the cost model (none for MTE4 / MTE5 / V2)
    const uint32_t ev = cross_log_event(c.log, s.cnt, "set", flagId, nullptr, lp < kPipes ? kPipeShort[lp] : nullptr);
    const uint32_t self = s.blockIdx, ratio = g_launch.mixRatio, core = s.coreIdx;
    std::vector<uint32_t> aivs;
    for (uint32_t k = 0; k < ratio; ++k) aivs.push_back(core * ratio + k);
    if (mode == 2) {
        if (s.isAic) {
            for (uint32_t v : aivs) cross_add(v, flagId, 2, snap, {self, ev}, loc);
        } else {
            cross_arrive(self, 2, flagId, snap, ev, aivs, {cross_aic_slot(core)}, loc);
        }
    } else if (mode == 1) {
        cross_arrive(self, 1, flagId, snap, ev, aivs, aivs, loc);
    } else {  // mode 0: every core of the caller's type in the launch
        std::vector<uint32_t> all;
        const uint32_t n = static_cast<uint32_t>(g_launch.blocks.size());
        for (uint32_t b = 0; b < n; ++b)
            if (cross_slot_is_aic(b) == s.isAic) all.push_back(b);
        cross_arrive(self, 0, flagId, snap, ev, all, all, loc);
    }
}

ASCEND_SIM_RT void cross_wait(uint32_t flagId, const std::source_location& loc) {
    State& s = cross_check("CrossCoreWaitFlag", flagId, loc);
    s.cnt.crossWaits += 1;
    CrossState& c = *s.cross;
    Sched& sc = *g_sched;
    Slot& sl = sc.slots[s.blockIdx];
    while (c.counter[flagId] == 0) {  // blocked: let the other blocks run (the scheduler resumes this one once a set arrives)
        c.waitId = static_cast<int>(flagId);
        c.waitLoc = loc;
        sl.st = BlkSt::AtFlag;
        swapcontext(&sl.ctx, t_main);
        touch(loc);
        if (sc.abort) {
            c.waitId = -1;
            throw Fault{};
        }
    }
    c.waitId = -1;
    c.counter[flagId] -= 1;
    vc_join(c.clock, c.pending[flagId].front());
    c.pending[flagId].erase(c.pending[flagId].begin());
    cross_new_epoch(s);
    cross_log_event(c.log, s.cnt, "wait", flagId, &c.pendSrc[flagId].front());
    c.pendSrc[flagId].erase(c.pendSrc[flagId].begin());
}

// ---- scheduling --------------------------------------------------------------------------------------------------------

inline bool cross_ready(const Sched& sc, uint32_t b) {
    const Slot& sl = sc.slots[b];
    if (sl.st != BlkSt::AtFlag) return false;
    const CrossState& c = *sl.state.cross;
    return c.waitId >= 0 && c.counter[c.waitId] > 0;
}

// Why block b's wait can never return: what each other block of its AI Core is doing.
inline void cross_deadlock_report(const Sched& sc, uint32_t b) {
    const CrossState& c = *sc.slots[b].state.cross;
    const uint32_t id = static_cast<uint32_t>(c.waitId);
    char others[512];
    size_t len = 0;
    others[0] = 0;
    const uint32_t n = static_cast<uint32_t>(sc.slots.size());
    for (uint32_t o = 0; o < n && len + 96 < sizeof others; ++o) {
        if (o == b || sc.slots[o].state.coreIdx != sc.slots[b].state.coreIdx) continue;
        const Slot& so = sc.slots[o];
        char nm[32];
        cross_name(o, nm, sizeof nm);
        int w = 0;
        if (so.st == BlkSt::AtFlag) {
            w = std::snprintf(others + len, sizeof others - len, "; %s waits on flag %d at %s:%u", nm, so.state.cross->waitId,
                              base_name(so.state.cross->waitLoc.file_name()), so.state.cross->waitLoc.line());
        } else if (so.st == BlkSt::AtBarrier) {
            w = std::snprintf(others + len, sizeof others - len, "; %s waits in SyncAll at %s:%u", nm, base_name(so.barrierLoc.file_name()),
                              so.barrierLoc.line());
        } else {
            w = std::snprintf(others + len, sizeof others - len, "; %s %s", nm, so.st == BlkSt::Faulted ? "stopped at a fault" : "ended");
        }
        if (w > 0) len += static_cast<size_t>(w);
    }
    char nm[32];
    cross_name(b, nm, sizeof nm);
    report_for(b, "CROSS-DEADLOCK", c.waitLoc,
               "CrossCoreWaitFlag(%u) on %s can never return: its counter is 0 and no core of the launch can set it any more (a missing "
               "CrossCoreSetFlag, or a mode-2 set from only one AIV: the AIC counts once both AIV have set)%s",
               id, nm, others);
}

// Barrier of the waiting blocks: SyncAll<true> among the AIV, SyncAll<false> (or one called on an AIC) among all blocks.
inline bool cross_barrier_complete(const Sched& sc, std::vector<uint32_t>& parts) {
    const uint32_t n = static_cast<uint32_t>(sc.slots.size());
    bool any = false, all = false;
    for (uint32_t b = 0; b < n; ++b) {
        if (sc.slots[b].st != BlkSt::AtBarrier) continue;
        any = true;
        all = all || !sc.slots[b].barrierAivOnly || cross_slot_is_aic(b);
    }
    if (!any) return false;
    parts.clear();
    for (uint32_t b = 0; b < n; ++b) {
        if (!all && cross_slot_is_aic(b)) continue;
        if (sc.slots[b].st != BlkSt::AtBarrier) return false;
        parts.push_back(b);
    }
    return true;
}

inline void gm_check_hb(Sched& sc);

// One run of a MIX launch that runs the AIC: blocks one at a time on this thread; a block that waits on a flag or in
// SyncAll gives way; a waiter is resumed once its counter is non-zero, a barrier once all its participants arrived. When
// nothing can move, the blocked waiters are reported (CROSS-DEADLOCK, HANG) and unwound.
inline void run_all_cross(Sched& sc, bool reverse) {
    const uint32_t n = static_cast<uint32_t>(sc.slots.size());
    sc.order.clear();
    for (uint32_t k = 0; k < n; ++k) sc.order.push_back(reverse ? n - 1 - k : k);
    sc.phaseNo = 1;
    run_phase(sc, false);
    std::vector<uint32_t> parts;
    for (;;) {
        bool progress = false;
        for (uint32_t k = 0; k < n; ++k) {
            const uint32_t b = reverse ? n - 1 - k : k;
            if (!cross_ready(sc, b)) continue;
            sc.order.assign(1, b);
            run_phase(sc, true);
            progress = true;
        }
        if (progress) continue;
        if (cross_barrier_complete(sc, parts)) {
            VClock joined(n, 0);
            for (uint32_t b : parts) vc_join(joined, sc.slots[b].state.cross->clock);
            for (uint32_t b : parts) {
                sc.slots[b].state.cross->clock = joined;
                cross_new_epoch(sc.slots[b].state);
            }
            sc.order = parts;
            ++sc.phaseNo;
            for (uint32_t b : parts) cross_log_event(sc.slots[b].state.cross->log, sc.slots[b].state.cnt, "sync", sc.phaseNo, nullptr);
            run_phase(sc, true);
            continue;
        }
        std::vector<uint32_t> stuck;
        uint32_t firstBarrier = n, atBarrier = 0;
        for (uint32_t b = 0; b < n; ++b) {
            const BlkSt st = sc.slots[b].st;
            if (st == BlkSt::AtFlag) {
                cross_deadlock_report(sc, b);
                stuck.push_back(b);
            } else if (st == BlkSt::AtBarrier) {
                if (firstBarrier == n) firstBarrier = b;
                ++atBarrier;
                stuck.push_back(b);
            }
        }
        if (stuck.empty()) break;
        if (firstBarrier < n) {
            report_for(firstBarrier, "HANG", sc.slots[firstBarrier].barrierLoc,
                       "SyncAll: %u blocks wait here, but the others ended or wait elsewhere (on a cross-core flag) without reaching this "
                       "SyncAll: on hardware the kernel never finishes", atBarrier);
        }
        sc.abort = true;
        sc.order = stuck;
        ++sc.phaseNo;
        run_phase(sc, true);
        break;
    }
    gm_check_hb(sc);
}

// ---- GM-RACE by happens-before ------------------------------------------------------------------------------------------

// Access (block x, epoch ex) happens before (block y, epoch ey), or the other way round, through set -> wait pairs and
// SyncAll: y's clock in epoch ey has seen x's epoch ex (a set x issued after the access), or the symmetric.
inline bool hb_ordered(const Sched& sc, uint32_t x, uint32_t ex, uint32_t y, uint32_t ey) {
    if (ex == 0 || ey == 0) return false;
    const CrossState& cx = *sc.slots[x].state.cross;
    const CrossState& cy = *sc.slots[y].state.cross;
    return cy.history[ey - 1][x] >= ex || cx.history[ex - 1][y] >= ey;
}

inline void gm_check_hb(Sched& sc) {
    struct Acc {
        GmSpan s;
        uint32_t block;
        bool atomic;
    };
    std::vector<Acc> w, r;
    for (uint32_t b = 0; b < sc.slots.size(); ++b) {
        State& s = sc.slots[b].state;
        for (const GmSpan& x : s.gmWrites) w.push_back(Acc{x, b, false});
        for (const GmSpan& x : s.gmAtomics) w.push_back(Acc{x, b, true});
        for (const GmSpan& x : s.gmReads) r.push_back(Acc{x, b, false});
        s.gmWrites.clear();
        s.gmAtomics.clear();
        s.gmReads.clear();
    }
    if (w.empty()) return;
    // insertion by begin (stable; the lists are short in the kernels this mode runs)
    std::vector<Acc> sorted;
    sorted.reserve(w.size());
    for (const Acc& a : w) {
        size_t lo = 0, hi = sorted.size();
        while (lo < hi) {
            const size_t mid = (lo + hi) / 2;
            if (sorted[mid].s.begin <= a.s.begin) lo = mid + 1;
            else hi = mid;
        }
        sorted.insert(sorted.begin() + static_cast<std::ptrdiff_t>(lo), a);
    }
    w.swap(sorted);
    char n1[32], n2[32];
    for (size_t i = 0; i < w.size(); ++i) {
        for (size_t j = i + 1; j < w.size() && w[j].s.begin < w[i].s.end; ++j) {
            const Acc& p = w[i];
            const Acc& q = w[j];
            if (p.block == q.block || (p.atomic && q.atomic)) continue;
            if (hb_ordered(sc, p.block, p.s.epoch, q.block, q.s.epoch)) continue;
            const Acc& later = q.block > p.block ? q : p;
            const Acc& earlier = q.block > p.block ? p : q;
            const uintptr_t hi = p.s.end < q.s.end ? p.s.end : q.s.end;
            report_for(later.block, "GM-RACE", later.s.loc,
                       "%s: %s writes %llu GM bytes that %s also writes (%s at %s:%u) and no CrossCoreSetFlag -> CrossCoreWaitFlag chain or "
                       "SyncAll orders the two: the result depends on core timing",
                       later.s.api, cross_name(later.block, n1, sizeof n1), static_cast<unsigned long long>(hi - q.s.begin),
                       cross_name(earlier.block, n2, sizeof n2), earlier.s.api, base_name(earlier.s.loc.file_name()), earlier.s.loc.line());
        }
    }
    for (const Acc& x : r) {
        for (const Acc& y : w) {
            if (y.s.begin >= x.s.end) break;
            if (y.s.end <= x.s.begin || y.block == x.block) continue;
            if (hb_ordered(sc, x.block, x.s.epoch, y.block, y.s.epoch)) continue;
            const uintptr_t b0 = x.s.begin > y.s.begin ? x.s.begin : y.s.begin;
            const uintptr_t b1 = x.s.end < y.s.end ? x.s.end : y.s.end;
            report_for(x.block, "GM-RACE", x.s.loc,
                       "%s: %s reads %llu GM bytes that %s writes (%s at %s:%u) and no CrossCoreSetFlag -> CrossCoreWaitFlag chain or SyncAll "
                       "orders the two: the value read depends on core timing (a GM slot reused before its reader is done?)",
                       x.s.api, cross_name(x.block, n1, sizeof n1), static_cast<unsigned long long>(b1 - b0),
                       cross_name(y.block, n2, sizeof n2), y.s.api, base_name(y.s.loc.file_name()), y.s.loc.line());
            break;
        }
    }
}

// ---- end of the launch -----------------------------------------------------------------------------------------------------

// Reserved ids (ref_next §2.4): the Matmul API's [0, 2N-1] for the N objects registered on the AI Core, SyncAll's 11-14 in
// a launch that calls SyncAll. Counts left over: mode 0 must pair set and wait on every core (error); for modes 1 / 2 no
// documented rule requires the counters to be empty at the end, so they are a note.
inline void cross_end_launch(Sched& sc) {
    g_crossNotes.clear();
    const uint32_t n = static_cast<uint32_t>(sc.slots.size());
    bool syncAll = false;
    for (const Slot& sl : sc.slots) syncAll = syncAll || sl.state.cnt.syncAll > 0;
    for (uint32_t b = 0; b < n; ++b) {
        const State& s = sc.slots[b].state;
        const CrossState& c = *s.cross;
        uint32_t objs = 0;
        for (const Slot& o : sc.slots)
            if (o.state.coreIdx == s.coreIdx && o.state.matmulObjs > objs) objs = o.state.matmulObjs;
        for (uint32_t id = 0; id < kCrossFlags; ++id) {
            if (!(c.idsUsed & (1u << id))) continue;
            if (id < 2 * objs) {
                report_for(b, "CROSS-FLAG-RESERVED", c.idLoc[id],
                           "cross-core flag %u is one the Matmul API uses: with %u Matmul object(s) on this AI Core it reserves flag ids "
                           "[0, %u] (ref_next §2.4 \"Reserved IDs\"); the counts would mix",
                           id, objs, 2 * objs - 1);
            } else if (id >= 11 && id <= 14 && syncAll) {
                report_for(b, "CROSS-FLAG-RESERVED", c.idLoc[id],
                           "cross-core flag %u is one the hardware SyncAll uses (11-14, ref_next §2.4 \"Reserved IDs\") and this launch calls "
                           "SyncAll: the counts would mix", id);
            }
        }
    }
    if (!sc.abort) {
        char nm[32], line[400];
        for (uint32_t b = 0; b < n; ++b) {
            const CrossState& c = *sc.slots[b].state.cross;
            for (uint32_t id = 0; id < kCrossFlags; ++id) {
                if (c.counter[id] && c.counterMode[id] == 0) {
                    report_for(b, "CROSS-FLAG-UNPAIRED", c.counterLoc[id],
                               "mode-0 flag %u: %u count(s) on %s were never waited for (mode 0 pairs a set and a wait on every core, "
                               "ref_next §2.4)", id, c.counter[id], cross_name(b, nm, sizeof nm));
                } else if (c.counter[id]) {
                    std::snprintf(line, sizeof line,
                                  "note: cross-core flag %u ends with %u count(s) on %s never waited for (last set at %s:%u); no documented rule "
                                  "objects to this for mode %u\n",
                                  id, c.counter[id], cross_name(b, nm, sizeof nm), base_name(c.counterLoc[id].file_name()),
                                  c.counterLoc[id].line(), c.counterMode[id]);
                    g_crossNotes.insert(g_crossNotes.end(), line, line + std::strlen(line));
                }
                for (uint32_t m = 0; m < kCrossModes; ++m) {
                    if (!c.arrivals[m][id]) continue;
                    if (m == 0) {
                        report_for(b, "CROSS-FLAG-UNPAIRED", c.arrLoc[m][id],
                                   "mode-0 flag %u: %s set it %u time(s) more than some other core of its type: the count never reaches "
                                   "anyone (mode 0 counts once every AIC, or every AIV, of the launch has set)",
                                   id, cross_name(b, nm, sizeof nm), c.arrivals[m][id]);
                    } else {
                        std::snprintf(line, sizeof line,
                                      "note: cross-core flag %u: %u mode-%u set(s) by %s at %s:%u never counted (the other AIV of its AI Core "
                                      "did not set it as often)\n",
                                      id, c.arrivals[m][id], m, cross_name(b, nm, sizeof nm), base_name(c.arrLoc[m][id].file_name()),
                                      c.arrLoc[m][id].line());
                        g_crossNotes.insert(g_crossNotes.end(), line, line + std::strlen(line));
                    }
                }
            }
        }
    }
}

// The block's work log on the counters line (impl/crosstime_rt.h; nothing for blocks without flag events).
inline void cross_print_events(FILE* f, const State& s) {
    if (s.cross) cross_log_print(f, s.cross->log, s.cnt);
}

inline void cross_print_notes() {
    if (!g_crossNotes.empty()) std::fwrite(g_crossNotes.data(), 1, g_crossNotes.size(), stderr);
    g_crossNotes.clear();
}

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_CROSSFLAG_RT_H
