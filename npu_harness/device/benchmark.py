"""Kernel timing as MultiKernelBench does it (utils/performance.py, benchmarks.md §1.7): `warmup` calls,
then `trials` calls each bracketed by two device events (`Event(enable_timing=True)`, record, record,
synchronize, elapsed_time in ms); mean / std / min / max. The PyTorch reference is timed with the same
timer. On an NPU the events are torch_npu's; the host timer (perf_counter around a synchronised call)
serves the emulator stand-in used by the tests, whose times say nothing about NPU performance."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

WARMUP = 3  # MKB num_warmup
TRIALS = 100  # MKB num_perf_trials


@dataclass(frozen=True)
class Timing:
    mean_ms: float
    std_ms: float
    min_ms: float
    max_ms: float
    trials: int

    def to_dict(self) -> dict:
        return asdict(self)


def summarise(samples: list[float]) -> Timing:
    n = len(samples)
    mean = sum(samples) / n
    std = math.sqrt(sum((s - mean) ** 2 for s in samples) / (n - 1)) if n > 1 else 0.0
    return Timing(mean, std, min(samples), max(samples), n)


def time_events(fn: Callable[[], object], event_cls, synchronize: Callable[[], None], *, warmup: int = WARMUP,
                trials: int = TRIALS) -> Timing:
    """Device-event timing: `event_cls(enable_timing=True)` objects with record() / elapsed_time()."""
    for _ in range(warmup):
        fn()
    synchronize()
    samples = []
    for _ in range(trials):
        start, end = event_cls(enable_timing=True), event_cls(enable_timing=True)
        start.record()
        fn()
        end.record()
        synchronize()
        samples.append(float(start.elapsed_time(end)))
    return summarise(samples)


def time_host(fn: Callable[[], object], *, warmup: int = WARMUP, trials: int = TRIALS) -> Timing:
    """Host wall-clock timing of synchronous calls (the emulator stand-in)."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(trials):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000.0)
    return summarise(samples)


def fast_p(correct: bool, speedup: float | None, ps: list[float]) -> dict[str, int]:
    """KernelBench's fast_p for one task: 1 when correct and faster than p times eager, else 0."""
    return {str(p): int(bool(correct and speedup is not None and speedup > p)) for p in ps}
