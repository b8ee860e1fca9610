// ascend_sim/impl/reuse_rt.h - runtime definitions of the MTE2 re-read counters (core.h ReuseCounters): how far back
// (in GM traffic) each GM byte a block reads was read before, by it or another block. The cost model credits a
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

// A GM -> UB DMA of `count` bursts of `blockBytes` (`pitch` apart) from `gm`, before it is counted in gm2ub: logged
// with the block's GM traffic clock. Reads of the launch's workspace are L2 traffic already (wsGm2ub): not logged.
ASCEND_SIM_RT void count_reuse(const uint8_t* gm, uint32_t count, uint64_t blockBytes, uint64_t pitch) {
    if (count == 0 || blockBytes == 0 || gm_in_workspace(gm)) return;
    Counters& c = cnt();
    const uint64_t now = c.gm2ub.bytes + c.ub2gm.bytes + c.gm2l1 + c.l0c2gm;  // the block's GM traffic so far
    const uintptr_t base = reinterpret_cast<uintptr_t>(gm);
    auto& reads = c.reuse.reads;
    for (uint32_t i = 0; i < count; ++i) {
        const uintptr_t a = base + i * pitch, e = a + blockBytes;
        if (!reads.empty() && reads.back().end == a && reads.back().clock == now) {
            reads.back().end = e;  // the next burst of one DMA, right after the last: one span
        } else if (reads.size() < kReuseMaxSpans) {
            reads.push_back({a, e, now});
        }
    }
}

// An edge of a logged read for the sweep below, and an in-place heap sort by address (<algorithm> is not included:
// core.h keeps the C library's names out of the global namespace).
struct ReuseEdge {
    uintptr_t at;
    uint64_t clock;
    uint32_t block;
    bool open;
};

inline void reuse_sift(std::vector<ReuseEdge>& v, size_t i, size_t n) {
    for (;;) {
        size_t big = i;
        const size_t l = 2 * i + 1, r = l + 1;
        if (l < n && v[l].at > v[big].at) big = l;
        if (r < n && v[r].at > v[big].at) big = r;
        if (big == i) return;
        const ReuseEdge t = v[i];
        v[i] = v[big];
        v[big] = t;
        i = big;
    }
}

inline void reuse_sort(std::vector<ReuseEdge>& v) {
    const size_t n = v.size();
    for (size_t i = n / 2; i-- > 0;) reuse_sift(v, i, n);
    for (size_t end = n; end-- > 1;) {
        const ReuseEdge t = v[0];
        v[0] = v[end];
        v[end] = t;
        reuse_sift(v, 0, end);
    }
}

inline constexpr uint64_t kReuseMaxWork = uint64_t(1) << 26;

// End of a launch: sweep the blocks' reads in address order; on each stretch of bytes, the reads covering it in clock
// order (ties by block): every read but the earliest is a re-read, at the distance from the one before it, counted
// for its own block.
ASCEND_SIM_RT void reuse_count_launch(const std::vector<ReuseCounters*>& blocks) {
    std::vector<ReuseEdge> edges;
    for (uint32_t b = 0; b < blocks.size(); ++b) {
        for (const ReuseSpan& s : blocks[b]->reads) {
            edges.push_back({s.begin, s.clock, b, true});
            edges.push_back({s.end, s.clock, b, false});
        }
        blocks[b]->reads = {};  // (the log is not needed after the launch)
    }
    reuse_sort(edges);
    std::map<std::pair<uint64_t, uint32_t>, uint64_t> open;  // (clock, block) -> reads covering the sweep point
    uint64_t work = 0;  // reads visited over all stretches (many deeply overlapping windows could be quadratic)
    for (size_t i = 0; i < edges.size();) {
        const uintptr_t at = edges[i].at;
        for (; i < edges.size() && edges[i].at == at; ++i) {
            uint64_t& n = open[{edges[i].clock, edges[i].block}];
            n += edges[i].open ? 1 : uint64_t(-1);
        }
        for (auto o = open.begin(); o != open.end();) o = o->second ? std::next(o) : open.erase(o);
        if (open.empty() || i == edges.size()) continue;
        if ((work += open.size()) > kReuseMaxWork) break;  // bounded time: the bytes after it get no credit
        const uint64_t len = edges[i].at - at;  // [here, the next edge): covered by every read in `open`
        for (auto prev = open.end(), cur = open.begin(); cur != open.end(); prev = cur++) {
            uint64_t* hist = blocks[cur->first.second]->bytes;
            if (prev != open.end()) hist[reuse_bucket(cur->first.first - prev->first.first)] += len;
            hist[0] += (cur->second - 1) * len;  // the same block reading the bytes twice at one clock (one DMA)
        }
    }
}

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_REUSE_RT_H
