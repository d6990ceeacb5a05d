"""What the figures and report tables call things: one table of column -> (words, unit), the policies' legend
names, and the sweep coordinates' names. Every figure takes its axis labels from here, so a column is named the
same way everywhere and a new column needs one line here.

A label may hold "{clock}": "Simulated" for a simulator run, "Wall-clock" for a testbed run (omnilearn emulate),
whose times are measured seconds."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    words: str       # sentence case; "{clock}" as above
    unit: str = ""   # "" for a count or a name
    scale: float = 1.0  # the figure plots value * scale (a fraction 0..1 shown in %)


COLUMNS: dict[str, Column] = {
    # summary.json / sweep.csv
    "total_time_s": Column("{clock} training time", "s"),
    "mean_iteration_s": Column("Mean iteration time", "s"),
    "time_to_target_s": Column("{clock} time to the target accuracy", "s"),
    "final_accuracy": Column("Final test accuracy", "%", 100.0),
    "idle_fraction": Column("Idle share of the workers' time", "%", 100.0),
    "vs_uniform_pct": Column("Change against uniform", "%"),
    "vs_oracle_pct": Column("Gap to the oracle", "%"),
    "iterations": Column("Iterations"),
    "epochs": Column("Epochs"),
    "workers": Column("Workers"),
    "decisions": Column("Decisions"),
    "batch_changes": Column("Plan changes"),
    "mean_staleness": Column("Mean staleness", "updates"),
    "max_staleness": Column("Maximum staleness", "updates"),
    "policy": Column("Policy"),
    # iterations.csv, plans.csv, availability.csv, evaluations.csv
    "time_s": Column("{clock} time since the start", "s"),
    "start_s": Column("{clock} time since the start", "s"),
    "duration_s": Column("Iteration time", "s"),
    "compute_s": Column("Compute", "s"),
    "comm_s": Column("Communication", "s"),
    "wait_s": Column("Idle, waiting for the others", "s"),
    "worker_time_s": Column("{clock} time per worker", "s"),
    "batch": Column("Mini-batch size", "samples"),
    "worker": Column("Worker"),
    "accuracy": Column("Test accuracy", "%", 100.0),
    "staleness": Column("Staleness", "updates since the worker's pull"),
    "updates": Column("Applied updates"),
    "fraction": Column("Available share of full speed", "%", 100.0),
    "trace_time_s": Column("Trace time", "s"),
    "trace_time_h": Column("Trace time", "hours", 1 / 3600),
    "trace_time_d": Column("Trace time", "days", 1 / 86400),
    # hybrid run folders (docs/hybrid.md): steps.csv, plans.csv, placement.csv, devices.csv, timeline.json
    "step_s": Column("Step time", "s"),
    "device": Column("Device"),
    "device_time_s": Column("{clock} time per device", "s"),
    "bubble_s": Column("Bubble, idle inside the pipeline", "s"),
    "micro_batches": Column("Micro-batches per step"),
    "layers": Column("Layers"),
}

# Sweep coordinates (sweep.csv's axis columns). Any scenario key can be an axis: one not listed here is shown as
# its key path.
COORDINATES: dict[str, Column] = {
    "base": Column("Base scenario"),
    "level": Column("Heterogeneity level"),
    "policy.name": Column("Policy"),
    "policy.every_n": Column("Decision interval", "iterations"),
    "policy.dead_band": Column("Dead band", "fraction of the mean time"),
    "workload.global_batch": Column("Global mini-batch size", "samples"),
    "workload.epochs": Column("Epochs"),
    "seed": Column("Seed"),
}

# Legend names: the policy's name first (as in the scenario files), then what it does.
POLICIES: dict[str, str] = {
    "uniform": "uniform (equal batches)",
    "static": "static (split by nominal capacity)",
    "omnilearn": "omnilearn (proportional controller)",
    "omnilearn-asp": "omnilearn-asp (proportional, asynchronous)",
    "affine": "affine (fitted time model)",
    "oracle": "oracle (true costs: the bound)",
    "staleness-bounded": "staleness-bounded (batches within R updates, asynchronous)",
}
POLICY_ORDER = list(POLICIES)
# The hybrid policies (docs/hybrid.md "The three control levels"): same names, other mechanisms.
HYBRID_POLICIES: dict[str, str] = {
    "equal": "equal (Megatron-LM's default)",
    "static": "static (initial plan, kept)",
    "omnilearn": "omnilearn (three levels, measured)",
    "oracle": "oracle (true speeds: the bound)",
}

_LEVEL = re.compile(r"hl(\d+)", re.IGNORECASE)


def _with_unit(words: str, unit: str) -> str:
    return f"{words} ({unit})" if unit else words


def axis_label(column: str, backend: str = "sim") -> str:
    """"Words (unit)" for a measured column, e.g. axis_label("total_time_s") == "Simulated training time (s)".
    backend "emulate" (a testbed run) says "Wall-clock" instead of "Simulated". Raises KeyError for a column not in
    COLUMNS, so that no figure falls back to a CSV column name."""
    c = COLUMNS[column]
    clock = "Wall-clock" if backend == "emulate" else "Simulated"
    return _with_unit(c.words.replace("{clock}", clock), c.unit)


def scale(column: str) -> float:
    return COLUMNS[column].scale


def policy_label(policy: str) -> str:
    return POLICIES.get(policy, policy)


def hybrid_policy_label(policy: str) -> str:
    return HYBRID_POLICIES.get(policy, policy)


def policy_sort_key(policy: str) -> tuple[int, str]:
    return (POLICY_ORDER.index(policy) if policy in POLICY_ORDER else len(POLICY_ORDER), policy)


def is_level_axis(values) -> bool:
    """True when every value is a heterogeneity level's label (hl1, hl2, ...: the paper's scenario names)."""
    values = [str(v) for v in values]
    return bool(values) and all(_LEVEL.fullmatch(v) for v in values)


def coordinate_label(column: str, values=()) -> str:
    """The name of a sweep axis: from COORDINATES, else its key path. A `base` axis whose values are all levels
    (hl1, hl2, ...) is the heterogeneity level."""
    if column == "base" and is_level_axis(values):
        return COORDINATES["level"].words
    c = COORDINATES.get(column)
    return _with_unit(c.words, c.unit) if c else column


def coordinate_value(value) -> str:
    """A coordinate's value as a tick label: hl8 -> HL8, anything else unchanged."""
    m = _LEVEL.fullmatch(str(value))
    return f"HL{m.group(1)}" if m else str(value)
