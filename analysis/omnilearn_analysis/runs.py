"""Readers for run folders (DESIGN.md section 4) and sweep folders (sweep.csv + one run folder per point).

A run folder holds manifest.json, iterations.csv, plans.csv, availability.csv, summary.json, timeline.json and,
for testbed runs, evaluations.csv. The simulator and the testbed write the same schema, so one reader serves both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

ITERATION_COLUMNS = ["worker", "step", "epoch", "start_s", "compute_s", "comm_s", "wait_s", "batch",
                     "loss", "accuracy", "staleness"]
PLAN_COLUMNS = ["step", "epoch", "time_s", "reason", "changed", "imbalance", "worker", "batch", "weight"]
AVAILABILITY_COLUMNS = ["time_s", "worker", "fraction"]
EVALUATION_COLUMNS = ["time_s", "step", "epoch", "loss", "accuracy"]


class RunFormatError(ValueError):
    """A run or sweep folder that does not follow the schema; the message names the file and what is wrong."""


@dataclass
class Run:
    path: Path
    manifest: dict
    summary: dict
    iterations: pd.DataFrame
    plans: pd.DataFrame
    availability: pd.DataFrame
    evaluations: pd.DataFrame
    extra: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def policy(self) -> str:
        return str(self.summary.get("policy", "?"))

    @property
    def mode(self) -> str:
        return str(self.summary.get("mode", "?"))

    @property
    def backend(self) -> str:
        """"sim" or "emulate", from the manifest (testbed runs have evaluations)."""
        return str(self.manifest.get("backend", "emulate" if not self.evaluations.empty else "sim"))

    def per_worker_time(self) -> pd.DataFrame:
        """Total compute, communication and idle (waiting) seconds per worker."""
        if self.iterations.empty:
            return pd.DataFrame(columns=["worker", "compute_s", "comm_s", "wait_s"])
        return (self.iterations.groupby("worker")[["compute_s", "comm_s", "wait_s"]].sum().reset_index())

    def step_times(self) -> pd.DataFrame:
        """Per step: its start, and its duration (the slowest worker's compute + comm + wait)."""
        it = self.iterations
        if it.empty:
            return pd.DataFrame(columns=["step", "start_s", "duration_s"])
        total = it["compute_s"] + it["comm_s"] + it["wait_s"]
        df = it.assign(total_s=total).groupby("step").agg(start_s=("start_s", "min"), duration_s=("total_s", "max"))
        return df.reset_index()


def _read_csv(path: Path, columns: list[str], required: bool) -> pd.DataFrame:
    if not path.exists():
        if required:
            raise RunFormatError(f"{path}: missing (expected a CSV with columns {','.join(columns)})")
        return pd.DataFrame(columns=columns)
    df = pd.read_csv(path)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise RunFormatError(f"{path}: missing columns {missing} (expected {','.join(columns)})")
    return df


def expand_plans(plans: pd.DataFrame) -> pd.DataFrame:
    """plans.csv in its long form, one row per worker and decision, whichever form the file uses.

    Runs of more than 64 workers write plans.csv compactly (scenarios/README.md "Run folders"): each decision opens
    with a marker row whose worker and weight cells are empty, followed by one row per worker whose batch or weight
    differs from the previous decision (the first decision lists every worker). Each worker keeps its values until
    a later decision lists it again. A marker whose batch cell holds a number (the sum of the batches) says that
    this decision's weights are every worker's batch share, b_k / sum (0 when the sum is 0), computed here as the
    controller did; its rows then list batch changes only. Both forms read back to the same table."""
    if plans.empty or not plans["worker"].isna().any():
        return plans
    marker = plans["worker"].isna()
    decision = marker.cumsum() - 1
    if (decision < 0).any():
        raise RunFormatError("plans.csv: a compact plans.csv must open with a decision's marker row")
    heads = plans.loc[marker, ["step", "epoch", "time_s", "reason", "changed", "imbalance"]].reset_index(drop=True)
    totals = plans.loc[marker, "batch"].reset_index(drop=True)
    rows = plans.loc[~marker].assign(decision=decision[~marker].to_numpy())
    rows = rows.astype({"worker": "int64"})
    decisions = range(len(heads))
    batch = (rows.pivot_table(index="decision", columns="worker", values="batch", aggfunc="last")
             .reindex(decisions).ffill())
    workers = batch.columns
    if batch.isna().to_numpy().any():
        raise RunFormatError("plans.csv: a worker has no batch before its first listing (the first decision must "
                             "list every worker)")
    weight = (rows.pivot_table(index="decision", columns="worker", values="weight", aggfunc="last")
              .reindex(index=decisions, columns=workers))
    shares = totals.notna().to_numpy()
    if shares.any():
        total = totals.to_numpy(dtype="float64")[shares][:, None]
        derived = batch.to_numpy(dtype="float64")[shares]
        with_sum = total > 0
        weight.iloc[shares] = (derived / (total + (~with_sum))) * with_sum  # b / sum, 0 for a sum of 0
    weight = weight.ffill()
    long = pd.DataFrame({
        "decision": [d for d in decisions for _ in workers],
        "worker": list(workers) * len(heads),
        "batch": batch.to_numpy().reshape(-1),
        "weight": weight.to_numpy().reshape(-1),
    })
    long = long.astype({"batch": "int64"})
    out = heads.iloc[long["decision"].to_numpy()].reset_index(drop=True)
    out["worker"] = long["worker"].to_numpy()
    out["batch"] = long["batch"].to_numpy()
    out["weight"] = long["weight"].to_numpy()
    return out[PLAN_COLUMNS]


def _read_json(path: Path, required: bool) -> dict:
    if not path.exists():
        if required:
            raise RunFormatError(f"{path}: missing")
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise RunFormatError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from e
    if not isinstance(data, dict):
        raise RunFormatError(f"{path}: expected a JSON object")
    return data


def is_run_dir(path: Path) -> bool:
    return (Path(path) / "summary.json").exists()


def is_sweep_dir(path: Path) -> bool:
    return (Path(path) / "sweep.csv").exists()


def load_run(path: str | Path) -> Run:
    """Reads one run folder. Raises RunFormatError naming the file at fault."""
    p = Path(path)
    if not p.is_dir():
        raise RunFormatError(f"{p}: not a folder")
    return Run(
        path=p,
        manifest=_read_json(p / "manifest.json", required=False),
        summary=_read_json(p / "summary.json", required=True),
        iterations=_read_csv(p / "iterations.csv", ITERATION_COLUMNS, required=False),
        plans=expand_plans(_read_csv(p / "plans.csv", PLAN_COLUMNS, required=False)),
        availability=_read_csv(p / "availability.csv", AVAILABILITY_COLUMNS, required=False),
        evaluations=_read_csv(p / "evaluations.csv", EVALUATION_COLUMNS, required=False),
    )


def axis_columns(table: pd.DataFrame) -> list[str]:
    """The sweep's axis columns: those between `point` and `status` in sweep.csv."""
    cols = list(table.columns)
    if "status" not in cols:
        return []
    return cols[1:cols.index("status")]


def load_sweep(path: str | Path) -> tuple[pd.DataFrame, dict[str, Run]]:
    """Reads sweep.csv and every run folder of a point that succeeded: (table, {point: Run})."""
    p = Path(path)
    table = pd.read_csv(p / "sweep.csv")
    if "point" not in table.columns:
        raise RunFormatError(f"{p / 'sweep.csv'}: no 'point' column")
    runs = {}
    for point, status in zip(table["point"], table.get("status", ["ok"] * len(table))):
        if status == "ok" and is_run_dir(p / point):
            runs[point] = load_run(p / point)
    return table, runs
