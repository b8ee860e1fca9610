"""Cost model: emulator counters -> estimated kernel time per target (an ESTIMATE; docs/cost_model.md)."""

from __future__ import annotations

from .model import DISCLAIMER, CostParams, Estimate, available_targets, estimate, load_params, target_for

__all__ = ["DISCLAIMER", "CostParams", "Estimate", "available_targets", "estimate", "load_params", "target_for"]
