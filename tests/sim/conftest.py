from __future__ import annotations

import sys
from pathlib import Path

# Make `npu_harness` importable when pytest runs from anywhere in the checkout.
_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))
