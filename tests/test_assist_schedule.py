"""Assisted schedule decisions (lowering/assist): the knob menu, the answer checks, the grammar, and end to
end through `ascend-lower --assist` with recorded answers (malformed, off the menu, unsafe, slower, wrong,
faster), each rejected or accepted for the right reason by the real checker, emulator and cost model; the
decision cache (a rebuild is byte-identical and needs no model) and `--assist off` (the rule-based output)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lark import Lark
from lark.exceptions import LarkError

from ascend_dsl import load_file, printer
from ascend_dsl.diagnostics import DslError
from lowering import lower
from lowering.assist import knobs as K
from lowering.assist import proposal as P
from lowering.assist.cache import DecisionCache
from lowering.targets import get_target

REPO = Path(__file__).resolve().parent.parent
RELU = REPO / "examples/activation/relu.adsl"
GELU = REPO / "examples/activation/gelu.adsl"
SOFTMAX = REPO / "examples/activation/softmax.adsl"
MATMUL = REPO / "examples/matmul/matmul_rect.adsl"
MATMUL_SOFTMAX = REPO / "examples/fuse/matmul_softmax.adsl"


def _menu(path: Path, dtypes=None):
    src = load_file(path)[0]
    kernel = src.instantiate(dtypes or src.dtype_variants[0])
    project, ctx = lower(kernel, source_name=path.name)
    return kernel, K.menu(kernel, ctx.lowered, ctx.target, path.name), project


# ----------------------------------------------------------------------------- the menu


def test_menu_of_a_flat_kernel():
    _, menu, _ = _menu(RELU)
    assert [k.key for k in menu] == ["loop0.size", "loop0.buffers", "split0.cores", "expr.store_y"]
    size = menu[0]
    # relu f32: two queue buffers of 4 B per element; UB budget 188416 B on 910B1
    assert (size.granule, size.max_size, size.current) == (8, 188416 // (2 * 4), "auto")
    assert "up to 11776 with buffers=2, 23552 with buffers=1" in size.doc
    assert (menu[2].current, menu[2].max_size) == ("all", 48)
    assert menu[3].current == "relu(xt)"


def test_menu_of_row_and_matmul_kernels():
    _, rows, _ = _menu(SOFTMAX)
    assert not any(k.kind == "size" for k in rows)  # rows per tile are sized at run time, with an optional cap
    assert [(k.key, k.current) for k in rows if k.kind == "rows"] == [("loop0.rows", "auto")]
    assert {"loop0.buffers", "expr.e", "expr.store_y"} <= {k.key for k in rows}
    _, mm, _ = _menu(MATMUL)
    assert {"mm.base_m", "mm.base_n", "mm.base_k"} <= {k.key for k in mm}
    _, whole, _ = _menu(MATMUL_SOFTMAX)
    assert "mm.base_m" in {k.key for k in whole} and "mm.base_n" not in {k.key for k in whole}


# ----------------------------------------------------------------------------- answers


@pytest.mark.parametrize("answer, check, words", [
    ("I would use bigger tiles.", "json", "not a JSON object"),
    ('{"knobs": {"loop0.size": 4096}', "json", "not a JSON object"),
    ("[1, 2]", "json", "not an object"),
    ('{"tile": 4096}', "menu", "unknown fields: tile"),
    ('{"knobs": {"loop1.size": 4096}}', "menu", "unknown knob 'loop1.size'"),
    ('{"knobs": {"loop0.size": 100}}', "menu", "not a positive multiple of 8"),
    ('{"knobs": {"loop0.size": 30000}}', "menu", "exceeds 23552"),
    ('{"knobs": {"loop0.size": "big"}}', "menu", "\"auto\" or an integer"),
    ('{"knobs": {"loop0.buffers": 3}}', "menu", "one of 1..2"),
    ('{"knobs": {"loop0.buffers": true}}', "menu", "one of 1..2"),
    ('{"knobs": {"expr.store_y": "max(xt,\\n 0.0)"}}', "menu", "one line"),
    ('{"knobs": {"split0.cores": 49}}', "menu", "in 1..48"),
    ('{"knobs": {"loop0.rows": 4}}', "menu", "unknown knob 'loop0.rows'"),  # relu's tiles are flat
    ('{"knobs": {"split0.cores": 0}}', "menu", "in 1..48"),
    ('{"knobs": {"split0.cores": "AIV"}}', "menu", "\"all\" or an integer"),
])
def test_bad_answers_are_rejected_with_the_reason(answer, check, words):
    _, menu, _ = _menu(RELU)
    with pytest.raises(P.ProposalError) as e:
        P.parse(answer, menu)
    assert e.value.check == check and words in e.value.reason


def test_answer_in_a_fence_with_prose_parses():
    _, menu, _ = _menu(RELU)
    text = 'Sure.\n```json\n{"knobs": {"loop0.size": 4096, "loop0.buffers": 2}, "why": "x"}\n```\n'
    assert P.parse(text, menu).settings == {"loop0.size": 4096, "loop0.buffers": 2}


def test_grammar_admits_schema_shaped_answers_only():
    _, menu, _ = _menu(GELU, {"T": "f32"})
    g = P.grammar(menu)
    parser = Lark(g, parser="earley", lexer="dynamic")
    ok = ['{"knobs": {"loop0.size": 4096, "loop0.buffers": 2, "split0.cores": "all"}, "why": "fewer tiles"}',
          '{"knobs": {"loop0.size": "auto", "loop0.buffers": 1, "split0.cores": 24, "expr.store_y": "xt * 0.5"}, '
          '"why": ""}',
          '{"knobs": {}, "why": "nothing is faster"}']
    for text in ok:
        parser.parse(text)
        P.parse(text, menu)  # and the checker reads what the grammar admits
    for bad in ['{"knobs": {"loop0.buffers": 2}, "why": ""}', '{"knobs": {"loop0.size": 4096, "loop0.buffers": 3, '
                '"split0.cores": 4}, "why": ""}', '{"knobs": {"loop0.size": 4096, "loop0.buffers": 2, "split0.cores": '
                '"AIV"}, "why": ""}', 'sure: {"knobs": {}, "why": ""}']:
        with pytest.raises(LarkError):
            parser.parse(bad)
    llguidance = pytest.importorskip("llguidance")
    assert llguidance.LLMatcher.validate_grammar(llguidance.LLMatcher.grammar_from_lark(g)) == ""


# ----------------------------------------------------------------------------- applying proposals


def test_unsafe_tile_is_rejected_by_the_constraint_checker():
    kernel, menu, _ = _menu(RELU)
    big = K.apply(kernel, menu, {"loop0.size": 23552})  # fits UB only with buffers=1
    with pytest.raises(DslError) as e:
        lower(big, source_name=RELU.name)
    assert e.value.codes == ["UB-CAPACITY"]
    lower(K.apply(kernel, menu, {"loop0.size": 23552, "loop0.buffers": 1}), source_name=RELU.name)


def test_unsafe_base_block_is_rejected_by_the_constraint_checker():
    kernel, menu, _ = _menu(MATMUL)
    with pytest.raises(DslError) as e:
        lower(K.apply(kernel, menu, {"mm.base_m": 256, "mm.base_k": 256}), source_name=MATMUL.name)
    assert "L0A-CAPACITY" in e.value.codes


@pytest.mark.parametrize("path, shapes", [
    (RELU, {"N": 1 << 24}),                                          # flat tiles
    (SOFTMAX, {"B": 4096, "D": 1024}),                               # row tiles
    (REPO / "examples/reduce/max_dim1.adsl", {"A": 512, "R": 64, "C": 1024}),  # boxes
    (REPO / "examples/pooling/avg_pool2d.adsl", {"N": 64, "C": 64, "H": 64, "W": 64, "OH": 21, "OW": 21}),  # windows
])
def test_core_split_caps_the_launch(path, shapes):
    """`split0.cores` is `split(..., cores=K)`: the host tiling launches at most K blocks (every tiling kind)."""
    from npu_harness.tiling_probe import launch_blocks

    kernel, menu, project = _menu(path, {"T": "f32"})
    scalars = {p.name: p.default for p in kernel.scalars}
    capped, _ = lower(K.apply(kernel, menu, {"split0.cores": 5}), source_name=path.name)
    assert "cores=5" in capped.files[f"{kernel.name}_tiling.h"]
    assert launch_blocks(project, "ascend910b1", shapes, scalars, 48) == 48
    assert launch_blocks(capped, "ascend910b1", shapes, scalars, 48) == 5
    assert launch_blocks(capped, "ascend910b1", shapes, scalars, 3) == 3  # a smaller device: its cores


def test_rows_knob_caps_rows_per_tile():
    """`loop0.rows` is `tile(blk, size=N)` on a row loop: the host tiling takes at most N rows per tile
    (it was silently ignored before); `auto` keeps the rule's choice; out-of-range caps are off the menu."""
    from npu_harness.tiling_probe import run_tiling

    kernel, menu, project = _menu(SOFTMAX, {"T": "f32"})
    shapes = {"B": 4096, "D": 1024}
    assert run_tiling(project, "ascend910b1", shapes, {}, 48, ("tileLength",))["tileLength"] > 3
    capped, _ = lower(K.apply(kernel, menu, {"loop0.rows": 3}), source_name=SOFTMAX.name)
    got = run_tiling(capped, "ascend910b1", shapes, {}, 48, ("tileLength", "blockLength"))
    assert (got["blocks"], got["tileLength"], got["blockLength"]) == (48, 3, 86)
    # a cap above what fits changes nothing: the host still sizes tiles to UB and balance
    wide, _ = lower(K.apply(kernel, menu, {"loop0.rows": 4095}), source_name=SOFTMAX.name)
    assert run_tiling(wide, "ascend910b1", shapes, {}, 48, ("tileLength",)) == \
        run_tiling(project, "ascend910b1", shapes, {}, 48, ("tileLength",))
    for bad in (0, 4096, "3"):
        with pytest.raises(P.ProposalError, match="loop0.rows must be"):
            P.parse(json.dumps({"knobs": {"loop0.rows": bad}}), menu)


def test_rewrite_is_type_checked_and_keeps_the_users_lines():
    kernel, menu, project = _menu(GELU, {"T": "f32"})
    with pytest.raises(K.ApplyError, match="UNDEFINED-NAME"):
        K.apply(kernel, menu, {"expr.store_y": "xt * sigmoid(1.6 * z)"})
    with pytest.raises(K.ApplyError, match="SYNTAX"):
        K.apply(kernel, menu, {"expr.store_y": "xt * * 2"})
    new = K.apply(kernel, menu, {"expr.store_y": "xt * sigmoid(1.5957691216057308 * (xt + 0.044715 * xt * xt * xt))"})
    out, _ = lower(new, source_name=GELU.name)
    cpp = out.files["gelu_kernel.cpp"]
    assert "gelu.adsl:10" in cpp and "<proposal" not in cpp
    assert cpp != project.files["gelu_kernel.cpp"]


def test_cache_key_is_per_kernel_and_target(tmp_path):
    kernel, _, _ = _menu(RELU)
    cache = DecisionCache(tmp_path)
    cache.put(kernel, "ascend910b1", "schedule", {"knobs": {"loop0.size": 4096}})
    assert cache.get(kernel, "ascend910b1", "schedule") == {"knobs": {"loop0.size": 4096}}
    assert cache.get(kernel, "ascend910b4", "schedule") is None
    f16 = load_file(RELU)[0].instantiate({"T": "f16"})
    assert cache.get(f16, "ascend910b1", "schedule") is None
    assert get_target("ascend910b4")  # the other target exists


# ----------------------------------------------------------------------------- end to end (emulator, cost model)


def _lower_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelgen.cli_lower", *args], check=False, capture_output=True,
                          text=True, timeout=timeout, cwd=REPO)


def _replay(path: Path, kernel: str, answers: list[str]) -> Path:
    path.write_text("".join(json.dumps({"task": f"{kernel}/schedule", "round": i, "text": a}) + "\n"
                            for i, a in enumerate(answers)))
    return path


def _files(d: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(d.iterdir()) if p.is_file()}


@pytest.mark.slow
def test_recorded_answers_each_rejected_for_its_reason(tmp_path):
    answers = [
        "Bigger tiles are better.",                                            # malformed
        json.dumps({"knobs": {"loop0.size": 100}}),                            # off the menu
        json.dumps({"knobs": {"loop0.size": 23552}, "why": "one tile"}),        # unsafe: past UB
        json.dumps({"knobs": {"loop0.buffers": 1}, "why": "fewer buffers"}),  # slower (pipes serialise)
        json.dumps({"knobs": {"expr.store_y": "max(xt, 0.001)"}, "why": "cheaper"}),  # wrong values
        json.dumps({"knobs": {}, "why": "done"}),
    ]
    replay = _replay(tmp_path / "answers.jsonl", "relu", answers)
    cache = tmp_path / "cache"
    out = tmp_path / "assisted"
    r = _lower_cli(str(RELU), "-o", str(out), "--assist", "replay", "--replay", str(replay), "--assist-rounds", "8",
                   "--assist-cache", str(cache), "--assist-prompt", str(tmp_path / "prompts"))
    assert r.returncode == 0, r.stderr
    record = json.loads((out / "manifest.json").read_text())["assist"][0]
    verdicts = [(p["verdict"], p.get("failed")) for p in record["proposals"]]
    assert verdicts == [("rejected", "json"), ("rejected", "menu"), ("rejected", "constraints"),
                        ("rejected", "faster"), ("rejected", "emulator"), ("stop", None)]
    reasons = [p.get("reason", "") for p in record["proposals"]]
    assert "UB-CAPACITY" in reasons[2]
    assert "not faster" in reasons[3] and record["proposals"][3]["estimate_us"] > record["estimate_before_us"]
    assert "y: MISMATCH" in reasons[4]
    assert record["knobs"] == {} and record["model"] == "replay:answers.jsonl"
    assert record["estimate_before_us"] == record["estimate_after_us"]
    # each rejection reaches the next prompt
    last = (tmp_path / "prompts/relu.schedule.r5.prompt.md").read_text()
    assert "rejected (constraints): error[UB-CAPACITY]" in last and "rejected (emulator): y: MISMATCH" in last
    # nothing was faster: the code is the rule-based code; only the manifest records the decision
    plain = tmp_path / "plain"
    assert _lower_cli(str(RELU), "-o", str(plain)).returncode == 0
    a, b = _files(out), _files(plain)
    assert {k: v for k, v in a.items() if k != "manifest.json"} == {k: v for k, v in b.items() if k != "manifest.json"}
    assert "assist" not in json.loads(b["manifest.json"])
    off = tmp_path / "off"
    assert _lower_cli(str(RELU), "-o", str(off), "--assist", "off", "--assist-cache", str(cache)).returncode == 0
    assert _files(off) == b
    # the decision is cached: a rebuild consults no model (the replay file is gone) and is byte-identical
    replay.unlink()
    again = tmp_path / "again"
    r = _lower_cli(str(RELU), "-o", str(again), "--assist", "replay", "--replay", str(replay),
                   "--assist-cache", str(cache))
    assert r.returncode == 0, r.stderr
    assert "from the decision cache" in r.stdout and _files(again) == a


@pytest.mark.slow
def test_faster_base_block_is_accepted_cached_and_rebuilt_without_a_model(tmp_path):
    prompts, answers_dir, cache = tmp_path / "prompts", tmp_path / "answers", tmp_path / "cache"
    args = [str(MATMUL), "--assist-prompt", str(prompts), "--assist-answers", str(answers_dir),
            "--assist-cache", str(cache), "--assist-rounds", "3"]
    # file mode, no answer yet: the prompt is written, the rule-based schedule stays, nothing is cached
    r = _lower_cli(*args, "-o", str(tmp_path / "o0"))
    assert r.returncode == 0, r.stderr
    assert "waiting for the answer to round 0" in r.stdout
    prompt = (prompts / "matmul_rect.schedule.r0.prompt.md").read_text()
    for part in ("## Its lowering (IR after schedule_stages)", "slowest core: MTE2", "bottleneck", "L0A",
                 '"mm.base_m"', "M=256"):
        assert part in prompt, part
    assert not list(cache.glob("*.json"))
    answers_dir.mkdir()
    (answers_dir / "matmul_rect.schedule.r0.json").write_text(json.dumps(
        {"knobs": {"mm.base_m": 256, "mm.base_k": 256}, "why": "big blocks"}))  # L0A overflow
    (answers_dir / "matmul_rect.schedule.r1.json").write_text(json.dumps(
        {"knobs": {"mm.base_m": 64, "mm.base_n": 128}, "why": "more output blocks: more cores busy"}))
    (answers_dir / "matmul_rect.schedule.r2.json").write_text('{"knobs": {}, "why": "done"}')
    out = tmp_path / "o1"
    r = _lower_cli(*args, "-o", str(out), "--validate", "sim")
    assert r.returncode == 0, r.stderr + r.stdout
    record = json.loads((out / "manifest.json").read_text())["assist"][0]
    assert [(p["verdict"], p.get("failed")) for p in record["proposals"]] == [
        ("rejected", "constraints"), ("accepted", None), ("stop", None)]
    assert "L0A-CAPACITY" in record["proposals"][0]["reason"]
    assert record["proposals"][1]["checks"] == ["json", "menu", "change", "constraints", "emulator", "faster"]
    assert record["knobs"] == {"mm.base_m": 64, "mm.base_n": 128}
    assert record["estimate_after_us"] < record["estimate_before_us"]
    assert "sim: PASS" in r.stdout
    # the next round's prompt shows the accepted schedule as the one to beat
    assert "accepted: estimated" in (prompts / "matmul_rect.schedule.r2.prompt.md").read_text()
    # rebuild from the cache, without answers: identical files
    rebuilt = tmp_path / "o2"
    r = _lower_cli(str(MATMUL), "-o", str(rebuilt), "--assist", "cache", "--assist-cache", str(cache))
    assert r.returncode == 0, r.stderr
    assert _files(rebuilt) == _files(out)


@pytest.mark.slow
def test_capped_rows_and_cores_validate_in_the_emulator(tmp_path):
    """Tiles of at most 3 rows on at most 5 cores (tails in every core's share) against the PyTorch reference."""
    kernel, menu, _ = _menu(SOFTMAX, {"T": "f32"})
    chosen = K.apply(kernel, menu, {"loop0.rows": 3, "split0.cores": 5})
    (tmp_path / "softmax.adsl").write_text(printer.kernel(chosen))
    (tmp_path / "softmax.py").write_text(SOFTMAX.with_suffix(".py").read_text())
    r = _lower_cli(str(tmp_path / "softmax.adsl"), "-o", str(tmp_path / "out"), "--validate", "sim")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "sim: PASS" in r.stdout
    tiling = (tmp_path / "out/softmax_tiling.h").read_text()
    assert "at most 3 rows per tile" in tiling and "cores=5" in tiling


# ----------------------------------------------------------------------------- chunk lengths (rows longer than UB)

#: softmax f32 on 910B1: pass 0 (online max and sum) fits chunks of 15360 elements, pass 1 (exp, divide, store)
#: 9216; every pass fits 15616 with buffers=1.
SOFTMAX_LONG = ("--set", "batch_size=48", "--set", "dim=16384")


def _chunk_text(chunk: str) -> str:
    return SOFTMAX.read_text().replace("size=auto, buffers=2)", f"size=auto, buffers=2, {chunk})")


def test_chunk_knob_is_offered_where_rows_can_run_in_chunks():
    _, menu, _ = _menu(SOFTMAX, {"T": "f32"})
    chunk = next(k for k in menu if k.key == "loop0.chunk")
    assert (chunk.kind, chunk.current, chunk.granule, chunk.max_size) == ("chunk", "auto", 256, 15616)
    assert "it chose 15360, 9216" in chunk.doc and "up to 9216 with buffers=2, 15616 with buffers=1" in chunk.doc
    _, flat, _ = _menu(RELU)
    assert not any(k.kind == "chunk" for k in flat)
    # a row loop without a chunked variant (a gather needs the whole row): no chunk knob
    _, gather, _ = _menu(REPO / "examples/loss/cross_entropy.adsl", {"T": "f32"})
    assert any(k.kind == "rows" for k in gather) and not any(k.kind == "chunk" for k in gather)


@pytest.mark.parametrize("value, words", [
    ("4k", "loop0.chunk must be \"auto\" or an integer, not '4k'"),         # malformed
    (1000, "loop0.chunk=1000 is not a positive multiple of 256 elements"),  # unaligned
    (0, "not a positive multiple of 256"),
    (16384, "exceeds 15616, the largest chunk of every pass that fits UB even with buffers=1"),  # past UB
])
def test_bad_chunk_lengths_are_off_the_menu(value, words):
    _, menu, _ = _menu(SOFTMAX, {"T": "f32"})
    with pytest.raises(P.ProposalError) as e:
        P.parse(json.dumps({"knobs": {"loop0.chunk": value}}), menu)
    assert e.value.check == "menu" and words in e.value.reason


def test_chunk_past_a_pass_is_rejected_by_the_constraint_checker():
    """On the menu (it fits pass 0, and every pass with buffers=1), but not pass 1 double-buffered."""
    kernel, menu, _ = _menu(SOFTMAX, {"T": "f32"})
    with pytest.raises(DslError) as e:
        lower(K.apply(kernel, menu, {"loop0.chunk": 12288}), source_name=SOFTMAX.name)
    assert e.value.codes == ["UB-CAPACITY"]
    d = e.value.diagnostics[0]
    assert "chunk=12288: pass 1's column chunks need" in d.message and "use chunk <= 9216" in d.hint
    lower(K.apply(kernel, menu, {"loop0.chunk": 12288, "loop0.buffers": 1}), source_name=SOFTMAX.name)


def test_chunk_is_every_pass_chunk_length_and_round_trips_as_dsl():
    from ascend_dsl import ir, parse_text

    kernel, menu, project = _menu(SOFTMAX, {"T": "f32"})
    chosen = K.apply(kernel, menu, {"loop0.chunk": 4096})
    assert "for r in tile(blk, size=auto, buffers=2, chunk=4096):" in printer.kernel(chosen)
    again = parse_text(printer.kernel(chosen), "s.adsl")[0].instantiate({})
    assert printer.kernel(again) == printer.kernel(chosen)
    assert next(s for s in ir.walk(again.body) if isinstance(s, ir.TileLoop)).chunk == 4096
    out, ctx = lower(chosen, source_name=SOFTMAX.name)
    row = next(s for s in ir.walk(ctx.lowered.body) if isinstance(s, ir.TileLoop))
    assert [p.max_chunk for p in row.shape.chunked.passes] == [4096, 4096]
    tiling = out.files["softmax_tiling.h"]
    assert "t->chunkLength = shareChunk(4096);" in tiling and "t->chunkLength1 = shareChunk(4096);" in tiling
    assert "t->chunkLength = shareChunk(15360);" in project.files["softmax_tiling.h"]
    # the kernel is the same code: its chunk buffers are sized from the tiling's chunk lengths at run time
    assert out.files["softmax_kernel.cpp"] == project.files["softmax_kernel.cpp"]


@pytest.mark.parametrize("text, code, words", [
    (_chunk_text("chunk=1000"), "TILE-ALIGN", "chunk=1000 is not a multiple of 256 elements"),
    (_chunk_text("chunk=0"), "ARGS", "chunk= takes a positive integer"),
    (RELU.read_text().replace("buffers=2)", "buffers=2, chunk=4096)"), "ARGS", "chunk= applies to row tiles"),
])
def test_chunk_in_dsl_is_checked(text, code, words):
    from ascend_dsl import parse_text

    with pytest.raises(DslError) as e:
        lower(parse_text(text, "k.adsl")[0].instantiate({"T": "f32"}), source_name="k.adsl")
    assert e.value.codes == [code] and words in e.value.diagnostics[0].message


def test_chunk_on_rows_that_cannot_run_in_chunks_names_why():
    from ascend_dsl import parse_text

    src = (REPO / "examples/loss/cross_entropy.adsl").read_text()
    assert "buffers=2)" in src
    text = src.replace("buffers=2)", "buffers=2, chunk=4096)", 1)
    with pytest.raises(DslError) as e:
        lower(parse_text(text, "ce.adsl")[0].instantiate({"T": "f32"}), source_name="ce.adsl")
    assert e.value.codes == ["UNSUPPORTED"]
    assert "chunk=4096, but this loop cannot run in column chunks: 'gather' needs the whole row in UB" in \
        e.value.diagnostics[0].message


@pytest.mark.slow
def test_recorded_chunk_answers_rejected_for_their_reasons_and_a_faster_one_accepted(tmp_path):
    """softmax at 48 rows of 16384 f32 (one row per core, longer than UB): the rule streams each row in 2
    chunks per pass; 4 chunks of 4096 overlap copy-in, compute and copy-out better in the cost model."""
    answers = [
        json.dumps({"knobs": {"loop0.chunk": "4k"}}),                                  # malformed
        json.dumps({"knobs": {"loop0.chunk": 1000}}),                                  # unaligned
        json.dumps({"knobs": {"loop0.chunk": 12288}, "why": "fewer chunks"}),          # past pass 1's UB
        json.dumps({"knobs": {"loop0.chunk": 2048}, "why": "more overlap"}),           # slower: latencies
        json.dumps({"knobs": {"loop0.chunk": 4096}, "why": "4 chunks per row overlap"}),  # faster
        json.dumps({"knobs": {}, "why": "done"}),
    ]
    replay = _replay(tmp_path / "answers.jsonl", "softmax", answers)
    out, cache = tmp_path / "assisted", tmp_path / "cache"
    r = _lower_cli(str(SOFTMAX), "-o", str(out), *SOFTMAX_LONG, "--assist", "replay", "--replay", str(replay),
                   "--assist-rounds", "8", "--assist-cache", str(cache), "--assist-prompt", str(tmp_path / "p"),
                   "--validate", "sim")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "sim: PASS" in r.stdout
    record = json.loads((out / "manifest.json").read_text())["assist"][0]
    assert [(p["verdict"], p.get("failed")) for p in record["proposals"]] == [
        ("rejected", "menu"), ("rejected", "menu"), ("rejected", "constraints"), ("rejected", "faster"),
        ("accepted", None), ("stop", None)]
    reasons = [p.get("reason", "") for p in record["proposals"]]
    assert "must be \"auto\" or an integer" in reasons[0] and "not a positive multiple of 256" in reasons[1]
    assert "error[UB-CAPACITY]: chunk=12288: pass 1's column chunks need" in reasons[2]
    assert "not faster" in reasons[3] and record["proposals"][3]["estimate_us"] > record["estimate_before_us"]
    assert record["knobs"] == {"loop0.chunk": 4096}
    assert record["estimate_after_us"] < record["estimate_before_us"] * 0.99
    assert "shareChunk(4096)" in (out / "softmax_tiling.h").read_text()
    prompt = (tmp_path / "p/softmax.schedule.r5.prompt.md").read_text()
    assert '"loop0.chunk"' in prompt and "rejected (constraints): error[UB-CAPACITY]" in prompt
    # a rebuild from the cache needs no model and is byte-identical
    replay.unlink()
    again = tmp_path / "again"
    r = _lower_cli(str(SOFTMAX), "-o", str(again), *SOFTMAX_LONG, "--assist", "cache", "--assist-cache", str(cache))
    assert r.returncode == 0, r.stderr
    assert _files(again) == _files(out)


def test_grammar_admits_chunk_lengths():
    _, menu, _ = _menu(SOFTMAX, {"T": "f32"})
    parser = Lark(P.grammar(menu), parser="earley", lexer="dynamic")
    for chunk in ('"auto"', "4096"):
        text = (f'{{"knobs": {{"loop0.rows": "auto", "loop0.chunk": {chunk}, "loop0.buffers": 2, '
                f'"split0.cores": "all"}}, "why": ""}}')
        parser.parse(text)
        P.parse(text, menu)
    with pytest.raises(LarkError):
        parser.parse('{"knobs": {"loop0.rows": "auto", "loop0.chunk": "4k", "loop0.buffers": 2, '
                     '"split0.cores": "all"}, "why": ""}')


@pytest.mark.slow
def test_small_chunks_with_tails_and_row_groups_validate_in_the_emulator(tmp_path):
    """chunk=1024 on 4 rows of 100003 f32 (fewer rows than cores: each row's columns over a group of cores,
    odd shares, a tail chunk in every share) against the PyTorch reference."""
    kernel, menu, _ = _menu(SOFTMAX, {"T": "f32"})
    (tmp_path / "softmax.adsl").write_text(printer.kernel(K.apply(kernel, menu, {"loop0.chunk": 1024})))
    (tmp_path / "softmax.py").write_text(SOFTMAX.with_suffix(".py").read_text())
    r = _lower_cli(str(tmp_path / "softmax.adsl"), "-o", str(tmp_path / "out"), "--validate", "sim",
                   "--set", "batch_size=4", "--set", "dim=100003")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "sim: PASS" in r.stdout
    assert "t->chunkLength = shareChunk(1024);" in (tmp_path / "out/softmax_tiling.h").read_text()


# ----------------------------------------------------------------------------- fusing split loops

TWO_MAPS = REPO / "tests/assist/two_maps.adsl"  # y = relu(x) and z = sigmoid(x) in two split loops
BATCH_NORM = REPO / "examples/normalization/batch_norm_train.adsl"


def test_fuse_knob_is_offered_for_adjacent_vector_split_loops():
    _, menu, _ = _menu(TWO_MAPS, {"T": "f32"})
    assert [(k.key, k.current) for k in menu if k.kind == "fuse"] == [("fuse.0", False)]
    # a scalar statement between split loops (frobenius_norm's inv = rsqrt(sumsq)) makes them not adjacent;
    # batch_norm_train's `ss = zeros(C)` separates loops 0 and 1, not 1 and 2; cube stages are not offered
    assert not any(k.kind == "fuse" for k in _menu(REPO / "examples/normalization/frobenius_norm.adsl")[1])
    assert [k.key for k in _menu(BATCH_NORM, {"T": "f32"})[1] if k.kind == "fuse"] == ["fuse.1"]
    assert not any(k.kind == "fuse" for k in _menu(REPO / "examples/attention/sdpa.adsl")[1])


def test_fusion_runs_both_bodies_in_one_tile_loop_and_shares_the_load():
    kernel, menu, project = _menu(TWO_MAPS, {"T": "f32"})
    fused = K.apply(kernel, menu, {"fuse.0": True})
    text = printer.kernel(fused)
    assert text.count("in split(") == 1 and text.count("in tile(") == 1
    assert "store(y[t], relu(load(x[t])))\n            store(z[t], sigmoid(load(x[t])))" in text
    out, _ = lower(fused, source_name=TWO_MAPS.name)
    assert out.files["two_maps_kernel.cpp"].count("CopyGmToUb(xLocal") == 1  # one copy-in of x per tile
    assert project.files["two_maps_kernel.cpp"].count("CopyGmToUb(xLocal") == 2


def test_illegal_fusions_are_rejected_with_the_dependence(tmp_path):
    from ascend_dsl import parse_text

    kernel, menu, _ = _menu(BATCH_NORM, {"T": "f32"})
    with pytest.raises(K.ApplyError, match="fuse.1: split loop 2 reads 'ss', which split loop 1 folds across cores"):
        K.apply(kernel, menu, {"fuse.1": True})
    # both loops store y (a tensor is loaded or stored, never both): fused, the order of the stores could change
    chained = TWO_MAPS.read_text().replace("store(z[t]", "store(y[t]")
    k2 = parse_text(chained, "c.adsl")[0].instantiate({"T": "f32"})
    _, ctx = lower(k2, source_name="c.adsl")
    m2 = K.menu(k2, ctx.lowered, ctx.target, "c.adsl")
    with pytest.raises(K.ApplyError, match="both split loops access 'y', which one of them stores"):
        K.apply(k2, m2, {"fuse.0": True})
    kernel, menu, _ = _menu(TWO_MAPS, {"T": "f32"})
    with pytest.raises(K.ApplyError, match=r"different settings \(size, buffers, chunk: \(4096, 2, None\)"):
        K.apply(kernel, menu, {"fuse.0": True, "loop0.size": 4096})
    for bad in (1, "true", None):
        with pytest.raises(P.ProposalError, match="fuse.0 must be true or false"):
            P.parse(json.dumps({"knobs": {"fuse.0": bad}}), menu)
    parser = Lark(P.grammar(menu), parser="earley", lexer="dynamic")
    parser.parse('{"knobs": {"loop0.size": "auto", "loop0.buffers": 2, "loop1.size": "auto", "loop1.buffers": 2, '
                 '"split0.cores": "all", "split1.cores": "all", "fuse.0": true}, "why": ""}')


@pytest.mark.slow
def test_recorded_fusion_answers_rejected_for_their_reasons_and_the_fusion_accepted(tmp_path):
    answers = [
        json.dumps({"knobs": {"fuse.0": 1}}),                                      # malformed
        json.dumps({"knobs": {"fuse.0": True, "loop0.size": 4096}, "why": "x"}),   # illegal: tile settings differ
        json.dumps({"knobs": {"fuse.0": True}, "why": "x is read once per tile"}),  # faster
        json.dumps({"knobs": {}, "why": "done"}),
    ]
    replay = _replay(tmp_path / "answers.jsonl", "two_maps", answers)
    out = tmp_path / "assisted"
    r = _lower_cli(str(TWO_MAPS), "-o", str(out), "--assist", "replay", "--replay", str(replay), "--assist-rounds",
                   "6", "--assist-cache", str(tmp_path / "cache"), "--validate", "sim")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "sim: PASS" in r.stdout
    record = json.loads((out / "manifest.json").read_text())["assist"][0]
    assert [(p["verdict"], p.get("failed")) for p in record["proposals"]] == [
        ("rejected", "menu"), ("rejected", "constraints"), ("accepted", None), ("stop", None)]
    assert "fuse.0: their tile loops have different settings" in record["proposals"][1]["reason"]
    assert record["knobs"] == {"fuse.0": True}
    assert record["estimate_after_us"] < record["estimate_before_us"] * 0.95
    assert (out / "two_maps_kernel.cpp").read_text().count("CopyGmToUb(xLocal") == 1


@pytest.mark.slow
def test_fused_row_loops_rename_clashing_values_and_validate_in_the_emulator(tmp_path):
    """Two row loops with different tile variables that both assign `e`: the second body reads its own
    `e_2` over the first loop's rows, and the fused kernel matches PyTorch (tails: 37 rows of 1000)."""
    import torch

    from ascend_dsl import parse_text
    from npu_harness.task import TaskRun
    from npu_harness.validate import validate_sim

    text = '''@kernel(T=[f32])
def rows2(x: Tensor[T, "B, D"], y: Tensor[T, "B, D"], z: Tensor[T, "B, D"]):
    for blk in split(B, cores=AIV):
        for r in tile(blk, size=auto, buffers=2):
            e = exp(load(x[r, :]))
            store(y[r, :], e / sum(e, axis=1))
    for blk2 in split(B, cores=AIV):
        for q in tile(blk2, size=auto, buffers=2):
            e = load(x[q, :]) * 2.0
            store(z[q, :], e - max(e, axis=1))
'''
    kernel = parse_text(text, "rows2.adsl")[0].instantiate({"T": "f32"})
    _, ctx = lower(kernel, source_name="rows2.adsl")
    fused = K.apply(kernel, K.menu(kernel, ctx.lowered, ctx.target, "rows2.adsl"), {"fuse.0": True})
    assert ("store(y[r, :], e / sum(e, axis=1))\n            e_2 = load(x[r, :]) * 2.0\n"
            "            store(z[r, :], e_2 - max(e_2, axis=1))") in printer.kernel(fused)
    project, fctx = lower(fused, source_name="rows2.adsl")
    torch.manual_seed(0)
    x = torch.randn(37, 1000)
    e = torch.exp(x)
    run = TaskRun([x], [e / e.sum(1, keepdim=True), 2 * x - (2 * x).max(1, keepdim=True).values])
    res = validate_sim(fused, fctx.lowered, project, fctx, run, work_dir=tmp_path)
    assert res.ok, "\n".join([res.summary(), *(c.describe() for c in res.comparisons), res.detail])
