"""Tables computed from runs and sweeps: what the report prints and the tests check."""

from __future__ import annotations

import pandas as pd

from .figures import axis_columns
from .runs import Run

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


def policy_comparison(table: pd.DataFrame, metric: str = "total_time_s") -> pd.DataFrame:
    """Per group of the sweep's non-policy coordinates: `metric` per policy, the change of each policy against
    `uniform` (negative = faster) and its gap to `oracle` (positive = slower than the bound), in percent."""
    ok = table[table["status"] == "ok"]
    group_cols = [c for c in axis_columns(table) if c not in ("policy.name", "policy")]
    rows = []
    if len(group_cols) == 1:
        keys = ((( k,), df) for k, df in ok.groupby(group_cols[0], sort=False))
    elif group_cols:
        keys = ok.groupby(group_cols, sort=False)
    else:
        keys = [((), ok)]
    for key, df in keys:
        by_policy = dict(zip(df["policy"], pd.to_numeric(df[metric], errors="coerce")))
        for policy, value in by_policy.items():
            row = dict(zip(group_cols, key))
            row.update({"policy": policy, metric: value})
            uniform = by_policy.get("uniform")
            oracle = by_policy.get("oracle")
            row["vs_uniform_pct"] = 100.0 * (value / uniform - 1.0) if uniform else None
            row["vs_oracle_pct"] = 100.0 * (value / oracle - 1.0) if oracle else None
            rows.append(row)
    return pd.DataFrame(rows)
