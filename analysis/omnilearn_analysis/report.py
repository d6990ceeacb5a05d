"""A self-contained HTML report (figures embedded as PNG, tables as HTML) plus the PNG files, for any mix of run
folders and sweep folders."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import matplotlib.pyplot as plt

from . import figures, tables
from .runs import RunFormatError, is_run_dir, is_sweep_dir, load_run, load_sweep
from .timeline import validate_timeline


def _embed(fig, png_path: Path) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    png_path.write_bytes(buf.getvalue())
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="{html.escape(png_path.name)}" src="data:image/png;base64,{data}">'


def _run_section(run, out: Path, prefix: str) -> str:
    parts = [f"<h2>Run {html.escape(run.name)} ({html.escape(run.mode)}, {html.escape(run.policy)})</h2>",
             tables.run_summary(run).to_html(index=False, na_rep=""),
             "<h3>Per worker</h3>", tables.worker_breakdown(run).to_html(index=False, float_format="%.3f")]
    for name, fn in (("batch", figures.batch_sizes), ("breakdown", figures.time_breakdown),
                     ("iterations", figures.iteration_times), ("accuracy", figures.accuracy),
                     ("staleness", figures.staleness)):
        if name == "accuracy" and run.evaluations.empty:
            continue
        if name == "staleness" and run.mode != "asp":
            continue
        parts.append(_embed(fn(run), out / f"{prefix}{name}.png"))
    timeline = run.path / "timeline.json"
    if timeline.exists():
        problems = validate_timeline(timeline)
        status = "valid trace-event JSON" if not problems else "INVALID: " + "; ".join(problems[:3])
        parts.append(f"<p>timeline.json ({html.escape(status)}): open it in Perfetto or chrome://tracing.</p>")
    return "\n".join(parts)


def _sweep_section(path: Path, out: Path, prefix: str) -> str:
    table, runs = load_sweep(path)
    metric = "time_to_target_s" if "time_to_target_s" in table.columns and table["time_to_target_s"].notna().any() \
        else "total_time_s"
    comparison = tables.policy_comparison(table, metric)
    parts = [f"<h2>Sweep {html.escape(path.name)} ({len(table)} points, {len(runs)} with run folders)</h2>",
             "<h3>Policies compared</h3>", comparison.to_html(index=False, float_format="%.2f", na_rep=""),
             _embed(figures.sweep_bars(table, metric), out / f"{prefix}bars.png"),
             "<h3>All points</h3>", table.to_html(index=False, na_rep="")]
    with_accuracy = [r for r in runs.values() if not r.evaluations.empty]
    if with_accuracy:
        parts.insert(4, _embed(figures.accuracy_overlay(with_accuracy, "test accuracy against time, every point"),
                               out / f"{prefix}accuracy.png"))
    return "\n".join(parts)


def write_report(paths: list[str], out_dir: str) -> Path:
    """Writes <out_dir>/report.html and the PNGs; returns the HTML path. Raises RunFormatError for a path that is
    neither a run folder nor a sweep folder."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sections = []
    runs_with_accuracy = []
    for i, p in enumerate(paths):
        path = Path(p)
        prefix = f"{i:02d}-{path.name}-"
        if is_sweep_dir(path):
            sections.append(_sweep_section(path, out, prefix))
        elif is_run_dir(path):
            run = load_run(path)
            runs_with_accuracy += [run] if not run.evaluations.empty else []
            sections.append(_run_section(run, out, prefix))
        else:
            raise RunFormatError(f"{path}: neither a run folder (summary.json) nor a sweep folder (sweep.csv)")
    if len(runs_with_accuracy) > 1:  # the policies' accuracy curves side by side
        sections.insert(0, "<h2>Accuracy against time</h2>" +
                        _embed(figures.accuracy_overlay(runs_with_accuracy), out / "accuracy-all.png"))
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>OmniLearn report</title><style>"
            "body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:collapse;font-size:12px}"
            "td,th{border:1px solid #ccc;padding:2px 6px}img{max-width:100%}</style></head><body>"
            "<h1>OmniLearn report</h1>" + "\n".join(sections) + "</body></html>")
    target = out / "report.html"
    tmp = target.with_suffix(".html.tmp")
    tmp.write_text(page)
    tmp.replace(target)
    return target
