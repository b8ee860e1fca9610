"""Is there an NPU toolchain here? CANN and torch_npu are looked up at run time only: torch_npu is never
imported when a module is imported, and this project never installs it (a torch_npu wheel without CANN
breaks `import torch`). Each missing piece gives one line saying which, and how to install it."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

#: Where CANN is looked for after the environment variables set_env.sh exports (ascendc.md §7).
DEFAULT_CANN_DIRS = (Path("/usr/local/Ascend/ascend-toolkit/latest"), Path("/usr/local/Ascend/cann"),
                     Path.home() / "Ascend" / "ascend-toolkit" / "latest")
CANN_ENV = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_INSTALL_PATH")


class NpuUnavailable(Exception):
    """CANN or torch_npu (or an NPU) is missing; str() is the one-line reason with the fix."""


def _is_cann(path: Path) -> bool:
    return (path / "include" / "acl" / "acl.h").is_file() or any(
        (path / d / "tikcpp" / "ascendc_kernel_cmake").is_dir() for d in ("compiler", "tools"))


def cann_home() -> Path | None:
    for var in CANN_ENV:
        value = os.environ.get(var)
        if value and _is_cann(Path(value)):
            return Path(value)
    return next((d for d in DEFAULT_CANN_DIRS if _is_cann(d)), None)


def require_cann() -> Path:
    home = cann_home()
    if home is None:
        raise NpuUnavailable("CANN toolkit not found (ASCEND_HOME_PATH is unset and /usr/local/Ascend/ascend-toolkit/"
                             "latest does not exist): install CANN on the NPU host (https://www.hiascend.com/cann) "
                             "and run `source <CANN>/set_env.sh`")
    return home


def require_torch_npu():
    """The imported torch_npu module, once it is known to import and to see an NPU."""
    if importlib.util.find_spec("torch_npu") is None:
        import torch

        raise NpuUnavailable(f"torch_npu is not installed: on the NPU host, after CANN, `pip install torch-npu` "
                             f"(the release matching torch {torch.__version__.split('+')[0]}); never install it "
                             "without CANN")
    try:
        import torch_npu
    except Exception as e:  # noqa: BLE001 - any import failure means the same: not usable here
        raise NpuUnavailable(f"torch_npu is installed but does not import ({type(e).__name__}: {e}); run "
                             "`source <CANN>/set_env.sh` first") from None
    if not torch_npu.npu.is_available():
        raise NpuUnavailable("torch_npu sees no NPU device (check `npu-smi info` and the driver)")
    return torch_npu


def require_npu():
    """(CANN home, torch_npu), or NpuUnavailable naming the first missing piece."""
    return require_cann(), require_torch_npu()
