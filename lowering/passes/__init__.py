"""One pass per module; each exposes `run(kernel, ctx) -> kernel`."""
