"""Hardware targets, described as data (one TOML file per chip family, sources cited there)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ascend_dsl.diagnostics import DslError
from ascend_dsl.diagnostics import ErrorCode as E
from ascend_dsl.dtypes import BY_NAME, DType


@dataclass(frozen=True)
class Target:
    name: str
    soc_version: str
    soc_family: str
    npu_arch: int
    ub_bytes: int
    ub_reserved_bytes: int
    l1_bytes: int
    l0a_bytes: int
    l0b_bytes: int
    l0c_bytes: int
    has_datacopypad: bool
    dtypes: frozenset[DType]
    max_buffers: int
    aic: int
    aiv: int

    @property
    def ub_budget(self) -> int:
        """UB bytes a kernel's own buffers may use (the top is reserved for API scratch)."""
        return self.ub_bytes - self.ub_reserved_bytes

    def cores(self, kind: str) -> int:
        return self.aiv if kind == "AIV" else self.aic


@cache
def all_targets() -> dict[str, Target]:
    out: dict[str, Target] = {}
    for f in sorted(resources.files(__name__).iterdir(), key=lambda p: p.name):
        if not f.name.endswith(".toml"):
            continue
        data = tomllib.loads(f.read_text())
        common = data.pop("common")
        for name, specific in data.items():
            fields = {**common, **specific}
            fields["dtypes"] = frozenset(BY_NAME[d] for d in fields["dtypes"])
            out[name] = Target(name=name, **fields)
    return out


DEFAULT_TARGET = "ascend910b1"


def get_target(name: str) -> Target:
    targets = all_targets()
    if name not in targets:
        raise DslError.at(E.TARGET, f"unknown target '{name}'", None, f"targets: {', '.join(sorted(targets))}")
    return targets[name]
