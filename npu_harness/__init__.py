"""Validation layer: task loading, binding, the emulator backend and result comparison."""
