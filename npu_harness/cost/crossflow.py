"""Dependency-aware time of a MIX launch whose AIC and AIV hand work to each other with cross-core flags
(docs/cost_model.md "AIC-driven MIX kernels").

The emulator logs, per block, its CrossCoreSetFlag / CrossCoreWaitFlag / SyncAll events in program order, the work
done since the previous event (`work`: the counters that time the pipes) and, for a wait, the set events that released
it (`after`: [block, event index] pairs; a mode-2 wait on the AIC names both AIV's sets), plus the work after the last
event (`cross_tail`; emulator.md "Cross-core flags"). Each block keeps a time cursor: a wait stalls every pipe of its
core until it returns (ref_next §2.4: "on A2 ... Wait blocks all pipes of the core"), so the work between two waits is
one interval whose pipes combine by the block's own rule (`combine`); a set is issued once the work before it is done
(the interval's start + the combined time of its work so far: "Set is issued after the preceding work of `pipe`
completes", a little early when the set's pipe finishes before the others); a wait returns at
max(the block reaching it, the latest releasing set + the flag latency); a SyncAll at the latest arrival of its group.
A block's time is its last interval's end, stalls included, and never less than its chain without flags (`floor`).

`flag_times` walks the blocks in any order that respects the logged edges: the emulator ran them in one such order, so
a log always has one (a launch that deadlocked stopped with CROSS-DEADLOCK; its unwound waits are not logged).
"""

from __future__ import annotations

from collections.abc import Callable


def add_work(a: dict, b: dict) -> dict:
    """The work of two consecutive stretches: DMA [bytes, instructions] pairs, vec {key: [instructions, repeats]} and
    scalar counts add."""
    out = dict(a)
    for k, v in b.items():
        if k == "vec":
            vec = dict(out.get("vec", {}))
            for key, (i, r) in v.items():
                i0, r0 = vec.get(key, (0, 0))
                vec[key] = [i0 + i, r0 + r]
            out["vec"] = vec
        elif isinstance(v, list):
            x = out.get(k, [0, 0])
            out[k] = [x[0] + v[0], x[1] + v[1]]
        else:
            out[k] = out.get(k, 0) + v
    return out


def flag_times(blocks: list[dict], interval_us: Callable[[int, dict], float], floor: list[float],
               latency_us: float) -> list[float] | None:
    """Each block's end time (us from the launch's start) with its waits on the other blocks' sets, or None when no
    block logged a flag event. `interval_us(i, work)`: block i's time for `work` done between two waits (its pipes,
    combined by its overlap rule); `floor[i]`: block i's chain without flags (the model's time before this rule)."""
    events = [b.get("cross_events", []) for b in blocks]
    if not any(events):
        return None
    n = len(blocks)
    members: dict[int, int] = {}  # SyncAll group -> the blocks that take part
    for ev in events:
        for e in ev:
            if e["ev"] == "sync":
                members[e["group"]] = members.get(e["group"], 0) + 1
    arrived: dict[int, dict[int, float]] = {}
    at: list[list[float]] = [[] for _ in range(n)]  # at[i][k]: when block i's event k happened (a wait: when it returned)
    start = [0.0] * n    # the current interval's start (the last wait's return)
    work: list[dict] = [{} for _ in range(n)]  # the work of the current interval so far
    progress = True
    while progress:
        progress = False
        for i in range(n):
            while len(at[i]) < len(events[i]):
                e = events[i][len(at[i])]
                src = [(int(b), int(k)) for b, k in e.get("after", [])]
                if any(k >= len(at[b]) for b, k in src):
                    break  # a wait whose set is not timed yet
                upto = add_work(work[i], e.get("work", {}))
                reach = start[i] + interval_us(i, upto)
                if e["ev"] == "set":
                    t = reach
                    work[i] = upto
                elif e["ev"] == "wait":
                    t = max([reach] + [at[b][k] + latency_us for b, k in src])
                    start[i], work[i] = t, {}
                else:  # sync: released once every member arrived
                    group = arrived.setdefault(e["group"], {})
                    group[i] = reach
                    if len(group) < members[e["group"]]:
                        break
                    t = max(group.values())
                    start[i], work[i] = t, {}
                at[i].append(t)
                progress = True
    if any(len(at[i]) < len(events[i]) for i in range(n)):
        raise ValueError("cross-core flag log with a wait no set releases (the emulator reports CROSS-DEADLOCK)")
    out = []
    for i, b in enumerate(blocks):
        if not events[i]:
            out.append(floor[i])
            continue
        end = start[i] + interval_us(i, add_work(work[i], b.get("cross_tail", {})))
        out.append(max(end, floor[i]))
    return out
