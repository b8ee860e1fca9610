"""Pipe-race detection (ascend_sim/race.h): a planted bug per race class (MTE2->V, V->MTE3, MTE2->MTE3,
write-after-read on a reused TBuf, same-pipe overlapping copies, a GM round trip, cube L0C read before
the Mmad finished and L0C reused while Fixpipe reads it) reported as PIPE-RACE at the second access with
the missing event named; the correctly synchronised twin of each is clean; --cce-auto-sync is modelled
(on by default, ASCEND_SIM_AUTO_SYNC=0 turns it off)."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_harness.sim.compiler import compile_program, run_program
from tests.sim.source_lines import line_in

SRC = Path(__file__).resolve().parent / "kernels" / "races.cpp"


@pytest.fixture(scope="module")
def binary() -> Path:
    return compile_program([SRC], defines={})


def line_of(text: str) -> int:
    return line_in(SRC, text)


RACES = {
    "mte2_v_race": ("RACE: MTE2->V", "RAW", "MTE2_V"),
    "v_mte3_race": ("RACE: V->MTE3", "RAW", "V_MTE3"),
    "mte2_mte3_race": ("RACE: MTE2->MTE3", "RAW", "MTE2_MTE3"),
    "war_tbuf_race": ("RACE: reloads", "WAR", "V_MTE2"),
    "mte2_overlap_race": ("RACE: overlaps", "WAW", "PipeBarrier<PIPE_MTE2>"),
    "gm_roundtrip_race": ("RACE: reads GM", "RAW", "MTE3_MTE2"),
    "cube_fix_race": ("RACE: reads L0C", "RAW", "M_FIX"),
    "cube_reuse_race": ("RACE: overwrites L0C", "WAR", "FIX_M"),
    "gather_overlap_race": ("RACE: same fractal row", "WAW", "PipeBarrier<PIPE_MTE2>"),
}


@pytest.mark.parametrize("variant", sorted(RACES))
def test_race_is_reported(binary, variant):
    marker, kind, missing = RACES[variant]
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 1, res.stdout + res.stderr
    assert {e.code for e in res.errors} == {"PIPE-RACE"}, res.stderr
    first = res.errors[0]
    assert first.file == "races.cpp" and first.line == line_of(marker), res.stderr
    assert first.message.startswith(f"{kind} hazard") and missing in first.message, first.message
    assert "races.cpp:" in first.message  # the other access's call site


@pytest.mark.parametrize("variant", [v.replace("_race", "_ok") for v in sorted(RACES) if v not in (
                                     "cube_fix_race", "cube_reuse_race", "gather_overlap_race")] + ["cube_ok", "gather_ok", "queue_ok", "scalar_v"])
def test_synchronised_twin_is_clean(binary, variant):
    res = run_program(binary, [variant], timeout=60)
    assert res.returncode == 0 and res.errors == [], res.stdout + res.stderr


def test_auto_sync_switch(binary):
    # a scalar write read by the vector unit: synchronised by --cce-auto-sync, a race without it
    assert run_program(binary, ["scalar_v"], timeout=60).errors == []
    res = run_program(binary, ["scalar_v"], timeout=60, env={"ASCEND_SIM_AUTO_SYNC": "0"})
    assert [e.code for e in res.errors] == ["PIPE-RACE"] and "S_V" in res.errors[0].message, res.stderr
    assert res.errors[0].line == line_of("RACE without --cce-auto-sync")


def test_racecheck_can_be_switched_off(binary):
    res = run_program(binary, ["v_mte3_race"], timeout=60, env={"ASCEND_SIM_RACECHECK": "0"})
    assert res.returncode == 0 and res.errors == [], res.stderr
