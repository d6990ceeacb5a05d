"""The multi-job study (``scripts/jobs-study.sh``, ``docs/results-jobs.md``): runs of ``omnilearn jobs run`` in
folders named ``<workload>-<scheduler>-<policy>-s<seed>``, each with ``summary.json`` and ``jobs.csv``: directly in the
study's folder, or inside sweep folders there (``omnilearn sweep`` of a jobs scenario: one holding sweep-index.txt).

Per workload, scheduler and job batch policy: the mean over seeds of the average, median and p99 job completion
time (JCT), of the makespan and of the mean and max finish-time fairness rho (JCT over the time on a 1/N share of the
cluster, docs/jobs.md) and, for runs with energy, of the cluster's and the jobs' joules, with Student-t 95% intervals;
and, paired by seed, each combination's ratio to FIFO
with equal batches (``fifo-uniform``) and to the same scheduler with the other batch policy, as the geometric mean of
the per-seed ratios with its 95% interval (a t interval on the log ratios). A ratio below 1 is better; its verdict
says whether the interval excludes 1."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .asp_study import mean_ci as asp_mean_ci

NAME = re.compile(r"^(?P<workload>[a-z0-9]+)-(?P<scheduler>[a-z][a-z-]*?)-(?P<policy>uniform|omnilearn)-s(?P<seed>\d+)$")
METRICS = ("mean_jct_s", "median_jct_s", "p99_jct_s", "makespan_s")
RHO = ("mean_rho", "max_rho")  # absent (NaN) in runs made before omnilearn jobs run reported rho
# summary.json's energy block (omnilearn jobs run --energy; docs/energy.md), as energy_<field>: NaN without it.
ENERGY = ("energy_total_j", "energy_jobs_j", "energy_unallocated_idle_j", "energy_wait_j")
REFERENCE = ("fifo", "uniform")
SCHEDULERS = ("fifo", "las", "gavel", "balanced-mix")


def load(folder: str | Path) -> pd.DataFrame:
    """One row per finished run folder under ``folder`` (or in a sweep folder there): workload, scheduler, policy,
    seed, the metrics, the jobs that finished, the mean and max rho (NaN when the run did not report them), and
    utilisation by device kind (``util_<kind>``). ``run`` is the run folder's path relative to ``folder``."""
    rows = []
    skipped: list[str] = []
    root = Path(folder)
    candidates = []
    for d in sorted(root.iterdir()):
        if d.is_dir() and (d / "sweep-index.txt").is_file():
            candidates += sorted(p for p in d.iterdir() if p.is_dir())
        else:
            candidates.append(d)
    for d in candidates:
        m = NAME.match(d.name)
        if not m or not (d / "summary.json").is_file():
            continue
        s = json.loads((d / "summary.json").read_text())
        if "stopped" in s:  # ended early (an error, a stop): its JCTs cover only the jobs done by then
            skipped.append(f"{d.name}: {s['stopped']}")
            continue
        row = {"run": d.relative_to(root).as_posix(), "workload": m["workload"], "scheduler": m["scheduler"],
               "policy": m["policy"], "seed": int(m["seed"]), "jobs": s["jobs"], "finished": s["finished"]}
        row.update({k: float(s[k]) for k in METRICS})
        row.update({k: float(s.get(k, math.nan)) for k in RHO})
        energy = s.get("energy") if isinstance(s.get("energy"), dict) else {}
        row.update({k: float(energy.get(k.removeprefix("energy_"), math.nan)) for k in ENERGY})
        row.update({f"util_{k}": float(v) for k, v in s.get("utilisation", {}).items()})
        rows.append(row)
    if not rows:
        raise ValueError(f"{folder}: no run folders named <workload>-<scheduler>-<policy>-s<seed> with a summary.json"
                         + (f" that ran to the end ({len(skipped)} stopped early)" if skipped else ""))
    runs = pd.DataFrame(rows)
    runs.attrs["skipped"] = skipped
    return runs


def mean_ci(values) -> tuple[float, float, float, int]:
    """Mean and Student-t 95% interval of the finite values, and their count (asp_study's)."""
    return asp_mean_ci(pd.Series(list(values), dtype=float))


def ratio_ci(ratios) -> tuple[float, float, float, int]:
    """Geometric mean of positive ratios and its 95% interval (a t interval on their logs)."""
    logs = [math.log(r) for r in ratios if np.isfinite(r) and r > 0]
    m, lo, hi, n = mean_ci(logs)
    return (math.exp(m) if n else math.nan, math.exp(lo) if n > 1 else math.nan,
            math.exp(hi) if n > 1 else math.nan, n)


def _order(runs: pd.DataFrame):
    known = {s: i for i, s in enumerate(SCHEDULERS)}
    keys = runs[["workload", "scheduler", "policy"]].drop_duplicates().itertuples(index=False)
    return sorted(keys, key=lambda k: (k[0], known.get(k[1], len(known)), k[1], k[2] != "uniform"))


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for workload, scheduler, policy in _order(runs):
        part = runs[(runs.workload == workload) & (runs.scheduler == scheduler) & (runs.policy == policy)]
        row = {"workload": workload, "scheduler": scheduler, "policy": policy, "seeds": len(part),
               "all_finished": bool((part.finished == part.jobs).all())}
        for k in METRICS + RHO + ENERGY:
            m, lo, hi, _ = mean_ci(part[k])
            row.update({k: m, f"{k}_lo": lo, f"{k}_hi": hi})
        rows.append(row)
    return pd.DataFrame(rows)


def _verdict(lo: float, hi: float) -> str:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "too few seeds"
    if hi < 1.0:
        return "better"
    if lo > 1.0:
        return "worse"
    return "no detectable difference"


def paired(runs: pd.DataFrame) -> pd.DataFrame:
    """Ratios paired by seed: each combination against fifo-uniform and against its scheduler's other policy."""
    rows = []
    indexed = runs.set_index(["workload", "scheduler", "policy", "seed"])
    for workload, scheduler, policy in _order(runs):
        other = "omnilearn" if policy == "uniform" else "uniform"
        refs = [("vs fifo-uniform", REFERENCE)] if (scheduler, policy) != REFERENCE else []
        if policy == "omnilearn":
            refs.append(("vs uniform", (scheduler, other)))
        seeds = runs[(runs.workload == workload) & (runs.scheduler == scheduler) & (runs.policy == policy)].seed
        for label, (ref_s, ref_p) in refs:
            row = {"workload": workload, "scheduler": scheduler, "policy": policy, "reference": label}
            for k in METRICS + ENERGY:
                ratios = []
                for seed in seeds:
                    key = (workload, ref_s, ref_p, seed)
                    if key in indexed.index:
                        a, b = indexed.loc[(workload, scheduler, policy, seed), k], indexed.loc[key, k]
                        if np.isfinite(a) and np.isfinite(b) and b != 0:
                            ratios.append(a / b)
                g, lo, hi, n = ratio_ci(ratios)
                row.update({f"{k}_ratio": g, f"{k}_lo": lo, f"{k}_hi": hi, f"{k}_verdict": _verdict(lo, hi)})
                if k in METRICS:  # (runs without energy pair no energy)
                    row["pairs"] = n
            rows.append(row)
    return pd.DataFrame(rows)


def _interval(m: float, lo: float, hi: float, digits: int) -> str:
    if not np.isfinite(m):
        return "-"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def format_tables(summary: pd.DataFrame, diffs: pd.DataFrame) -> str:
    out = []
    for workload in summary.workload.unique():
        out.append(f"{workload}: mean over seeds, hours [95% interval]")
        out.append(f"{'scheduler':<13} {'policy':<10} {'seeds':>5}  {'average JCT':<22} {'p99 JCT':<24} "
                   f"{'makespan':<24} {'mean rho':<22} max rho")
        for r in summary[summary.workload == workload].itertuples():
            h = 1 / 3600
            out.append(f"{r.scheduler:<13} {r.policy:<10} {r.seeds:>5}  "
                       f"{_interval(r.mean_jct_s * h, r.mean_jct_s_lo * h, r.mean_jct_s_hi * h, 2):<22} "
                       f"{_interval(r.p99_jct_s * h, r.p99_jct_s_lo * h, r.p99_jct_s_hi * h, 1):<24} "
                       f"{_interval(r.makespan_s * h, r.makespan_s_lo * h, r.makespan_s_hi * h, 1):<24} "
                       f"{_interval(r.mean_rho, r.mean_rho_lo, r.mean_rho_hi, 2):<22} "
                       f"{_interval(r.max_rho, r.max_rho_lo, r.max_rho_hi, 2)}"
                       + ("" if r.all_finished else "  (some jobs did not finish)"))
        with_energy = summary[summary.workload == workload].energy_total_j.notna().any()
        if with_energy:
            out.append(f"{workload}: energy, mean over seeds, GJ [95% interval]")
            out.append(f"{'scheduler':<13} {'policy':<10} {'total':<22} {'jobs':<22} {'unallocated idle':<22} "
                       "jobs' wait")
            for r in summary[summary.workload == workload].itertuples():
                cells = [_interval(getattr(r, k) * 1e-9, getattr(r, f"{k}_lo") * 1e-9, getattr(r, f"{k}_hi") * 1e-9,
                                   4 if k == "energy_wait_j" else 3) for k in ENERGY]
                out.append(f"{r.scheduler:<13} {r.policy:<10} {cells[0]:<22} {cells[1]:<22} {cells[2]:<22} {cells[3]}")
        out.append(f"{workload}: ratios paired by seed (geometric mean [95% interval]; < 1 is better)")
        for r in diffs[diffs.workload == workload].itertuples():
            out.append(f"  {r.scheduler + '-' + r.policy:<24} {r.reference:<16} average JCT "
                       f"{_interval(r.mean_jct_s_ratio, r.mean_jct_s_lo, r.mean_jct_s_hi, 3)} "
                       f"({r.mean_jct_s_verdict}); p99 "
                       f"{_interval(r.p99_jct_s_ratio, r.p99_jct_s_lo, r.p99_jct_s_hi, 3)}; makespan "
                       f"{_interval(r.makespan_s_ratio, r.makespan_s_lo, r.makespan_s_hi, 3)}"
                       + (f"; energy {_interval(r.energy_total_j_ratio, r.energy_total_j_lo, r.energy_total_j_hi, 3)}, "
                          f"jobs' {_interval(r.energy_jobs_j_ratio, r.energy_jobs_j_lo, r.energy_jobs_j_hi, 3)}"
                          if with_energy else ""))
        out.append("")
    return "\n".join(out)


def _rho_axis(ax, values) -> None:
    """A log axis where rho spans a decade or more; linear below that, where log ticks crowd."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    log = len(v) > 0 and v.max() / v.min() >= 10
    ax.set_xscale("log" if log else "linear")
    ax.set_xlabel("finish-time fairness rho" + (" (log scale)" if log else "") + "; dotted: 1, as on a fair share")
    ax.axvline(1.0, color="grey", linestyle=":", linewidth=1)


def _figure(height: float = 3.6):
    """A new figure and its axes, 6.4 wide, on Matplotlib's Agg back end (imported here, not with the module)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(6.4, height))


def _finish(fig, ax, ylabel: str, legend_size: int | None = 8):
    """Labels the y axis, draws the grid and, with a size, the legend; lays the figure out and returns it."""
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if legend_size is not None:
        ax.legend(fontsize=legend_size)
    fig.tight_layout()
    return fig


def _study_cdf(folder: str | Path, runs: pd.DataFrame, workload: str, seed: int, column: str, scale: float,
               xlabel: str | None):
    """CDFs of one jobs.csv column for every scheduler x policy of one workload and seed (runs without it left out);
    xlabel None: a rho axis."""
    fig, ax = _figure(4.0)
    colours = {}  # one colour per scheduler; the batch policy is the line style
    drawn = []
    for r in runs[(runs.workload == workload) & (runs.seed == seed)].sort_values(["scheduler", "policy"]).itertuples():
        jobs = pd.read_csv(Path(folder) / r.run / "jobs.csv")
        if column not in jobs:
            continue
        v = np.sort(jobs[column].dropna().to_numpy() * scale)
        drawn.extend(v)
        colour = colours.setdefault(r.scheduler, f"C{len(colours)}")
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", color=colour,
                linestyle="-" if r.policy == "uniform" else "--", label=f"{r.scheduler} {r.policy}")
    if xlabel is None:
        _rho_axis(ax, drawn)
    else:
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
    ax.set_title(f"{workload}, seed {seed}")
    return _finish(fig, ax, "fraction of jobs", legend_size=7)


def jct_cdf(folder: str | Path, runs: pd.DataFrame, workload: str, seed: int):
    """The JCT distribution of every scheduler x policy of one workload and seed, as CDFs."""
    return _study_cdf(folder, runs, workload, seed, "jct_s", 1 / 3600, "job completion time (h, log scale)")


def rho_cdf(folder: str | Path, runs: pd.DataFrame, workload: str, seed: int):
    """The finish-time fairness (rho) of every scheduler x policy of one workload and seed, as CDFs."""
    return _study_cdf(folder, runs, workload, seed, "rho", 1.0, None)


def is_jobs_run(path: str | Path) -> bool:
    """A run folder of ``omnilearn jobs run`` (its summary.json says kind "jobs")."""
    summary = Path(path) / "summary.json"
    if not summary.is_file():
        return False
    try:
        return json.loads(summary.read_text()).get("kind") == "jobs"
    except (json.JSONDecodeError, AttributeError):
        return False


def run_jct_cdf(path: str | Path):
    """One run's job completion times as a CDF, with its queueing delays."""
    jobs = pd.read_csv(Path(path) / "jobs.csv")
    fig, ax = _figure()
    for column, label in (("jct_s", "job completion time"), ("queueing_s", "queueing delay")):
        v = np.sort(jobs[column].dropna().to_numpy() / 3600)
        v = v[v > 0]
        if len(v):
            ax.step(v, np.arange(1, len(v) + 1) / len(jobs), where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("hours (log scale)")
    return _finish(fig, ax, "fraction of jobs")


def run_rho_cdf(path: str | Path):
    """One run's finish-time fairness (rho) of its finished jobs as a CDF; None when jobs.csv has no rho."""
    jobs = pd.read_csv(Path(path) / "jobs.csv")
    if "rho" not in jobs:
        return None
    v = np.sort(jobs.rho.dropna().to_numpy())
    fig, ax = _figure()
    if len(v):
        ax.step(v, np.arange(1, len(v) + 1) / len(jobs), where="post", label="rho")
    _rho_axis(ax, v)
    return _finish(fig, ax, "fraction of jobs", legend_size=None)


def occupancy(path: str | Path):
    """Devices held by kind at each round, against each kind's devices (summary.json's "devices")."""
    path = Path(path)
    alloc = pd.read_csv(path / "allocations.csv")
    devices = json.loads((path / "summary.json").read_text()).get("devices", {})
    fig, ax = _figure()
    if not alloc.empty:
        held = alloc.groupby(["time_s", "kind"]).devices.sum().unstack(fill_value=0)
        for kind in held.columns:
            line, = ax.step(held.index / 3600, held[kind], where="post", label=f"{kind} held")
            if kind in devices:
                ax.axhline(devices[kind], color=line.get_color(), linestyle=":", linewidth=1)
    ax.set_xlabel("simulated time (h)")
    return _finish(fig, ax, "devices (dotted: all of the kind)")


def write_study(folder: str | Path, out: str | Path | None = None) -> tuple[str, list[Path]]:
    folder = Path(folder)
    out = Path(out) if out else folder
    out.mkdir(parents=True, exist_ok=True)
    runs = load(folder)
    summary = summarize(runs)
    diffs = paired(runs)
    paths = [out / "study-runs.csv", out / "study-summary.csv", out / "study-paired.csv"]
    runs.to_csv(paths[0], index=False)
    summary.to_csv(paths[1], index=False)
    diffs.to_csv(paths[2], index=False)
    for workload in runs.workload.unique():
        seed = int(runs[runs.workload == workload].seed.min())
        fig = jct_cdf(folder, runs, workload, seed)
        path = out / f"study-jct-cdf-{workload}.png"
        fig.savefig(path, dpi=110)
        paths.append(path)
        if runs[runs.workload == workload][list(RHO)].notna().to_numpy().any():
            fig = rho_cdf(folder, runs, workload, seed)
            path = out / f"study-rho-cdf-{workload}.png"
            fig.savefig(path, dpi=110)
            paths.append(path)
    text = format_tables(summary, diffs)
    skipped = runs.attrs.get("skipped", [])
    if skipped:
        text += f"left out, stopped before every job ended ({len(skipped)}):\n" + "\n".join(f"  {s}" for s in skipped)
    return text, paths
