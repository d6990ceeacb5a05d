"""OmniLearn analysis: read run folders written by `omnilearn sim` and `omnilearn emulate` (one schema),
turn them into the tables and figures a paper needs, and render a self-contained HTML report."""

from .runs import Run, load_run, load_sweep, is_run_dir, is_sweep_dir  # noqa: F401

__all__ = ["Run", "load_run", "load_sweep", "is_run_dir", "is_sweep_dir"]
