"""A self-contained HTML report (figures embedded as PNG, tables as HTML) plus the PNG files, for any mix of run
folders, sweep folders and hybrid run folders (one policy, or several beside policies.csv)."""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from urllib.parse import quote

import matplotlib.pyplot as plt
import pandas as pd

from . import energy, figures, hybrid_figures, tables
from .hybrid_runs import is_hybrid_comparison, is_hybrid_run, load_hybrid_comparison, load_hybrid_run
from .jobs_study import is_jobs_run, occupancy, run_jct_cdf, run_rho_cdf
from .labels import axis_label, coordinate_label, coordinate_value, policy_label
from .runs import RunFormatError, is_run_dir, is_sweep_dir, load_run, load_sweep
from .timeline import validate_timeline


# What each figure shows, in one line: the caption under it in report.html.
CAPTIONS = {
    "jct-cdf": "Fraction of the jobs that completed within a time (job completion time: arrival to end) and whose "
               "queueing delay (arrival to first start) was within it, on a log scale.",
    "rho-cdf": "Fraction of the finished jobs whose finish-time fairness rho (completion time over the time on a 1/N "
               "share of the cluster, N the jobs it met on average) was within a value; above 1: slower than on "
               "a fair share.",
    "occupancy": "Devices of each kind that jobs held at each scheduling round; dotted lines: all devices of the "
                 "kind.",
    "job-energy": "Each job's energy (jobs.csv energy_j): joules computing, communicating, waiting at the barrier "
                  "and holding its devices in no step (restoring), stacked; right: the cluster's energy per device "
                  "kind, the jobs' and the idle power of the devices no job held.",
    "batch": "Mini-batch size of each worker over time (samples); grey lines mark the decisions that changed the "
             "plan.",
    "breakdown": "Each worker's total compute, communication and idle (waiting for the others) time, stacked.",
    "iterations": "Each iteration's duration (its slowest worker) over time; orange lines: availability changes, "
                  "red: a worker down.",
    "accuracy": "Test accuracy over time; the dashed line marks when the target accuracy was reached.",
    "staleness": "How many updates old each applied update was when it was applied (ASP).",
    "sweep": "Total time per policy at each point of the sweep's other coordinates, labelled with the change "
             "against uniform there; below, each policy's gap to the oracle (the best batch split).",
    "sweep-accuracy": "Test accuracy over time of every point of the sweep.",
    "accuracy-all": "Test accuracy over time of every run given, labelled with its policy.",
    "energy": "Each worker's energy (energy.csv): joules computing, communicating, waiting and idle, stacked.",
    "energy-vs-time": "Each point's energy against its total time, per policy.",
    "energy-split": "Each policy's energy split (mean over its points): computing, communicating, waiting, idle.",
    "hybrid-steps": "Each policy's step time (moves and restarts included) over simulated time; markers: its plan "
                    "changes after the first plan, by level (1: micro-batches, 2: layers, 3: re-plan). Steps far "
                    "above the rest are drawn at the top with their value.",
    "hybrid-timeline": "The first recorded steps of timeline.json, one row per device (kind, then replica r, stage s "
                       "and TP rank t): forward and backward passes, gradient all-reduces and optimizer updates; gaps "
                       "are bubbles and waits. The same spans open in Perfetto.",
    "hybrid-devices": "Each device's compute, bubble (idle inside its pipeline), communication (all-reduces) and "
                      "wait seconds over the run (devices.csv), stacked, grouped by GPU kind.",
    "hybrid-plans": "Above: micro-batches per replica over the run (steps.csv); dotted and dashed lines: level-2 "
                    "and level-3 changes. Below: layers per stage after each level-2/3 change (plans.csv), replicas "
                    "with the same split on one bar.",
    "hybrid-placement": "Which device held which replica (r) and stage (s) over the run (placement.csv), coloured by "
                        "stage, odd replicas lighter; blank: idle or gone; dashed lines: re-plans.",
}
HYBRID_FIGURES = (("timeline", hybrid_figures.pipeline_timeline), ("devices", hybrid_figures.device_time_split),
                  ("plans", hybrid_figures.micro_batches_and_layers), ("placement", hybrid_figures.placement_map))
RUN_FIGURES = (("batch", figures.batch_sizes), ("breakdown", figures.time_breakdown),
               ("iterations", figures.iteration_times), ("accuracy", figures.accuracy),
               ("staleness", figures.staleness))
# Drawn for every point of a sweep, written as files and linked from the sweep's section (not embedded).
POINT_FIGURES = ("batch", "breakdown", "iterations")


def _figures_for(run) -> list[tuple[str, object]]:
    return [(name, fn) for name, fn in RUN_FIGURES
            if not (name == "accuracy" and run.evaluations.empty) and not (name == "staleness" and run.mode != "asp")]


def _save(fig, png_path: Path) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    png_path.parent.mkdir(parents=True, exist_ok=True)
    png_path.write_bytes(buf.getvalue())
    return buf.getvalue()


def _embed(fig, png_path: Path, caption: str) -> str:
    data = base64.b64encode(_save(fig, png_path)).decode("ascii")
    return (f'<figure><img alt="{html.escape(png_path.name)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(png_path.name)}: {html.escape(caption)}</figcaption></figure>")


def _table(df, **kw) -> str:
    return df.to_html(index=False, na_rep="", **kw)


def _jobs_section(path: Path, out: Path, prefix: str) -> str:
    """A run of omnilearn jobs run: its summary, the JCT and rho CDFs, the devices held by kind over time and, with
    energy, the energy per job and per kind."""
    summary = json.loads((path / "summary.json").read_text())
    rows = {k: summary.get(k) for k in ("scheduler", "round_s", "jobs", "finished", "mean_jct_s", "median_jct_s",
                                        "p99_jct_s", "makespan_s")}
    rows.update({k: summary[k] for k in ("mean_rho", "max_rho") if k in summary})  # runs made before rho lack them
    rows.update({f"utilisation {k}": v for k, v in summary.get("utilisation", {}).items()})
    with_energy = energy.jobs_energy(path)
    if with_energy is not None:
        block = with_energy[1]
        rows.update({f"energy {k}": block[k] for k in ("total_j", "jobs_j", "unallocated_idle_j", "average_power_w",
                                                        "wait") if k in block})
    table = pd.DataFrame({"field": list(rows), "value": list(rows.values())})  # (_table leaves the index out)
    rho = run_rho_cdf(path)
    return (f"<h2>Jobs {html.escape(path.name)} ({html.escape(str(summary.get('scheduler')))})</h2>" + _table(table)
            + _embed(run_jct_cdf(path), out / f"{prefix}jct-cdf.png", CAPTIONS["jct-cdf"])
            + (_embed(rho, out / f"{prefix}rho-cdf.png", CAPTIONS["rho-cdf"]) if rho is not None else "")
            + _embed(occupancy(path), out / f"{prefix}occupancy.png", CAPTIONS["occupancy"])
            + (_embed(energy.job_bars(*with_energy), out / f"{prefix}job-energy.png", CAPTIONS["job-energy"])
               if with_energy is not None else ""))


def _timeline_status(path: Path) -> str:
    if not path.exists():
        return ""
    problems = validate_timeline(path)
    status = "valid trace-event JSON" if not problems else "INVALID: " + "; ".join(problems[:3])
    return f"<p>timeline.json ({html.escape(status)}): open it in Perfetto or chrome://tracing.</p>"


def _hybrid_run_parts(run, out: Path, prefix: str) -> list[str]:
    """One hybrid run's summary, figures other than the step times, and level-2/3 plan changes."""
    parts = [_table(tables.hybrid_summary(run), float_format="%.3f")]
    for name, fn in HYBRID_FIGURES:
        parts.append(_embed(fn(run), out / f"{prefix}{name}.png", CAPTIONS[f"hybrid-{name}"]))
    changes = tables.hybrid_plan_changes(run)
    if not changes.empty:
        parts += ["<h4>Layer moves and re-plans (plans.csv, levels 2 and 3)</h4>", _table(changes, float_format="%.3f")]
    parts.append(_timeline_status(run.path / "timeline.json"))
    return parts


def _hybrid_section(path: Path, loaded, out: Path, prefix: str) -> str:
    """A hybrid run folder (loaded: a HybridRun) or a folder of several policies' runs (loaded: (policies.csv,
    runs)): the policies table, the step times of every policy on one figure, then each run's figures."""
    if isinstance(loaded, tuple):
        table, runs = loaded
        name = runs[0].summary.get("scenario", {}).get("name", path.name) if runs else path.name
        parts = [f"<h2>Hybrid runs {html.escape(path.name)} ({len(runs)} policies)</h2>",
                 "<h3>Policies compared (policies.csv)</h3>", _table(table, float_format="%.3f"),
                 _embed(hybrid_figures.step_times(runs, str(name)), out / f"{prefix}steps.png",
                        CAPTIONS["hybrid-steps"])]
        for run in runs:
            parts.append(f"<h3>Policy {html.escape(run.policy)} ({html.escape(run.name)})</h3>")
            parts += _hybrid_run_parts(run, out, f"{prefix}{run.name}-")
        return "\n".join(parts)
    run = loaded
    parts = [f"<h2>Hybrid run {html.escape(run.name)} ({html.escape(run.policy)})</h2>",
             _embed(hybrid_figures.step_times([run], run.name), out / f"{prefix}steps.png", CAPTIONS["hybrid-steps"])]
    return "\n".join(parts + _hybrid_run_parts(run, out, prefix))


def _run_section(run, out: Path, prefix: str) -> str:
    parts = [f"<h2>Run {html.escape(run.name)} ({html.escape(run.mode)}, {html.escape(policy_label(run.policy))})"
             "</h2>", _table(tables.run_summary(run)),
             "<h3>Per worker</h3>", _table(tables.worker_breakdown(run), float_format="%.3f")]
    for name, fn in _figures_for(run):
        parts.append(_embed(fn(run), out / f"{prefix}{name}.png", CAPTIONS[name]))
    per_worker, reason = energy.run_energy(run.path)
    if (source := energy.energy_source(run.path)) is not None:
        parts.append(f"<p>Energy: {html.escape(source)}</p>")
    if per_worker is not None:
        parts.append(_embed(energy.worker_bars(per_worker), out / f"{prefix}energy.png", CAPTIONS["energy"]))
    elif reason is not None:
        parts.append(f"<p>No energy: {html.escape(reason)}</p>")
    parts.append(_timeline_status(run.path / "timeline.json"))
    return "\n".join(parts)


def _point_links(table, runs: dict, out: Path, prefix: str, metric: str, backend: str) -> str:
    """Writes each point's POINT_FIGURES under <out>/<prefix>points/<point>/ and returns a table that lists them
    per point with links relative to report.html."""
    group_cols = tables.group_columns(table)
    head = ["Point", *(coordinate_label(c, table[c].unique()) for c in group_cols), "Policy",
            axis_label(metric, backend), "Figures"]
    rows = []
    for _, row in table.iterrows():
        run = runs.get(row["point"])
        links = []
        if run is not None:
            for name, fn in RUN_FIGURES:
                if name not in POINT_FIGURES:
                    continue
                relative = f"{prefix}points/{row['point']}/{name}.png"
                _save(fn(run), out / relative)
                links.append(f'<a href="{html.escape(quote(relative))}">{name}</a>')
        value = pd.to_numeric(pd.Series([row.get(metric)]), errors="coerce").iloc[0]
        cells = [row["point"], *(coordinate_value(row[c]) for c in group_cols), policy_label(str(row["policy"])),
                 "" if pd.isna(value) else f"{value:.1f}"]
        status = "" if row["status"] == "ok" else f" ({row['status']})"
        rows.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) +
                    f"<td>{' '.join(links)}{html.escape(status)}</td></tr>")
    return ("<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead><tbody>" +
            "".join(rows) + "</tbody></table>")


def _sweep_section(path: Path, out: Path, prefix: str) -> str:
    table, runs = load_sweep(path)
    metric = "time_to_target_s" if "time_to_target_s" in table.columns and table["time_to_target_s"].notna().any() \
        else "total_time_s"
    backend = next(iter(runs.values())).backend if runs else "sim"
    group_cols = tables.group_columns(table)
    comparison = tables.policy_comparison(table, metric)
    shown = comparison.copy()
    for c in group_cols:
        shown[c] = shown[c].map(coordinate_value)
    shown["policy"] = shown["policy"].map(policy_label)
    parts = [f"<h2>Sweep {html.escape(path.name)} ({len(table)} points, {len(runs)} with run folders)</h2>",
             _embed(figures.sweep_comparison(comparison, metric, group_cols, backend), out / f"{prefix}bars.png",
                    CAPTIONS["sweep"]),
             "<h3>Policies compared</h3>", _table(tables.with_labels(shown, backend), float_format="%.2f")]
    energy_rows = energy.sweep_energy(table)
    if not energy_rows.empty:
        parts += ["<h3>Energy</h3>",
                  _embed(energy.energy_vs_time(energy_rows), out / f"{prefix}energy-vs-time.png",
                         CAPTIONS["energy-vs-time"]),
                  _embed(energy.split_per_policy(energy_rows), out / f"{prefix}energy-split.png",
                         CAPTIONS["energy-split"])]
    with_accuracy = [r for r in runs.values() if not r.evaluations.empty]
    if with_accuracy:
        parts.append(_embed(figures.accuracy_overlay(with_accuracy, "Test accuracy against time, every point"),
                            out / f"{prefix}accuracy.png", CAPTIONS["sweep-accuracy"]))
    parts += ["<h3>Each point's figures</h3>",
              "<ul>" + "".join(f"<li>{n}: {html.escape(CAPTIONS[n])}</li>" for n in POINT_FIGURES) + "</ul>",
              _point_links(table, runs, out, prefix, metric, backend),
              "<h3>All points (sweep.csv)</h3>", _table(table)]
    return "\n".join(parts)


def write_report(paths: list[str], out_dir: str) -> Path:
    """Writes <out_dir>/report.html and the PNGs; returns the HTML path. Raises RunFormatError for a path that is
    neither a run folder nor a sweep folder nor a hybrid comparison, or a hybrid folder that does not parse."""
    out = Path(out_dir)
    hybrid = {}
    for p in paths:  # every input is checked (hybrid ones read) before anything is written
        path = Path(p)
        if is_hybrid_comparison(path):
            hybrid[p] = load_hybrid_comparison(path)
        elif is_hybrid_run(path):
            hybrid[p] = load_hybrid_run(path)
        elif not (is_jobs_run(path) or is_sweep_dir(path) or is_run_dir(path)):
            raise RunFormatError(f"{path}: neither a run folder (summary.json) nor a sweep folder (sweep.csv) nor "
                                 "a folder of hybrid runs (policies.csv)")
    out.mkdir(parents=True, exist_ok=True)
    sections = []
    runs_with_accuracy = []
    for i, p in enumerate(paths):
        path = Path(p)
        prefix = f"{i:02d}-{path.name}-"
        if p in hybrid:
            sections.append(_hybrid_section(path, hybrid[p], out, prefix))
        elif is_jobs_run(path):
            sections.append(_jobs_section(path, out, prefix))
        elif is_sweep_dir(path):
            sections.append(_sweep_section(path, out, prefix))
        elif is_run_dir(path):
            run = load_run(path)
            runs_with_accuracy += [run] if not run.evaluations.empty else []
            sections.append(_run_section(run, out, prefix))
    if len(runs_with_accuracy) > 1:  # the policies' accuracy curves side by side
        sections.insert(0, "<h2>Accuracy against time</h2>" +
                        _embed(figures.accuracy_overlay(runs_with_accuracy), out / "accuracy-all.png",
                               CAPTIONS["accuracy-all"]))
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>OmniLearn report</title><style>"
            "body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:collapse;font-size:12px}"
            "td,th{border:1px solid #ccc;padding:2px 6px}img{max-width:100%}"
            "figcaption{font-size:13px;color:#444;margin-bottom:1em}</style></head><body>"
            "<h1>OmniLearn report</h1>" + "\n".join(sections) + "</body></html>")
    target = out / "report.html"
    tmp = target.with_suffix(".html.tmp")
    tmp.write_text(page)
    tmp.replace(target)
    return target
