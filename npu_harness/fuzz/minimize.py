"""Delta debugging over a program: the smallest program that still shows the same finding.

Reductions, tried greedily from the largest: drop a split loop, drop a kernel-scope statement, drop a
statement of a loop body, replace an expression by one of its operands of the same dtype and layout
(or a scalar by a literal), drop a parameter, shrink a size (halve it, or 1), use fewer cores. A
candidate counts when the front end accepts it and it fails with the same signature (category and
error code). Candidates are checked in batches that share one emulator binary (npu_harness.fuzz.runner),
and the first failing candidate of a batch, in reduction order, becomes the new program.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from ascend_dsl import parse_text
from ascend_dsl.diagnostics import DslError

from .program import Loop, Node, Program, Stmt
from .runner import Job, Outcome, run_jobs

BATCH = 12


def _node_variants(n: Node) -> Iterator[Node]:
    """`n` with one sub-expression replaced by one of its operands (same dtype and layout) or a literal."""
    for a in n.args:
        if a.dtype == n.dtype and a.layout == n.layout:
            yield a
    if n.layout == "scalar" and n.args:
        yield Node("1" if n.dtype == "i32" else "1.0", (), n.dtype, "scalar")
    for i, a in enumerate(n.args):
        for v in _node_variants(a):
            yield replace(n, args=n.args[:i] + (v,) + n.args[i + 1:])


def _stmt_variants(s: Stmt) -> Iterator[Stmt]:
    if s.expr is not None:
        for v in _node_variants(s.expr):
            yield replace(s, expr=v)


def candidates(p: Program) -> Iterator[Program]:
    body = list(p.body)
    loops = [i for i, item in enumerate(body) if isinstance(item, Loop)]
    for i in loops if len(loops) > 1 else ():
        yield replace(p, body=tuple(body[:i] + body[i + 1:]))
    for i, item in enumerate(body):
        if isinstance(item, Stmt):
            yield replace(p, body=tuple(body[:i] + body[i + 1:]))
    for i, item in enumerate(body):
        if isinstance(item, Loop):
            for j in range(len(item.body)):
                inner = item.body[:j] + item.body[j + 1:]
                if inner:
                    yield replace(p, body=tuple(body[:i] + [replace(item, body=inner)] + body[i + 1:]))
    for i, item in enumerate(body):
        stmts = item.body if isinstance(item, Loop) else (item,)
        for j, s in enumerate(stmts):
            for v in _stmt_variants(s):
                if isinstance(item, Loop):
                    new: Stmt | Loop = replace(item, body=item.body[:j] + (v,) + item.body[j + 1:])
                else:
                    new = v
                yield replace(p, body=tuple(body[:i] + [new] + body[i + 1:]))
    for i in range(len(p.params)):
        yield replace(p, params=p.params[:i] + p.params[i + 1:])
    for sym, n in p.sizes.items():
        for smaller in dict.fromkeys((1, n // 2, n - 1)):
            if 1 <= smaller < n:
                yield replace(p, sizes={**p.sizes, sym: smaller})
    for cores in dict.fromkeys((1, p.cores // 2)):
        if 1 <= cores < p.cores:
            yield replace(p, cores=cores)


def _parses(p: Program) -> bool:
    try:
        parse_text(p.text(), "candidate.adsl")[0].instantiate()
        return True
    except DslError:
        return False
    except Exception:  # noqa: BLE001 - a front-end crash on a candidate is its own finding, not this one
        return False


def job_of(p: Program) -> Job:
    return Job(p.text(), p.sizes, p.seed, p.target, p.cores, p.kind)


def minimize(p: Program, signature: str, *, seconds: float = 900, run: Callable[[list[Job]], list[Outcome]] = run_jobs,
             log: Callable[[str], None] = lambda _: None) -> Program:
    """The smallest variant of `p` found within `seconds` whose outcome still has `signature`."""
    deadline = time.monotonic() + seconds
    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        batch: list[Program] = []
        for c in candidates(p):
            if not _parses(c):
                continue
            batch.append(c)
            if len(batch) < BATCH:
                continue
            hit = _first_failing(batch, signature, run)
            batch = []
            if hit is not None:
                p, improved = hit, True
                log(f"  minimised to {len(p.text().splitlines())} lines, sizes {p.sizes}")
                break
            if time.monotonic() > deadline:
                break
        if not improved and batch and time.monotonic() < deadline:
            hit = _first_failing(batch, signature, run)
            if hit is not None:
                p, improved = hit, True
                log(f"  minimised to {len(p.text().splitlines())} lines, sizes {p.sizes}")
    return p


def _first_failing(batch: list[Program], signature: str, run) -> Program | None:
    for c, o in zip(batch, run([job_of(c) for c in batch]), strict=True):
        if o.signature == signature:
            return c
    return None
