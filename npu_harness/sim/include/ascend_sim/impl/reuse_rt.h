// ascend_sim/impl/reuse_rt.h - runtime definitions of the MTE2 re-read counters (core.h ReuseCounters): how far back
// (in the block's own GM traffic) each GM byte a block reads again was last read by it. The cost model credits a
// re-read at L2 speed when that distance, counted over all cores at once, fits the target's L2 (docs/cost_model.md).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_REUSE_RT_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_REUSE_RT_H

namespace AscendC::sim::detail {

// The bucket of a reuse distance: the smallest k with d <= 2^k.
inline uint32_t reuse_bucket(uint64_t d) {
    uint32_t k = 0;
    while (k + 1 < kReuseBuckets && d > (uint64_t(1) << k)) ++k;
    return k;
}

// One burst [a, e) read at clock `now`: the parts of it this block read before count as re-reads at their distance,
// then the whole burst becomes one span read at `now`.
inline void reuse_span(ReuseCounters& r, uintptr_t a, uintptr_t e, uint64_t now) {
    auto it = r.spans.upper_bound(a);
    if (it != r.spans.begin() && std::prev(it)->second.first > a) --it;
    uintptr_t fresh = a;  // the bytes below `fresh` are accounted for: re-read, or logged as first reads
    auto first = [&](uintptr_t upto) {
        if (upto > fresh && r.first.size() < kReuseMaxSpans) r.first.push_back({fresh, upto, now});
    };
    while (it != r.spans.end() && it->first < e) {
        const uintptr_t b0 = it->first, b1 = it->second.first;
        const uint64_t at = it->second.second;
        first(b0);
        fresh = b1 < e ? b1 : e;
        r.bytes[reuse_bucket(now - at)] += (b1 < e ? b1 : e) - (b0 > a ? b0 : a);
        it = r.spans.erase(it);
        if (b0 < a) r.spans.emplace(b0, std::make_pair(a, at));  // the part before the burst keeps its clock
        if (b1 > e) r.spans.emplace(e, std::make_pair(b1, at));  // ... and the part after it (the loop ends here)
    }
    first(e);
    if (r.spans.size() >= kReuseMaxSpans) r.spans.clear();  // bounded memory: forgetting only withholds credit
    r.spans.emplace(a, std::make_pair(e, now));
}

// A GM -> UB DMA of `count` bursts of `blockBytes` (`pitch` apart) from `gm`, before it is counted in gm2ub. Reads of
// the launch's workspace are L2 traffic already (wsGm2ub) and are not tracked.
ASCEND_SIM_RT void count_reuse(const uint8_t* gm, uint32_t count, uint64_t blockBytes, uint64_t pitch) {
    if (count == 0 || blockBytes == 0 || gm_in_workspace(gm)) return;
    Counters& c = cnt();
    const uint64_t now = c.gm2ub.bytes + c.ub2gm.bytes + c.gm2l1 + c.l0c2gm;  // the block's GM traffic so far
    const uintptr_t base = reinterpret_cast<uintptr_t>(gm);
    for (uint32_t i = 0; i < count; ++i) reuse_span(c.reuse, base + i * pitch, base + i * pitch + blockBytes, now);
}

// End of a launch: a block's first read of bytes that other blocks read first as well is a re-read of the launch,
// at the distance from the previous block's read of them (the difference of the two blocks' clocks; with every core
// moving bytes at the same pace, the L2 sees the active cores times that in between). Counted for the later block.
ASCEND_SIM_RT void reuse_shared(const std::vector<ReuseCounters*>& blocks) {
    struct Edge {
        bool open;
        uint64_t clock;
        uint32_t block;
    };
    std::map<uintptr_t, std::vector<Edge>> edges;  // address -> the first reads starting or ending there
    for (uint32_t b = 0; b < blocks.size(); ++b) {
        for (const ReuseSpan& s : blocks[b]->first) {
            edges[s.begin].push_back({true, s.clock, b});
            edges[s.end].push_back({false, s.clock, b});
        }
    }
    std::map<std::pair<uint64_t, uint32_t>, uint32_t> open;  // (clock, block) of the first reads covering the point
    for (auto it = edges.begin(); it != edges.end(); ++it) {
        for (const Edge& e : it->second) {
            uint32_t& n = open[{e.clock, e.block}];
            n += e.open ? 1 : uint32_t(-1);
        }
        for (auto o = open.begin(); o != open.end();) o = o->second ? std::next(o) : open.erase(o);
        const auto next = std::next(it);
        if (open.size() < 2 || next == edges.end()) continue;
        const uint64_t len = next->first - it->first;  // [here, the next edge): read first by every block in `open`
        for (auto prev = open.begin(), cur = std::next(prev); cur != open.end(); prev = cur++) {
            blocks[cur->first.second]->bytes[reuse_bucket(cur->first.first - prev->first.first)] += len;
        }
    }
}

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_REUSE_RT_H
