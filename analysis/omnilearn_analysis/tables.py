"""Tables computed from runs and sweeps: what the report prints and the tests check."""

from __future__ import annotations

import pandas as pd

from .labels import COLUMNS, axis_label, coordinate_label
from .runs import Run, axis_columns

SUMMARY_FIELDS = ["policy", "mode", "workers", "iterations", "epochs", "total_time_s", "mean_iteration_s",
                  "idle_fraction", "mean_staleness", "max_staleness", "time_to_target_s", "final_accuracy",
                  "decisions", "batch_changes"]


def run_summary(run: Run) -> pd.DataFrame:
    """One row: the run's summary.json fields (absent ones empty)."""
    row = {"run": run.name, **{k: run.summary.get(k) for k in SUMMARY_FIELDS}}
    return pd.DataFrame([row])


def worker_breakdown(run: Run) -> pd.DataFrame:
    """Per worker: compute, communication and idle seconds, their shares, and mean batch."""
    df = run.per_worker_time()
    if df.empty:
        return df
    total = df[["compute_s", "comm_s", "wait_s"]].sum(axis=1)
    df["idle_share"] = df["wait_s"] / total
    df["mean_batch"] = run.iterations.groupby("worker")["batch"].mean().values
    return df


def group_columns(table: pd.DataFrame) -> list[str]:
    """The sweep's axis columns other than the policy: the coordinates at which policies are compared."""
    return [c for c in axis_columns(table) if c not in ("policy.name", "policy")]


def policy_comparison(table: pd.DataFrame, metric: str = "total_time_s") -> pd.DataFrame:
    """Per group of the sweep's non-policy coordinates (group_columns, in sweep.csv's order): `metric` per policy,
    the change of each policy against `uniform` (vs_uniform_pct, negative = faster) and its gap to `oracle`
    (vs_oracle_pct, positive = slower than the bound), in percent. For total_time_s these are sweep.csv's own
    columns (cli/sweep_table.cpp computes them); for another metric they are computed here the same way."""
    ok = table[table["status"] == "ok"]
    group_cols = group_columns(table)
    from_csv = metric == "total_time_s" and {"vs_uniform_pct", "vs_oracle_pct"} <= set(table.columns)
    rows = []
    if len(group_cols) == 1:
        keys = (((k,), df) for k, df in ok.groupby(group_cols[0], sort=False, dropna=False))
    elif group_cols:
        keys = ok.groupby(group_cols, sort=False, dropna=False)
    else:
        keys = [((), ok)]
    for key, df in keys:
        values = pd.to_numeric(df[metric], errors="coerce")
        by_policy = dict(zip(df["policy"], values))
        uniform, oracle = by_policy.get("uniform"), by_policy.get("oracle")
        for i, (policy, value) in enumerate(zip(df["policy"], values)):
            row = dict(zip(group_cols, key))
            row.update({"policy": policy, metric: value})
            if from_csv:
                row["vs_uniform_pct"] = pd.to_numeric(df["vs_uniform_pct"], errors="coerce").iloc[i]
                row["vs_oracle_pct"] = pd.to_numeric(df["vs_oracle_pct"], errors="coerce").iloc[i]
            else:
                row["vs_uniform_pct"] = 100.0 * (value / uniform - 1.0) if uniform else None
                row["vs_oracle_pct"] = 100.0 * (value / oracle - 1.0) if oracle else None
            rows.append(row)
    return pd.DataFrame(rows, columns=[*group_cols, "policy", metric, "vs_uniform_pct", "vs_oracle_pct"])


def with_labels(df: pd.DataFrame, backend: str = "sim") -> pd.DataFrame:
    """The same table with its headers in words and units (labels.py) for a reader: measured columns by
    axis_label, sweep coordinates by coordinate_label, others unchanged."""
    names = {c: axis_label(c, backend) if c in COLUMNS else coordinate_label(c, df[c].unique()) for c in df.columns}
    return df.rename(columns=names)


def hybrid_summary(run) -> pd.DataFrame:
    """One row for a hybrid run (hybrid_runs.HybridRun): its summary.json's policy, steps, times, final shape
    (dp x pp x tp), schedule, batch and plan changes per level."""
    s = run.summary
    shape = s.get("shape", {})
    changes = s.get("plan_changes", {})
    row = {"run": run.name, "policy": s.get("policy"), "steps": s.get("steps"), "total_time_s": s.get("total_time_s"),
           "mean_step_s": s.get("mean_step_s"),
           "shape (dp x pp x tp)": f"{shape.get('dp')} x {shape.get('pp')} x {shape.get('tp')}",
           "schedule": s.get("schedule"), "micro_batch": s.get("micro_batch"), "global_batch": s.get("global_batch"),
           "micro_batch_changes": changes.get("micro_batches"), "layer_changes": changes.get("layers"),
           "replans": changes.get("replans"), "devices": len(run.devices)}
    return pd.DataFrame([row])


def hybrid_plan_changes(run, limit: int = 40) -> pd.DataFrame:
    """plans.csv's level-2 and level-3 rows (the first `limit`), the lists written as in the file."""
    df = run.plans[run.plans["level"] >= 2].head(limit).copy()
    df["micro_batches"] = df["micro_batches"].map(lambda v: ";".join(map(str, v)))
    df["layers_per_stage"] = df["layers_per_stage"].map(lambda v: " | ".join(";".join(map(str, r)) for r in v))
    return df
