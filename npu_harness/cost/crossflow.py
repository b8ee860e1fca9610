"""Dependency-aware time of a MIX launch whose AIC and AIV hand work to each other with cross-core flags
(docs/cost_model.md "AIC-driven MIX kernels").

The emulator logs, per block, its CrossCoreSetFlag / CrossCoreWaitFlag / SyncAll events in program order, the work
done since the previous event (`work`: the counters that time the pipes), for a set the pipe it was issued on (`pipe`)
and, for a wait, the set events that released it (`after`: [block, event index] pairs; a mode-2 wait on the AIC names
both AIV's sets), plus the work after the last event (`cross_tail`; emulator.md "Cross-core flags").

Each block keeps an issue cursor (when its scalar unit issues the next instruction) and one cursor per pipe (when the
pipe is done with what it was given), session 35. ascendc_next.md §2.4 and §5.1 give the rules:
- "The scalar unit issues instructions in program order into per-pipe queues" and "all pipes execute asynchronously"
  (§5.1): the work between two events (a stretch) runs on each pipe from the pipe's cursor, no earlier than the issue
  cursor; within a stretch the pipes form a chain in dataflow order (CHAIN) of `iterations` equal steps, a pipe starting
  its first step once the pipe before it finished its first (flow shop: alone, a stretch takes
  max + (sum - max) / iterations, the block's overlap rule; pipes that do not overlap, `iterations` 0, run one after the
  other and after all earlier work). ASSUMPTION: issue is never held up by a full pipe queue (no source gives the depth).
- "Set is issued after the preceding work of `pipe` on this core completes" (§2.4): a set happens at max(the issue
  cursor, its pipe's cursor); a set on FIX (session 36: FIX is a pipe, the L0C -> GM writes) no earlier than the M
  cursor either (a Fixpipe waits for the Mmad it drains, M_FIX; a block with one L0C buffer has its Fixpipes on M); a
  set whose pipe is not logged (older logs) once every pipe is done.
- "Wait stalls instruction issue on this core until the counter is non-zero" (§2.4): a wait returns at max(the issue
  cursor, the latest releasing set + the flag latency) and moves the issue cursor there; it does not drain the pipes
  (work issued before it keeps its pipe times). A SyncAll releases its group at the latest arrival, a block arriving once
  all its pipes are done (ASSUMPTION: the barrier drains the core).
A block's time is the latest of its cursors after its tail, never less than its chain without flags (`floor`).

`flag_times` walks the blocks in any order that respects the logged edges: the emulator ran them in one such order, so
a log always has one (a launch that deadlocked stopped with CROSS-DEADLOCK; its unwound waits are not logged).
"""

from __future__ import annotations

from collections.abc import Callable

# the pipes of a stretch of work in dataflow order: the AIC's GM -> L1 -> L0 -> cube -> GM (Fixpipe), the AIV's
# GM -> UB -> vector (-> scalar reads) -> GM
CHAIN = ("MTE2", "MTE1", "M", "FIX", "V", "S", "MTE3")


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


class _Block:
    """One block's cursors: `issue` and the end of each pipe's work so far (us)."""

    def __init__(self) -> None:
        self.issue = 0.0
        self.pipe = dict.fromkeys(CHAIN, 0.0)

    def done(self) -> float:
        return max(self.issue, *self.pipe.values())

    def run(self, pipes: dict[str, float], iterations: int) -> None:
        """Advance the cursors by a stretch of work: `pipes` its time on each pipe, `iterations` its pipeline steps
        (0: the pipes do not overlap, so the stretch starts once all earlier work is done and runs pipe by pipe)."""
        start0 = self.issue if iterations else self.done()
        n = max(1, iterations)
        prev = None  # (start, end, time) of the previous pipe of the chain with work
        for name in CHAIN:
            d = pipes.get(name, 0.0)
            if d <= 0:
                continue
            start = max(self.pipe[name], start0)
            end = start + d
            if prev is not None:
                s0, e0, d0 = prev
                if iterations:
                    start = max(start, s0 + d0 / n)  # its first step follows the previous pipe's first step
                    end = max(start + d, e0 + d / n)  # its last step follows the previous pipe's last step
                else:
                    start = max(start, e0)
                    end = start + d
            self.pipe[name] = end
            prev = (start, end, d)

    def set_time(self, pipe: str | None) -> float:
        if pipe == "FIX":  # after the Mmad the Fixpipe drains as well (M_FIX): one L0C buffer keeps FIX's work on M
            return max(self.issue, self.pipe["M"], self.pipe["FIX"])
        return max(self.issue, self.pipe[pipe]) if pipe in self.pipe else self.done()


def flag_times(blocks: list[dict], stretch: Callable[[int, dict], tuple[dict[str, float], int]], floor: list[float],
               latency_us: float) -> list[float] | None:
    """Each block's end time (us from the launch's start) with its waits on the other blocks' sets, or None when no
    block logged a flag event. `stretch(i, work)`: block i's time on each pipe for `work` and the stretch's pipeline
    iterations (0 when the block's pipes do not overlap); `floor[i]`: block i's chain without flags (the model's time
    before this rule)."""
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
    state = [_Block() for _ in range(n)]
    ran = [0] * n  # the events whose preceding work is in the cursors already (a SyncAll waiting for its group)
    progress = True
    while progress:
        progress = False
        for i in range(n):
            cur = state[i]
            while len(at[i]) < len(events[i]):
                k = len(at[i])
                e = events[i][k]
                src = [(int(b), int(j)) for b, j in e.get("after", [])]
                if any(j >= len(at[b]) for b, j in src):
                    break  # a wait whose set is not timed yet
                if ran[i] == k:
                    cur.run(*stretch(i, e.get("work", {})))
                    ran[i] = k + 1
                if e["ev"] == "set":
                    t = cur.set_time(e.get("pipe"))
                elif e["ev"] == "wait":
                    t = max([cur.issue] + [at[b][j] + latency_us for b, j in src])
                    cur.issue = t
                else:  # sync: released once every member arrived
                    group = arrived.setdefault(e["group"], {})
                    group[i] = cur.done()
                    if len(group) < members[e["group"]]:
                        break
                    t = max(group.values())
                    cur.issue = t
                at[i].append(t)
                progress = True
    if any(len(at[i]) < len(events[i]) for i in range(n)):
        raise ValueError("cross-core flag log with a wait no set releases (the emulator reports CROSS-DEADLOCK)")
    out = []
    for i, b in enumerate(blocks):
        if not events[i]:
            out.append(floor[i])
            continue
        state[i].run(*stretch(i, b.get("cross_tail", {})))
        out.append(max(state[i].done(), floor[i]))
    return out
