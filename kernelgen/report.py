"""Aggregate evaluation records into per-category and overall tables; write JSON, Markdown, PNG."""

from __future__ import annotations

import json
from pathlib import Path

from .metrics import fast_p, mean_pass_at_k

RATES = (("parse", "parsed"), ("check", "checked"), ("interp", "interp_ok"), ("lower", "lowered"),
         ("sim", "sim_ok"), ("npu", "npu_ok"))
NO_ESTIMATE = "n/a (no cost model estimate)"
NO_BASELINE = "n/a (no baseline time)"


def _group(records: list[dict]) -> dict:
    by_task: dict[str, list[dict]] = {}
    for r in records:
        by_task.setdefault(r["task"], []).append(r)
    return by_task


def summarize(records: list[dict], ks: list[int], ps: list[float], level: str,
              baselines: dict[str, float] | None = None) -> dict:
    n = len(records)
    out: dict = {"tasks": len(_group(records)), "samples": n}
    for name, key in RATES:
        skipped = (name == "sim" and level == "interp") or (name == "npu" and level != "npu")
        out[f"{name}_rate"] = (sum(1 for r in records if (r.get("final") or {}).get(key)) / n) if n and not skipped \
            else None
    out["correct_rate"] = (sum(r["passed"] for r in records) / n) if n else None
    out["first_round_correct_rate"] = (sum(r.get("first_passed", False) for r in records) / n) if n else None
    out["errors"] = sum(1 for r in records if r.get("error"))
    counts = [(len(rs), sum(r["passed"] for r in rs)) for rs in _group(records).values()]
    out["pass@k"] = {str(k): mean_pass_at_k(counts, k) for k in ks}
    out["fast_p"] = _fast_p(records, ps, baselines)
    out["tokens"] = {k: sum((r.get("usage") or {}).get(k, 0) for r in records)
                     for k in ("prompt_tokens", "completion_tokens")}
    out["level"] = level
    return out


def _fast_p(records: list[dict], ps: list[float], baselines: dict[str, float] | None) -> dict:
    passing = [r for r in records if r["passed"]]
    if any((r.get("final") or {}).get("speedup") is not None for r in passing):  # --level npu: measured
        speedups = []
        for rs in _group(records).values():
            measured = [r["final"]["speedup"] for r in rs if r["passed"] and r["final"].get("speedup") is not None]
            speedups.append(max(measured) if measured else None)
        return {str(p): fast_p(speedups, p) for p in ps}
    estimates = [r for r in passing if (r.get("final") or {}).get("estimate_us") is not None]
    if not estimates:
        return {str(p): NO_ESTIMATE for p in ps}
    if not baselines:
        return {str(p): NO_BASELINE for p in ps}
    speedups: list[float | None] = []
    for task, rs in _group(records).items():
        base = baselines.get(task, baselines.get(task.split("/")[-1]))
        ests = [r["final"]["estimate_us"] for r in rs if r["passed"] and r["final"].get("estimate_us")]
        speedups.append(base / min(ests) if (base and ests) else None)
    return {str(p): fast_p(speedups, p) for p in ps}


def build_report(records: list[dict], ks: list[int], ps: list[float], level: str, meta: dict,
                 baselines: dict[str, float] | None = None) -> dict:
    cats = sorted({r["category"] for r in records})
    return {"meta": meta,
            "overall": summarize(records, ks, ps, level, baselines),
            "categories": {c: summarize([r for r in records if r["category"] == c], ks, ps, level, baselines)
                           for c in cats},
            "tasks": {t: {"samples": len(rs), "correct": sum(r["passed"] for r in rs),
                          "errors": [r["error"] for r in rs if r.get("error")][:3],
                          "failed_stages": [(r.get("final") or {}).get("failed_stage") for r in rs]}
                      for t, rs in sorted(_group(records).items())}}


def _fmt(v) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{100 * v:.1f}%"
    return str(v)


def markdown(report: dict) -> str:
    m = report["meta"]
    ks = list(report["overall"]["pass@k"])
    ps = list(report["overall"]["fast_p"])
    lines = ["# ascend-eval report", "",
             f"provider `{m.get('provider')}`, model `{m.get('model')}`, prompt `{m.get('prompt_version')}`, "
             f"level `{m.get('level')}`, {m.get('samples')} sample(s)/task, repair rounds {m.get('repair_rounds')}, "
             f"grammar-constrained: {m.get('constrained')}, temperature {m.get('temperature')}, "
             f"tolerance atol=rtol 1e-4 (f32) / 1e-2 (f16), target {m.get('target')}.", "",
             "Rates are over samples (final attempt after repairs); pass@k is the unbiased estimator "
             "1 - C(n-c,k)/C(n,k) averaged over tasks; "
             + ("fast_p uses the speedup over PyTorch eager measured on the NPU (3 warm-ups, 100 timed calls with "
                "NPU events, as MultiKernelBench times)." if m.get("level") == "npu" else
                "fast_p uses the cost model's estimated kernel time against the baseline times in "
                f"{m.get('baseline') or '(none given)'}."), "",
             "| category | tasks | samples | " + " | ".join(r for r, _ in RATES) + " | correct | round-0 correct | "
             + " | ".join(f"pass@{k}" for k in ks) + " | " + " | ".join(f"fast_{p}" for p in ps) + " |",
             "|---" * (5 + len(RATES) + len(ks) + len(ps)) + "|"]
    rows = list(report["categories"].items()) + [("**overall**", report["overall"])]
    for name, s in rows:
        cells = [name, str(s["tasks"]), str(s["samples"])] + [_fmt(s[f"{r}_rate"]) for r, _ in RATES]
        cells += [_fmt(s["correct_rate"]), _fmt(s["first_round_correct_rate"])]
        cells += [_fmt(s["pass@k"][k]) for k in ks]
        cells += [v if isinstance(v, str) else _fmt(v) for v in s["fast_p"].values()]
        lines.append("| " + " | ".join(cells) + " |")
    o = report["overall"]
    lines += ["", f"Tokens: {o['tokens']['prompt_tokens']} prompt, {o['tokens']['completion_tokens']} completion. "
              f"Samples with provider/task errors: {o['errors']}.", "", "## Tasks", "",
              "| task | correct / samples | failing stages |", "|---|---|---|"]
    for t, d in report["tasks"].items():
        stages = ", ".join(str(s) for s in d["failed_stages"] if s) or "-"
        lines.append(f"| {t} | {d['correct']}/{d['samples']} | {stages} |")
    return "\n".join(lines) + "\n"


def chart(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(report["categories"]) + ["overall"]
    stats = [report["categories"][g] for g in groups[:-1]] + [report["overall"]]
    metrics = [(f"{r}_rate", r) for r, _ in RATES] + [("correct_rate", "correct")]
    width = 0.8 / len(metrics)
    fig, ax = plt.subplots(figsize=(max(7.0, 1.6 * len(groups) + 3), 4.5))
    for j, (key, label) in enumerate(metrics):
        xs = [i + j * width for i in range(len(groups))]
        ax.bar(xs, [100 * (s[key] or 0) for s in stats], width, label=label)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))], groups)
    ax.set_ylim(0, 100)
    ax.set_ylabel("% of samples")
    m = report["meta"]
    ax.set_title(f"{m.get('model')}: {m.get('samples')} sample(s)/task, level {m.get('level')}", fontsize=9)
    ax.legend(ncol=len(metrics), fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write(report: dict, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "report.json", out_dir / "report.md", out_dir / "report.png"]
    paths[0].write_text(json.dumps(report, indent=1) + "\n")
    paths[1].write_text(markdown(report))
    chart(report, paths[2])
    return paths
