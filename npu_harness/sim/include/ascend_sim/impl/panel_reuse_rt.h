// ascend_sim/impl/panel_reuse_rt.h - runtime definitions of the cube's panel re-load counters (core.h PanelReuse): for
// each GM -> L1 operand panel a Matmul block loads again, the LRU stack distance since its last load by any block. The
// cost model credits a re-load at L2 speed when that distance fits the target's L2 (docs/cost_model.md, "L2 (cube
// operands)"): under LRU replacement an access hits a fully associative cache of C bytes exactly when fewer than C
// distinct bytes were touched since the previous access to it (Mattson et al., "Evaluation techniques for storage
// hierarchies", IBM Systems Journal 9(2), 1970).
#pragma once
#ifndef ASCEND_SIM_ASCEND_SIM_IMPL_PANEL_REUSE_RT_H
#define ASCEND_SIM_ASCEND_SIM_IMPL_PANEL_REUSE_RT_H

namespace AscendC::sim::detail {

// A panel the current block's Matmul loads from GM into L1: `rows` rows of `rowBytes` bytes, `pitch` apart, from `gm`.
// Workspace operands are L2 traffic already (wsGm2l1): not logged.
ASCEND_SIM_RT void count_panel(const void* gm, uint64_t rows, uint64_t rowBytes, uint64_t pitch) {
    if (rows == 0 || rowBytes == 0 || gm_in_workspace(gm)) return;
    Counters& c = cnt();
    if (c.panels.loads.size() >= kReuseMaxSpans) {  // (unlogged loads would shorten others' distances: no count at all)
        c.panels.truncated = true;
        return;
    }
    const uint64_t now = c.gm2ub.bytes + c.ub2gm.bytes + c.gm2l1 + c.l0c2gm;  // the block's GM traffic so far
    c.panels.loads.push_back({reinterpret_cast<uintptr_t>(gm), rows, rowBytes, rows > 1 ? pitch : 0, now});
}

// End of a launch: every block's panel loads in launch order (by clock, ties by block: ASSUMPTION, as for the MTE2
// re-reads, the cores move GM bytes at one pace), then, for each load of a panel loaded before, the distinct panel
// bytes loaded in between (a Fenwick tree over the load order holding each panel's bytes at its latest load) plus the
// non-operand traffic the active blocks moved over that clock interval (the launch's share of it in all traffic).
ASCEND_SIM_RT void panel_count_launch(const std::vector<Counters*>& blocks) {
    struct Key {
        uintptr_t at;
        uint64_t rows, rowBytes, pitch;
        bool operator<(const Key& o) const {
            if (at != o.at) return at < o.at;
            if (rows != o.rows) return rows < o.rows;
            if (rowBytes != o.rowBytes) return rowBytes < o.rowBytes;
            return pitch < o.pitch;
        }
    };
    struct Load {
        uint64_t clock;
        uint32_t block;
        const PanelLoad* p;
    };
    for (const Counters* c : blocks) {
        if (!c->panels.truncated) continue;
        for (Counters* d : blocks) d->panels.loads = {};  // a log was cut: no re-load counted
        return;
    }
    std::vector<Load> order;
    uint64_t traffic = 0, other = 0, active = 0;
    {  // k-way merge of the blocks' logs (each in clock order) by (clock, block)
        std::map<std::pair<uint64_t, uint32_t>, size_t> heads;  // (clock, block) -> next index in that block's log
        for (uint32_t b = 0; b < blocks.size(); ++b) {
            const Counters& c = *blocks[b];
            const uint64_t moved = c.gm2ub.bytes + c.ub2gm.bytes + c.gm2l1 + c.l0c2gm;
            if (moved) ++active;
            traffic += moved;
            other += c.gm2ub.bytes - c.wsGm2ub + c.ub2gm.bytes - c.wsUb2gm + c.l0c2gm - c.wsL0c2gm;
            if (!c.panels.loads.empty()) heads[{c.panels.loads[0].clock, b}] = 0;
        }
        while (!heads.empty()) {
            const auto it = heads.begin();
            const uint32_t b = it->first.second;
            const size_t i = it->second;
            heads.erase(it);
            const auto& log = blocks[b]->panels.loads;
            order.push_back({log[i].clock, b, &log[i]});
            if (i + 1 < log.size()) heads[{log[i + 1].clock, b}] = i + 1;
        }
    }
    const size_t n = order.size();
    std::vector<uint64_t> tree(n + 1, 0);  // Fenwick tree: bytes of the panels whose latest load is at each position
    auto add = [&](size_t pos, int64_t v) {
        for (size_t i = pos + 1; i <= n; i += i & (~i + 1)) tree[i] += uint64_t(v);
    };
    auto prefix = [&](size_t pos) {  // sum over positions [0, pos)
        uint64_t s = 0;
        for (size_t i = pos; i > 0; i -= i & (~i + 1)) s += tree[i];
        return s;
    };
    const double otherShare = traffic ? double(other) / double(traffic) : 0.0;
    std::map<Key, size_t> last;  // panel -> position of its latest load
    for (size_t i = 0; i < n; ++i) {
        const PanelLoad& p = *order[i].p;
        const uint64_t bytes = p.rows * p.rowBytes;
        auto [it, fresh] = last.try_emplace(Key{p.at, p.rows, p.rowBytes, p.pitch}, i);
        if (!fresh) {
            const size_t prev = it->second;
            const uint64_t between = prefix(i) - prefix(prev + 1);
            const uint64_t dt = order[i].clock - (order[prev].clock < order[i].clock ? order[prev].clock : order[i].clock);
            const uint64_t streamed = uint64_t(double(dt) * double(active) * otherShare);
            blocks[order[i].block]->panels.bytes[reuse_bucket(between + streamed)] += bytes;
            add(prev, -int64_t(bytes));
            it->second = i;
        }
        add(i, int64_t(bytes));
    }
    for (Counters* c : blocks) c->panels.loads = {};  // (the log is not needed after the launch)
}

}  // namespace AscendC::sim::detail

#endif  // ASCEND_SIM_ASCEND_SIM_IMPL_PANEL_REUSE_RT_H
