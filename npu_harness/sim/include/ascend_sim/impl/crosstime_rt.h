// ascend_sim/impl/crosstime_rt.h - the work log of a MIX launch that runs the AIC (crossflag.h): for the cost model's
// dependency-aware time of such launches (docs/cost_model.md "AIC-driven MIX kernels"). Each block records, at every
// CrossCoreSetFlag, CrossCoreWaitFlag (once it returns) and SyncAll barrier, the work it did since its previous event (the
// counters that time its pipes: DMA bytes and instructions, vector instructions and repeats, scalar accesses, cube MACs,
// GM->L1 bytes, MTE1 cycles, L1 stages, L0C->GM bytes and instructions), for a set its pipe, and for a wait the set events
// that released it (block, event index); the work after its last event is the tail. Printed per block as "cross_events" /
// "cross_tail" on the counters line.
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_CROSSTIME_RT_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_CROSSTIME_RT_H

namespace AscendC::sim::detail {

// The counters of a block that time its pipes, at one moment.
struct CrossWork {
    uint64_t dma[3][2]{};  // gm2ub, ub2gm, ub2ub: bytes, instructions
    uint64_t fix[2]{};     // l0c2gm: bytes, instructions (the FIX pipe)
    uint64_t vecI[kVecOps][kSizeClasses]{};
    uint64_t vecR[kVecOps][kSizeClasses]{};
    uint64_t ubAcc = 0, gmAcc = 0, macs = 0, macsF32 = 0, gm2l1 = 0, mte1 = 0, l1Stages = 0;
};

struct CrossLog {
    CrossWork last;           // the counters at the previous event
    uint32_t events = 0;      // events recorded so far (the index of the next one)
    std::vector<char> text;   // the events, JSON objects separated by commas
};

inline void cross_work_of(const Counters& c, CrossWork& w) {
    const DmaCounters* d[3] = {&c.gm2ub, &c.ub2gm, &c.ub2ub};
    for (uint32_t k = 0; k < 3; ++k) {
        w.dma[k][0] = d[k]->bytes;
        w.dma[k][1] = d[k]->transfers;
    }
    w.fix[0] = c.l0c2gm;
    w.fix[1] = c.l0c2gmN;
    std::memcpy(w.vecI, c.vecInstr, sizeof w.vecI);
    std::memcpy(w.vecR, c.vecRepeats, sizeof w.vecR);
    w.ubAcc = c.ubGet + c.ubSet;
    w.gmAcc = c.gmGet + c.gmSet;
    w.macs = c.cubeMacs;
    w.macsF32 = c.cubeMacsF32;
    w.gm2l1 = c.gm2l1;
    w.mte1 = c.mte1Cycles;
    w.l1Stages = c.flagSets[static_cast<uint32_t>(HardEvent::MTE2_MTE1)];
}

__attribute__((format(printf, 2, 3))) inline void cross_log_put(std::vector<char>& out, const char* fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0) out.insert(out.end(), buf, buf + (n < int(sizeof buf) ? n : int(sizeof buf) - 1));
}

// {"gm2ub": [bytes, instructions], ..., "vec": {"Op.bNN": [instructions, repeats]}, ...}: the work from `a` to `b`, non-zero
// entries only (the cost model's keys).
inline void cross_work_json(std::vector<char>& out, const CrossWork& a, const CrossWork& b) {
    static const char* const kDma[3] = {"gm2ub", "ub2gm", "ub2ub"};
    static const char* const kSz[kSizeClasses] = {"b8", "b16", "b32", "b64"};
    out.push_back('{');
    bool first = true;
    const auto sep = [&] {
        if (!first) out.push_back(',');
        first = false;
    };
    for (uint32_t k = 0; k < 3; ++k) {
        const uint64_t bytes = b.dma[k][0] - a.dma[k][0], n = b.dma[k][1] - a.dma[k][1];
        if (!bytes && !n) continue;
        sep();
        cross_log_put(out, "\"%s\":[%llu,%llu]", kDma[k], (unsigned long long)bytes, (unsigned long long)n);
    }
    if (const uint64_t bytes = b.fix[0] - a.fix[0], n = b.fix[1] - a.fix[1]; bytes || n) {
        sep();
        cross_log_put(out, "\"l0c2gm\":[%llu,%llu]", (unsigned long long)bytes, (unsigned long long)n);
    }
    bool anyVec = false;
    for (uint32_t op = 0; op < kVecOps; ++op) {
        for (uint32_t s = 0; s < kSizeClasses; ++s) {
            const uint64_t i = b.vecI[op][s] - a.vecI[op][s], r = b.vecR[op][s] - a.vecR[op][s];
            if (!i) continue;
            if (!anyVec) {
                sep();
                cross_log_put(out, "\"vec\":{");
            }
            cross_log_put(out, "%s\"%s.%s\":[%llu,%llu]", anyVec ? "," : "", kVecOpNames[op], kSz[s], (unsigned long long)i,
                          (unsigned long long)r);
            anyVec = true;
        }
    }
    if (anyVec) out.push_back('}');
    const struct {
        const char* key;
        uint64_t d;
    } scalars[] = {{"ub_acc", b.ubAcc - a.ubAcc},     {"gm_acc", b.gmAcc - a.gmAcc}, {"cube_macs", b.macs - a.macs},
                   {"cube_macs_f32", b.macsF32 - a.macsF32}, {"gm2l1", b.gm2l1 - a.gm2l1}, {"mte1_cycles", b.mte1 - a.mte1},
                   {"l1_stages", b.l1Stages - a.l1Stages}};
    for (const auto& x : scalars) {
        if (!x.d) continue;
        sep();
        cross_log_put(out, "\"%s\":%llu", x.key, (unsigned long long)x.d);
    }
    out.push_back('}');
}

// Records an event of the block owning `log` (counters `c`): kind "set" / "wait" / "sync"; `id` the flag (the barrier's
// number for "sync"); `after` for a wait: the (block, event index) pairs of the sets that released it; `pipe` for a set: the
// pipe whose earlier work it follows ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"; the cost model's set time). Returns its
// index.
inline uint32_t cross_log_event(CrossLog& log, const Counters& c, const char* kind, uint32_t id, const std::vector<uint32_t>* after,
                                const char* pipe = nullptr) {
    CrossWork now;
    cross_work_of(c, now);
    if (log.events) log.text.push_back(',');
    cross_log_put(log.text, "{\"ev\":\"%s\",\"%s\":%u", kind, std::strcmp(kind, "sync") ? "flag" : "group", id);
    if (pipe) cross_log_put(log.text, ",\"pipe\":\"%s\"", pipe);
    if (after) {
        cross_log_put(log.text, ",\"after\":[");
        for (size_t k = 0; k + 1 < after->size(); k += 2)
            cross_log_put(log.text, "%s[%u,%u]", k ? "," : "", (*after)[k], (*after)[k + 1]);
        log.text.push_back(']');
    }
    cross_log_put(log.text, ",\"work\":");
    cross_work_json(log.text, log.last, now);
    log.text.push_back('}');
    log.last = now;
    return log.events++;
}

// ,"cross_events":[...],"cross_tail":{...} for a block that recorded events.
inline void cross_log_print(FILE* f, const CrossLog& log, const Counters& c) {
    if (!log.events) return;
    CrossWork now;
    cross_work_of(c, now);
    std::vector<char> tail;
    cross_work_json(tail, log.last, now);
    std::fprintf(f, ",\"cross_events\":[");
    std::fwrite(log.text.data(), 1, log.text.size(), f);
    std::fprintf(f, "],\"cross_tail\":");
    std::fwrite(tail.data(), 1, tail.size(), f);
}

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_CROSSTIME_RT_H
