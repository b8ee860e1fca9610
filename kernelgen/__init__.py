"""kernelgen: LLM generation of ascend-dsl kernels from PyTorch task files, and their evaluation.

Layering: imports ascend_dsl, lowering and npu_harness; nothing imports kernelgen.
"""

from __future__ import annotations

__all__ = ["__version__"]
__version__ = "0.1.0"
