"""Matmul epilogues that read an [N] row (`load(v[:])`: a second bias, KernelBench's `x + self.add_value`) or one
value per row (`s[blk]` of an [M] / [Bt, M] tensor: loaded, or stored from a row reduction). The front end's located
errors, the base block the plan picks, and the emitted kernels in the emulator against the interpreter, all in one
emulator binary (npu_harness.fuzz.runner). The gallery kernels using them (examples/fuse/linear_logsumexp,
linear_add_swish_tanh_gelu_hardtanh, batched_matmul_row_max, ...) run against PyTorch in tests/test_gallery_e2e.py."""

from __future__ import annotations

import random

import pytest

import ascend_dsl
from ascend_dsl import ir
from ascend_dsl.diagnostics import DslError

HEAD = '''from ascend_dsl import kernel, Tensor, f32, f16


@kernel(T=[f16])
'''


def _kernel(params: str, body: str, batch: bool = False) -> str:
    lead = "Bt, " if batch else ""
    return (HEAD + f'def k(a: Tensor[T, "{lead}M, K"], b: Tensor[T, "{lead}K, N"], {params}):\n'
            f"    for blk in split({lead}M, N, cores=AIC):\n"
            "        with cube:\n"
            "            acc = matmul(a[blk], b[blk])\n"
            "        with vector:\n" + "".join(f"            {line}\n" for line in body.splitlines()))


def _error(text: str) -> DslError:
    with pytest.raises(DslError) as e:
        ascend_dsl.parse_text(text, file="k.adsl")[0].instantiate()
    return e.value


@pytest.mark.parametrize("params,body,code,message,col", [
    # a row over the output's columns must be [N]
    ('v: Tensor[f32, "M"], c: Tensor[f32, "M, N"]', "store(c[blk], acc + load(v[:]))", "INDEX",
     "'v[:]' in a `with vector:` block is a row over the output's columns: it needs a [N] tensor; 'v' has shape ['M']",
     38),
    # a row vector is shared by every block: it cannot be stored
    ('c: Tensor[f32, "M, N"], v: Tensor[f32, "N"]', "store(c[blk], acc)\nstore(v[:], max(acc, axis=1))", "INDEX",
     "'v[:]' is shared by every row tile and cannot be stored", 19),
    # one value per row takes a reduction, not whole rows
    ('s: Tensor[f32, "M"], c: Tensor[f32, "M, N"]', "store(c[blk], acc)\nstore(s[blk], acc * 2.0)", "TYPE",
     "storing whole rows into one value per row of 's'", 27),
    # a per-row tensor of another length is neither the output's shape nor its rows
    ('s: Tensor[f32, "N"], c: Tensor[f32, "M, N"]', "store(c[blk], acc * load(s[blk]))", "INDEX",
     "'s[blk]' needs a tensor shaped like the output [M, N]", 38),
])
def test_epilogue_row_forms_report_located_errors(params, body, code, message, col):
    e = _error(_kernel(params, body))
    assert e.codes == [code], e.render()
    assert message in e.render(), e.render()
    assert f":{col}" in e.render().splitlines()[1], e.render()


def _lowered(text: str) -> ir.Kernel:
    import lowering

    kernel = ascend_dsl.parse_text(text, file="k.adsl")[0].instantiate()
    _, ctx = lowering.lower(kernel, "ascend910b1", "k.adsl")
    return ctx.lowered


def test_a_per_row_store_makes_whole_row_base_blocks_and_a_per_row_load_does_not():
    stored = _lowered(_kernel('c: Tensor[f32, "M, N"], s: Tensor[f32, "M"]',
                              "store(c[blk], acc)\nstore(s[blk], sum(acc, axis=1))"))
    assert ir.cube_loop(stored).plan.whole_rows
    loaded = _lowered(_kernel('s: Tensor[f32, "M"], v: Tensor[f32, "N"], c: Tensor[f32, "M, N"]',
                              "store(c[blk], acc * load(s[blk]) + load(v[:]))"))
    assert not ir.cube_loop(loaded).plan.whole_rows


#: (label, tensors after a and b, epilogue, batched, sizes): odd M, N, K (base-block tails), N over several base
#: blocks (a row vector's columns start at the block's n0), batches (per-row values at bi * M + row).
EMULATED = [
    ("row_vector", 'v: Tensor[f32, "N"], c: Tensor[f32, "M, N"]', "store(c[blk], tanh(acc + load(v[:])))",
     False, {"M": 150, "N": 300, "K": 70}),
    ("row_vector_f16_out", 'v: Tensor[f32, "N"], c: Tensor[f16, "M, N"]',
     "store(c[blk], cast(acc * load(v[:]) - 1.0, f16))", False, {"M": 33, "N": 130, "K": 17}),
    ("per_row_scale_batched", 's: Tensor[f32, "Bt, M"], c: Tensor[f32, "Bt, M, N"]',
     "store(c[blk], acc * load(s[blk]))", True, {"Bt": 3, "M": 50, "N": 75, "K": 70}),
    ("row_sum_store", 'c: Tensor[f32, "M, N"], s: Tensor[f32, "M"]',
     "e = exp(acc - max(acc, axis=1))\nstore(c[blk], e / sum(e, axis=1))\nstore(s[blk], sum(acc, axis=1))",
     False, {"M": 300, "N": 75, "K": 70}),
    ("row_max_store_batched", 's: Tensor[f32, "Bt, M"]', "store(s[blk], max(acc, axis=1) + load(o[blk]))", True,
     {"Bt": 3, "M": 37, "N": 101, "K": 33}),
    ("logsumexp_with_row_vector", 'v: Tensor[f32, "N"], y: Tensor[f32, "M"]',
     "z = acc + load(v[:])\nm = max(z, axis=1)\nstore(y[blk], m + log(sum(exp(z - m), axis=1)))", False,
     {"M": 129, "N": 200, "K": 64}),
    # one output block and a long K: the host splits K over the cube cores, the vector cores add the slices first
    ("split_k", 'v: Tensor[f32, "N"], c: Tensor[f32, "M, N"], y: Tensor[f32, "M"]',
     "z = acc * load(v[:])\nstore(c[blk], z)\nstore(y[blk], mean(z, axis=1))", False, {"M": 40, "N": 64, "K": 2048}),
]


@pytest.mark.slow
def test_emulated_row_forms_match_the_interpreter():
    from npu_harness.fuzz.runner import Job, run_jobs

    jobs = []
    for label, params, body, batched, sizes in EMULATED:
        if "load(o[blk])" in body:
            params = f'o: Tensor[f32, "{"Bt, " if batched else ""}M"], {params}'
        jobs.append(Job(_kernel(params, body, batched).removeprefix(HEAD.splitlines()[0] + "\n"), sizes, seed=3,
                        label=label))
    outcomes = run_jobs(jobs)
    bad = [f"{o.job.label}: {o.status}\n{o.detail[:600]}\n{o.job.text}" for o in outcomes if o.status != "pass"]
    assert not bad, "\n".join(bad)


def test_fuzzer_draws_row_vectors_per_row_values_and_per_row_stores():
    """npu_harness/fuzz/gen.py `_cube`: a row vector, per-row values (batched too) and a per-row output after a
    row reduction; every program parses."""
    from npu_harness.fuzz.gen import _cube

    rng, seen = random.Random(5), set()
    for i in range(400):
        k, sizes = _cube(rng, f"k{i}", "ascend910b1")
        text = k.program("cube", sizes, i, "ascend910b1", 48).text()
        ascend_dsl.parse_text(text, file="g.adsl")[0].instantiate()
        seen |= {form for form, mark in (("row", "[:])"), ("per_row", "= load(s"), ("per_row_store", "store(o"),
                                         ("batched_per_row", '"Bt, M"]')) if mark in text}
    assert seen == {"row", "per_row", "per_row_store", "batched_per_row"}, seen


GEMM_CHAIN = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features{init}):
        super().__init__()
        self.{layer} = nn.Linear(in_features, out_features){extra}

    def forward(self, x):
        x = self.{layer}(x){body}
        return x
'''


@pytest.mark.parametrize("layer,init,extra,body,expected", [
    # KernelBench level 2 style: Gemm_Swish_Divide_Clamp_Tanh_Clamp
    ("gemm", ", divisor", "\n        self.divisor = divisor",
     "\n        x = x * torch.sigmoid(x)\n        x = x / self.divisor\n        x = torch.clamp(x, min=-1.0, max=1.0)"
     "\n        x = torch.tanh(x)", "linear_add_swish_tanh_gelu_hardtanh"),  # swish, tanh and a clamp (hardtanh)
    # a per-row logsumexp (keepdim), then LeakyReLU
    ("linear", "", "", "\n        x = torch.logsumexp(x, dim=1, keepdim=True)\n        x = torch.nn.functional.leaky_relu(x)",
     "linear_logsumexp"),
    # a second [N] parameter added, then Mish
    ("matmul", ", shape", "\n        self.add_value = nn.Parameter(torch.randn(shape))",
     "\n        x = x + self.add_value\n        x = torch.nn.functional.mish(x)", "linear_add_swish_tanh_gelu_hardtanh"),
])
def test_prompt_examples_for_gemm_chains_come_from_the_fuse_gallery(layer, init, extra, body, expected):
    """The prompt pack's examples for a GEMM epilogue chain (MultiKernelBench's fuse category) are fuse kernels."""
    from kernelgen import prompt

    task = GEMM_CHAIN.format(layer=layer, init=init, extra=extra, body=body)
    picked = prompt.gallery_examples("fuse", task_source=task)
    assert [e.category for e in picked] == ["fuse"] * 3, [f"{e.category}/{e.name}" for e in picked]
    assert expected in [e.name for e in picked], [e.name for e in picked]
