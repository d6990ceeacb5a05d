"""The asynchronous studies under virtual-time training: per cell (heterogeneity level and worker count) and variant
(an algorithm or server rule under a batch policy), the mean final accuracy and the times to target accuracies over
seeds with Student-t 95% intervals, and paired differences by seed against three references in the same cell:

- ``omnilearn - uniform``: the same algorithm or rule with the other batch policy;
- ``vs asgd uniform``: plain asynchronous SGD with equal batches, the rule every other must beat;
- ``vs bsp omnilearn``: synchronous training with omnilearn, when the cell has it.

Each difference has a verdict: "better" or "worse" when its interval excludes 0, else "no detectable difference".

Input: one or more sweep folders (``sweep.csv`` and each point's ``evaluations.csv``) of either layout:

- ``cell``, ``variant`` and ``seed`` axes (``scenarios/testbed/sweep-asp-study.yaml`` and its parts): a cell is
  ``<level>-n<workers>``, a variant ``<algorithm>-<policy>`` with policy ``uniform`` or ``omnilearn``;
- ``level``, ``policy.name``, ``lr`` and ``seed`` axes (``sweep-asp-virtual-time.yaml``): the cell is the level,
  the algorithm ``asgd`` (lr ``none``) or ``asgd-lr-<lr>``."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from .labels import axis_label

POLICIES = ("uniform", "omnilearn")
OLD_AXES = ("level", "policy.name", "lr", "seed")
NEW_AXES = ("cell", "variant", "seed")
BASELINE = ("asgd", "uniform")  # plain ASGD with equal batches
SYNC = ("bsp", "omnilearn")     # the synchronous baseline


def read_evaluations(sweep: str | Path, points) -> dict[str, pd.DataFrame]:
    """Each point's evaluations.csv (an empty frame where it has none), read once for the times and the curves."""
    empty = pd.DataFrame({"time_s": [], "accuracy": []})
    return {p: pd.read_csv(Path(sweep) / p / "evaluations.csv") if (Path(sweep) / p / "evaluations.csv").exists()
            else empty for p in points}


def _first_time_at(evaluations: pd.DataFrame, target: float) -> float:
    """Simulated seconds of the first evaluation at or above `target` (NaN when none reached it)."""
    hit = evaluations[evaluations["accuracy"] >= target]
    return float(hit["time_s"].iloc[0]) if not hit.empty else float("nan")


def time_column(target: float) -> str:
    return f"time_to_{round(target * 100)}_s"


def _split_variant(variant: str, where: str) -> tuple[str, str]:
    algorithm, _, policy = variant.rpartition("-")
    if not algorithm or policy not in POLICIES:
        raise ValueError(f"{where}: variant '{variant}': expected <algorithm>-<policy> with policy one of "
                         f"{', '.join(POLICIES)} (for example asgd-uniform, ssp-omnilearn)")
    return algorithm, policy


def _split_cell(cell: str) -> tuple[str, float]:
    m = re.fullmatch(r"(.+)-n(\d+)", cell)
    return (m.group(1), float(m.group(2))) if m else (cell, math.nan)


def load(sweep: str | Path, targets: list[float], evaluations: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """One row per successful point: cell, level, workers, algorithm, policy, seed, final accuracy, updates, staleness
    and the time to each target (``time_to_<pct>_s``). Each point's evaluations are read once: into `evaluations`
    (keyed by the point's folder) when a dict is given (for accuracy_curves)."""
    sweep = Path(sweep)
    csv = sweep / "sweep.csv"
    if not csv.exists():
        raise ValueError(f"{csv}: no such file (expected a sweep folder)")
    table = pd.read_csv(csv, dtype={"level": str, "lr": str, "policy.name": str, "cell": str, "variant": str})
    new = all(c in table.columns for c in NEW_AXES)
    axes = NEW_AXES if new else OLD_AXES
    missing = [c for c in (*axes, "status", "final_accuracy") if c not in table.columns]
    if missing:
        raise ValueError(f"{csv}: missing column(s) {', '.join(missing)} (expected the axes cell, variant, seed "
                         f"of sweep-asp-study.yaml, or level, policy.name, lr, seed of sweep-asp-virtual-time.yaml, "
                         f"and final_accuracy)")
    ok = table[table["status"] == "ok"].copy()
    if new:
        split = [_split_variant(v, str(csv)) for v in ok["variant"]]
        ok["algorithm"] = [a for a, _ in split]
        ok["policy_axis"] = [p for _, p in split]
    else:
        ok["cell"] = ok["level"]
        ok["algorithm"] = ["asgd" if lr == "none" else f"asgd-lr-{lr}" for lr in ok["lr"]]
        ok["policy_axis"] = ok["policy.name"]
    cells = [_split_cell(c) for c in ok["cell"]]
    ok["level"] = [lv for lv, _ in cells]
    ok["workers"] = [n if not math.isnan(n) else w for (_, n), w in zip(cells, ok.get("workers", [math.nan] * len(ok)))]
    ok["point_path"] = [str(sweep / p) for p in ok["point"]]
    got = read_evaluations(sweep, ok["point"])
    if evaluations is not None:
        evaluations.update({str(sweep / p): frame for p, frame in got.items()})
    for target in targets:
        ok[time_column(target)] = [_first_time_at(got[p], target) for p in ok["point"]]
    # The axis label (uniform, omnilearn), not the summary's policy field (omnilearn-asp).
    ok = ok.drop(columns=["policy"], errors="ignore").rename(columns={"policy_axis": "policy", "iterations": "updates"})
    if "mean_staleness" not in ok.columns:
        ok["mean_staleness"] = math.nan
    columns = ["point_path", "cell", "level", "workers", "algorithm", "policy", "seed", "final_accuracy", "updates",
               "mean_staleness", *[time_column(t) for t in targets]]
    return ok[columns].reset_index(drop=True)


def load_all(sweeps: list[str | Path], targets: list[float],
             evaluations: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """load() of each sweep folder, concatenated; the same (cell, algorithm, policy, seed) twice is refused."""
    runs = pd.concat([load(s, targets, evaluations) for s in sweeps], ignore_index=True)
    twice = runs[runs.duplicated(["cell", "algorithm", "policy", "seed"], keep=False)]
    if not twice.empty:
        r = twice.iloc[0]
        raise ValueError(f"{r['cell']} {r['algorithm']}-{r['policy']} seed {r['seed']} appears in more than one "
                         f"point: {', '.join(twice['point_path'].head(2))}")
    return runs


def mean_ci(values: pd.Series) -> tuple[float, float, float, int]:
    """Mean and Student-t 95% interval (low, high) of the finite values, and their count."""
    v = values.dropna().to_numpy(dtype=float)
    n = len(v)
    if n == 0:
        return (math.nan, math.nan, math.nan, 0)
    m = float(v.mean())
    if n == 1:
        return (m, math.nan, math.nan, 1)
    half = float(stats.t.ppf(0.975, n - 1) * v.std(ddof=1) / math.sqrt(n))
    return (m, m - half, m + half, n)


def _order(runs: pd.DataFrame) -> list[tuple]:
    """(cell, algorithm, policy) in reading order: cells by level then workers, algorithms by first appearance."""
    algorithms = list(dict.fromkeys(runs["algorithm"]))
    keys = runs[["cell", "level", "workers", "algorithm", "policy"]].drop_duplicates()
    keys = keys.assign(a=[algorithms.index(a) for a in keys["algorithm"]],
                       p=[POLICIES.index(p) for p in keys["policy"]])
    keys = keys.sort_values(["level", "workers", "cell", "a", "p"])
    return list(keys[["cell", "algorithm", "policy"]].itertuples(index=False, name=None))


def summarize(runs: pd.DataFrame, targets: list[float]) -> pd.DataFrame:
    """Per cell, algorithm and policy: accuracy (points) and each target's time with 95% intervals."""
    rows = []
    for cell, algorithm, policy in _order(runs):
        g = runs[(runs["cell"] == cell) & (runs["algorithm"] == algorithm) & (runs["policy"] == policy)]
        acc = mean_ci(g["final_accuracy"] * 100.0)
        row = {"cell": cell, "level": g["level"].iloc[0], "workers": g["workers"].iloc[0], "algorithm": algorithm,
               "policy": policy, "seeds": len(g), "accuracy_mean_pct": acc[0], "accuracy_ci_low": acc[1],
               "accuracy_ci_high": acc[2]}
        for target in targets:
            t = mean_ci(g[time_column(target)])
            pct = round(target * 100)
            row.update({f"reached_{pct}": t[3], f"time_to_{pct}_mean_s": t[0], f"time_to_{pct}_ci_low": t[1],
                        f"time_to_{pct}_ci_high": t[2]})
        row.update({"updates_mean": float(g["updates"].mean()), "staleness_mean": float(g["mean_staleness"].mean())})
        rows.append(row)
    return pd.DataFrame(rows)


def _verdict(low: float, high: float, higher_is_better: bool) -> str:
    if math.isnan(low) or math.isnan(high):
        return "too few pairs"
    if low > 0:
        return "better" if higher_is_better else "worse"
    if high < 0:
        return "worse" if higher_is_better else "better"
    return "no detectable difference"


def _references(runs: pd.DataFrame, cell: str, algorithm: str, policy: str) -> list[tuple[str, tuple[str, str]]]:
    """The comparisons of one variant: (name, reference (algorithm, policy)) for references the cell has."""
    have = set(map(tuple, runs.loc[runs["cell"] == cell, ["algorithm", "policy"]].to_numpy()))
    out = []
    if policy == "omnilearn":
        # Learning-rate scaling changes nothing under uniform (every b_k = b_ref): its uniform runs are plain ASGD's.
        other = (algorithm, "uniform") if (algorithm, "uniform") in have else (
            BASELINE if algorithm.startswith("asgd-lr-") else None)
        if other in have:
            out.append(("omnilearn - uniform", other))
    if (algorithm, policy) != BASELINE and BASELINE in have and all(ref != BASELINE for _, ref in out):
        out.append(("vs asgd uniform", BASELINE))
    if (algorithm, policy) != SYNC and SYNC in have:
        out.append(("vs bsp omnilearn", SYNC))
    return out


def paired(runs: pd.DataFrame, targets: list[float]) -> pd.DataFrame:
    """Each variant against its references (_references) in its cell, paired by seed: accuracy (points) and each
    target's time (s, and % of the reference's), over the seeds where both reached the target."""
    rows = []
    for cell, algorithm, policy in _order(runs):
        here = runs[runs["cell"] == cell]
        v = here[(here["algorithm"] == algorithm) & (here["policy"] == policy)].set_index("seed")
        for comparison, (ref_algorithm, ref_policy) in _references(runs, cell, algorithm, policy):
            r = here[(here["algorithm"] == ref_algorithm) & (here["policy"] == ref_policy)].set_index("seed")
            seeds = v.index.intersection(r.index)
            if seeds.empty:
                continue
            a = mean_ci((v.loc[seeds, "final_accuracy"] - r.loc[seeds, "final_accuracy"]) * 100.0)
            row = {"cell": cell, "algorithm": algorithm, "policy": policy, "comparison": comparison,
                   "reference": f"{ref_algorithm}-{ref_policy}", "pairs": len(seeds), "accuracy_diff_pts": a[0],
                   "accuracy_diff_ci_low": a[1], "accuracy_diff_ci_high": a[2],
                   "accuracy_verdict": _verdict(a[1], a[2], higher_is_better=True)}
            for target in targets:
                pct, col = round(target * 100), time_column(target)
                d = v.loc[seeds, col] - r.loc[seeds, col]
                t = mean_ci(d)
                rel = mean_ci(d / r.loc[seeds, col] * 100.0)
                row.update({f"time_{pct}_pairs": t[3], f"time_{pct}_diff_s": t[0], f"time_{pct}_diff_ci_low": t[1],
                            f"time_{pct}_diff_ci_high": t[2], f"time_{pct}_diff_pct": rel[0],
                            f"time_{pct}_diff_pct_ci_low": rel[1], f"time_{pct}_diff_pct_ci_high": rel[2],
                            f"time_{pct}_verdict": _verdict(t[1], t[2], higher_is_better=False)})
            rows.append(row)
    return pd.DataFrame(rows)


def _interval(m: float, lo: float, hi: float, digits: int, sign: bool = False) -> str:
    if math.isnan(m):
        return "-"
    f = f"{{:{'+' if sign else ''}.{digits}f}}"
    if math.isnan(lo):
        return f.format(m)
    return f"{f.format(m)} [{f.format(lo)}, {f.format(hi)}]"


def format_tables(summary: pd.DataFrame, diffs: pd.DataFrame, targets: list[float]) -> str:
    pcts = [round(t * 100) for t in targets]
    head = "| cell | variant | final accuracy (%), mean [95% CI] | " + " | ".join(
        f"reached {p}% | time to {p}% (s) [95% CI]" for p in pcts) + " | updates |"
    lines = [head, "|" + "---|" * (4 + 2 * len(pcts))]
    for _, r in summary.iterrows():
        cells = [f"{r[f'reached_{p}']}/{r['seeds']} | "
                 f"{_interval(r[f'time_to_{p}_mean_s'], r[f'time_to_{p}_ci_low'], r[f'time_to_{p}_ci_high'], 1)}"
                 for p in pcts]
        lines.append(f"| {r['cell']} | {r['algorithm']}-{r['policy']} | "
                     f"{_interval(r['accuracy_mean_pct'], r['accuracy_ci_low'], r['accuracy_ci_high'], 2)} | "
                     + " | ".join(cells) + f" | {r['updates_mean']:.0f} |")
    if diffs.empty:
        return "\n".join(lines)
    lines += ["", "| cell | variant | against | accuracy (pts) [95% CI] | verdict | " + " | ".join(
        f"time to {p}% (%) [95% CI], pairs | verdict" for p in pcts) + " |", "|" + "---|" * (5 + 2 * len(pcts))]
    for _, r in diffs.iterrows():
        cells = [f"{_interval(r[f'time_{p}_diff_pct'], r[f'time_{p}_diff_pct_ci_low'], r[f'time_{p}_diff_pct_ci_high'], 1, True)}"
                 f", {r[f'time_{p}_pairs']} | {r[f'time_{p}_verdict']}" for p in pcts]
        lines.append(f"| {r['cell']} | {r['algorithm']}-{r['policy']} | {r['reference']} | "
                     f"{_interval(r['accuracy_diff_pts'], r['accuracy_diff_ci_low'], r['accuracy_diff_ci_high'], 2, True)}"
                     f" ({r['pairs']} seeds) | {r['accuracy_verdict']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cells(runs: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(c for c, _, _ in _order(runs)))


def accuracy_curves(evaluations: dict[str, pd.DataFrame], runs: pd.DataFrame, points: int = 200):
    """A panel per cell: the mean test accuracy over seeds against simulated time for each variant, with its
    Student-t 95% band. Each run's evaluations are interpolated on a common time grid (up to the shortest run's last
    evaluation of the variant). One colour per algorithm; omnilearn solid, uniform dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = _cells(runs)
    columns = min(3, len(cells))
    rows_n = math.ceil(len(cells) / columns)
    fig, axes = plt.subplots(rows_n, columns, figsize=(4.6 * columns, 3.6 * rows_n), sharey=True, squeeze=False)
    algorithms = list(dict.fromkeys(runs["algorithm"]))
    colours = plt.get_cmap("tab10")
    for i, cell in enumerate(cells):
        ax = axes[i // columns][i % columns]
        for c, algorithm, policy in _order(runs[runs["cell"] == cell]):
            g = runs[(runs["cell"] == c) & (runs["algorithm"] == algorithm) & (runs["policy"] == policy)]
            curves = [evaluations[p] for p in g["point_path"] if len(evaluations.get(p, [])) > 1]
            if not curves:
                continue
            start = max(float(e["time_s"].iloc[0]) for e in curves)
            end = min(float(e["time_s"].iloc[-1]) for e in curves)
            grid = np.linspace(start, end, points)
            ys = np.array([np.interp(grid, e["time_s"], e["accuracy"] * 100.0) for e in curves])
            mean = ys.mean(axis=0)
            colour = colours(algorithms.index(algorithm) % 10)
            ax.plot(grid, mean, label=f"{algorithm}, {policy}", color=colour, linewidth=1.2,
                    linestyle="-" if policy == "omnilearn" else "--")
            if len(ys) > 1:
                half = stats.t.ppf(0.975, len(ys) - 1) * ys.std(axis=0, ddof=1) / math.sqrt(len(ys))
                ax.fill_between(grid, mean - half, mean + half, color=colour, alpha=0.15)
        ax.set_title(f"{cell} ({runs[runs['cell'] == cell]['seed'].nunique()} seeds)")
        ax.set_xlabel(axis_label("time_s"))
        ax.grid(alpha=0.3)
        ax.legend(fontsize="x-small", loc="lower right")
    for j in range(len(cells), rows_n * columns):
        axes[j // columns][j % columns].set_visible(False)
    for row in axes:
        row[0].set_ylabel(f"{axis_label('accuracy')}, mean and 95% band")
    fig.suptitle("Test accuracy against simulated time per variant (algorithm, batch policy), in each cell",
                 fontsize="medium")
    fig.tight_layout()
    return fig


def final_accuracy_figure(summary: pd.DataFrame):
    """A panel per cell: each variant's mean final accuracy with its 95% interval, the variants top to bottom."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = list(dict.fromkeys(summary["cell"]))
    columns = min(3, len(cells))
    rows_n = math.ceil(len(cells) / columns)
    most = max(len(summary[summary["cell"] == c]) for c in cells)
    fig, axes = plt.subplots(rows_n, columns, figsize=(4.6 * columns, (0.9 + 0.28 * most) * rows_n), squeeze=False)
    for i, cell in enumerate(cells):
        ax = axes[i // columns][i % columns]
        s = summary[summary["cell"] == cell].reset_index(drop=True)
        y = np.arange(len(s))[::-1]
        lo = (s["accuracy_mean_pct"] - s["accuracy_ci_low"]).fillna(0.0)
        hi = (s["accuracy_ci_high"] - s["accuracy_mean_pct"]).fillna(0.0)
        for policy, colour in (("uniform", "tab:gray"), ("omnilearn", "tab:blue")):
            m = (s["policy"] == policy).to_numpy()
            if m.any():
                ax.errorbar(s["accuracy_mean_pct"][m], y[m], xerr=[lo[m], hi[m]], fmt="o", markersize=3.5,
                            color=colour, ecolor=colour, capsize=2, label=policy)
        ax.set_yticks(y)
        ax.set_yticklabels([f"{a}-{p}" for a, p in zip(s["algorithm"], s["policy"])], fontsize="x-small")
        ax.set_title(cell)
        ax.set_xlabel(f"{axis_label('final_accuracy')}, mean and 95% CI")
        ax.legend(fontsize="x-small", loc="lower left")
        ax.grid(alpha=0.3, axis="x")
    for j in range(len(cells), rows_n * columns):
        axes[j // columns][j % columns].set_visible(False)
    fig.tight_layout()
    return fig


def write_study(sweeps: list[str | Path] | str | Path, targets: list[float] | float,
                out: str | Path | None = None) -> tuple[str, list[Path]]:
    """Writes study-runs.csv, study-summary.csv, study-paired.csv, study-accuracy.png (accuracy_curves) and
    study-final.png (final_accuracy_figure) into `out` (default: the only sweep folder; required with several);
    returns the tables as Markdown and the paths."""
    sweeps = [sweeps] if isinstance(sweeps, (str, Path)) else list(sweeps)
    targets = [targets] if isinstance(targets, (int, float)) else sorted(set(targets))
    if out is None:
        if len(sweeps) != 1:
            raise ValueError("several sweep folders: name the output folder (--out)")
        out = sweeps[0]
    out = Path(out)
    evaluations: dict[str, pd.DataFrame] = {}
    runs = load_all(sweeps, targets, evaluations)
    if runs.empty:
        raise ValueError(f"{', '.join(str(Path(s) / 'sweep.csv') for s in sweeps)}: no point finished (status ok)")
    summary, diffs = summarize(runs, targets), paired(runs, targets)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "study-runs.csv", out / "study-summary.csv", out / "study-paired.csv"]
    for frame, path in zip((runs.rename(columns={"point_path": "point"}), summary, diffs), paths):
        frame.to_csv(path, index=False)
    for name, fig in (("study-accuracy.png", accuracy_curves(evaluations, runs)),
                      ("study-final.png", final_accuracy_figure(summary))):
        paths.append(out / name)
        fig.savefig(paths[-1], dpi=110)
    return format_tables(summary, diffs, targets), paths


__all__ = ["load", "load_all", "mean_ci", "summarize", "paired", "format_tables", "accuracy_curves",
           "final_accuracy_figure", "read_evaluations", "time_column", "write_study"]
