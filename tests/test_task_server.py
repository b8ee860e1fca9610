"""The task fork server (npu_harness.task_server): a forked worker is what a fresh one would be."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from ascend_dsl.diagnostics import DslError
from npu_harness import task_server
from npu_harness.task import run_task_cases

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_task_cache(monkeypatch):
    monkeypatch.setenv("ASCEND_DSL_TASK_CACHE", "0")


def _task(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text("import os\nimport torch\nimport torch.nn as nn\n" + textwrap.dedent(body))
    return path


def _arrays(cases) -> dict[str, np.ndarray]:
    case = cases.cases[0]
    named = {f"in{i}": t for i, t in enumerate(case.inputs)} | {f"out{i}": t for i, t in enumerate(case.outputs)}
    return {name: np.asarray(t.data) for name, t in (named | case.params).items()}


def test_forked_worker_gives_the_fresh_workers_result(monkeypatch):
    task = REPO / "examples/loss/cross_entropy.py"  # random inputs and a reference output
    forked = _arrays(run_task_cases(task, seed=3))
    assert task_server._server is not None and task_server._server.owner == os.getpid()
    monkeypatch.setenv(task_server.ENV, "0")
    fresh = _arrays(run_task_cases(task, seed=3))
    assert forked.keys() == fresh.keys() and len(forked) >= 3
    for name in forked:
        assert forked[name].dtype == fresh[name].dtype and np.array_equal(forked[name], fresh[name]), name


def test_child_sees_the_callers_environment_and_directory_now(tmp_path, monkeypatch):
    task = _task(tmp_path, "sized", """
        class Model(nn.Module):
            def forward(self, x):
                return x + 1
        def get_inputs():
            assert os.path.isfile("marker"), os.getcwd()
            return [torch.zeros(int(os.environ["TASK_SERVER_TEST_N"]))]
        def get_init_inputs():
            return []
    """)
    (tmp_path / "marker").write_text("")
    monkeypatch.chdir(tmp_path)
    shapes = []
    for n in ("5", "7"):  # set after the server started: a stale environment would give 5 twice
        monkeypatch.setenv("TASK_SERVER_TEST_N", n)
        shapes.append(_arrays(run_task_cases(task))["in0"].shape)
    assert shapes == [(5,), (7,)]


def test_hanging_task_is_killed_with_its_process_group_and_the_server_serves_on(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    task = _task(tmp_path, "hang", f"""
        import subprocess, time
        p = subprocess.Popen(["sleep", "300"])
        open({str(pidfile)!r}, "w").write(str(p.pid))
        while True:
            time.sleep(1)
    """)
    start = time.monotonic()
    with pytest.raises(DslError) as e:
        run_task_cases(task, timeout=3)
    assert e.value.codes == ["TASK-TIMEOUT"] and time.monotonic() - start < 30
    grandchild = int(pidfile.read_text())
    for _ in range(50):  # killed with the group (it may linger as a zombie of init for a moment)
        try:
            state = Path(f"/proc/{grandchild}/stat").read_text().split()[2]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail("the task's own child survived the timeout")
    server = task_server._server
    assert server is not None and server.proc.poll() is None
    assert _arrays(run_task_cases(REPO / "examples/activation/relu.py"))["in0"].size > 0
    assert task_server._server is server  # the same server answered


def test_exception_and_memory_limit_in_a_forked_worker(tmp_path, monkeypatch):
    bad = _task(tmp_path, "bad", "raise RuntimeError('broken task')\n")
    with pytest.raises(DslError) as e:
        run_task_cases(bad)
    assert e.value.codes == ["TASK-ERROR"] and "broken task" in e.value.render()
    huge = _task(tmp_path, "huge", """
        class Model(nn.Module):
            def forward(self, x):
                return x
        def get_inputs():
            return [torch.randn(1 << 31)]
        def get_init_inputs():
            return []
    """)
    monkeypatch.setenv("ASCEND_DSL_MEMORY_LIMIT", "3G")
    with pytest.raises(DslError) as e:
        run_task_cases(huge)
    assert e.value.codes == ["MEMORY-LIMIT"]


def test_server_ends_with_its_parent(tmp_path):
    code = ("import os\nos.environ['ASCEND_DSL_TASK_CACHE'] = '0'\nfrom npu_harness.task import run_task\n"
            "from npu_harness import task_server\nrun_task('examples/activation/relu.py')\n"
            "print(task_server._server.proc.pid)\nos._exit(0)\n")  # no atexit: the pipe closing must suffice
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
    pid = int(out.stdout.split()[-1])
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail("the task server outlived its parent")


def test_a_changed_worker_source_gets_a_new_server():
    run_task_cases(REPO / "examples/activation/relu.py")
    first = task_server._server
    worker = Path(task_server.__file__).with_name("task_worker.py")
    stat = worker.stat()
    os.utime(worker, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    try:
        run_task_cases(REPO / "examples/activation/relu.py")
        assert task_server._server is not first and first.proc.poll() is not None
    finally:
        os.utime(worker, ns=(stat.st_atime_ns, stat.st_mtime_ns))
