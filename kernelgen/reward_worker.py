"""One kernel judged in a sandbox process (started by kernelgen.reward under a time and memory limit):

    python -m kernelgen.reward_worker JOB.json

JOB: {"response", "task_files": [{"name", "content"}], "category", "task_name", "level", "seeds", "cap",
"target"}. The task file (and its JSON sidecars) are written next to the job, the response goes through
kernelgen.candidate.evaluate (parsed, never executed; the task's reference runs in its own limited
subprocess), a kernel the interpreter rejects is lowered afterwards (kernelgen.stages), and one line
`RESULT <json>` is printed: the outcome summary and the per-stage results.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RESULT_PREFIX = "RESULT "


def materialize(task_files: list[dict], root: Path, category: str) -> Path:
    """Write the task file and its sidecars under root/category/; the path of the .py task file."""
    folder = root / category
    folder.mkdir(parents=True, exist_ok=True)
    task_path = None
    for f in task_files:
        name = Path(f["name"]).name  # never a path out of the folder
        (folder / name).write_text(f["content"])
        if name.endswith(".py"):
            task_path = folder / name
    if task_path is None:
        raise ValueError("task_files holds no .py task file")
    return task_path


def judge(job: dict, workdir: Path) -> dict:
    from .candidate import evaluate
    from .stages import lower_variants, stage_results
    from .tasks import load_task

    task = load_task(materialize(job["task_files"], workdir / "task", job["category"]), job["category"])
    out = evaluate(job["response"], task, level=job["level"], seeds=job["seeds"], cap=job.get("cap"),
                   target=job["target"])
    lowered = None
    if out.failed_stage == "interp" and out.code:
        lowered = lower_variants(out.code, f"{task.name}.adsl", job["target"])[0]
    summary = out.summary()
    return {"outcome": summary, "stages": stage_results(summary, lowered)}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    job_path = Path(argv[0])
    result = judge(json.loads(job_path.read_text()), job_path.parent)
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
