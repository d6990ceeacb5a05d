"""Readers for hybrid run folders (`omnilearn sim` of a `kind: hybrid` scenario, docs/hybrid.md "The run folder").

A hybrid run folder holds steps.csv, plans.csv, placement.csv, devices.csv, timeline.json and summary.json (whose
"shape" says it is hybrid). A scenario with several policies writes one such folder per policy plus policies.csv in
the folder above: a hybrid comparison. Every reader raises RunFormatError naming the file at fault."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .runs import RunFormatError

STEP_COLUMNS = ["step", "start_s", "step_s", "overhead_s", "micro_batches", "live_devices"]
PLAN_COLUMNS = ["step", "level", "reason", "cost_s", "predicted_saving_s", "micro_batches", "layers_per_stage"]
PLACEMENT_COLUMNS = ["from_step", "device", "kind", "node", "replica", "stage", "tp_rank"]
DEVICE_COLUMNS = ["device", "kind", "node", "compute_s", "bubble_s", "comm_s", "wait_s", "memory_bytes"]
POLICY_COLUMNS = ["policy", "steps", "total_time_s", "mean_step_s", "vs_oracle", "micro_batch_changes",
                  "layer_changes", "replans"]
# What one hybrid run folder must hold (timeline.json is optional).
RUN_FILES = ("steps.csv", "plans.csv", "placement.csv", "devices.csv", "summary.json")


@dataclass
class HybridRun:
    path: Path
    summary: dict
    steps: pd.DataFrame      # steps.csv; micro_batches as a list of ints per step
    plans: pd.DataFrame      # plans.csv; micro_batches a list, layers_per_stage a list (replica) of lists (stage)
    placement: pd.DataFrame  # placement.csv
    devices: pd.DataFrame    # devices.csv
    timeline: pd.DataFrame   # timeline.json's spans: device, name, kind (F, B, allreduce, update), start_s, end_s, step
    device_names: dict[int, str]  # timeline.json's thread names, "device 0 (GH-96, node 0)"

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def policy(self) -> str:
        return str(self.summary.get("policy", "?"))

    @property
    def end_s(self) -> float:
        if self.steps.empty:
            return 0.0
        return float(self.steps["start_s"].iloc[-1] + self.steps["step_s"].iloc[-1])

    def replica_micro_batches(self) -> pd.DataFrame:
        """Per step: start_s and one column per replica (0, 1, ...) with its micro-batches; NaN where a step had
        fewer replicas."""
        counts = pd.DataFrame(self.steps["micro_batches"].tolist(), index=self.steps.index)
        counts.insert(0, "start_s", self.steps["start_s"])
        return counts

    def placement_intervals(self) -> pd.DataFrame:
        """Which device held which (replica, stage, TP rank) when: one row per device and mapping, from_s to to_s.
        A mapping (the rows of one from_step) holds until the next; a device it does not list is idle."""
        starts = dict(zip(self.steps["step"], self.steps["start_s"]))
        froms = sorted(self.placement["from_step"].unique())
        rows = []
        for i, step in enumerate(froms):
            begin = float(starts.get(step, 0.0 if step == 0 else self.end_s))
            end = float(starts.get(froms[i + 1], self.end_s)) if i + 1 < len(froms) else self.end_s
            part = self.placement[self.placement["from_step"] == step]
            rows.append(part.assign(from_s=begin, to_s=end))
        if not rows:
            return pd.DataFrame(columns=[*PLACEMENT_COLUMNS, "from_s", "to_s"])
        return pd.concat(rows, ignore_index=True)


def _read_csv(path: Path, columns: list[str]) -> pd.DataFrame:
    if not path.is_file():
        raise RunFormatError(f"{path}: missing (expected a CSV with columns {','.join(columns)})")
    try:
        df = pd.read_csv(path, dtype={"micro_batches": str, "layers_per_stage": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise RunFormatError(f"{path}: not a readable CSV ({e})") from e
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise RunFormatError(f"{path}: missing columns {missing} (expected {','.join(columns)})")
    return df


def _numeric(df: pd.DataFrame, columns: list[str], path: Path) -> pd.DataFrame:
    for c in columns:
        values = pd.to_numeric(df[c], errors="coerce")
        bad = values.isna().to_numpy()
        if bad.any():
            row = int(bad.nonzero()[0][0])
            cell = "" if pd.isna(df[c].iloc[row]) else df[c].iloc[row]
            raise RunFormatError(f"{path}:{row + 2}: column '{c}' holds '{cell}', expected a number")  # line 1: header
        df[c] = values
    return df


def parse_counts(text, where: str) -> list[int]:
    """"32;32" -> [32, 32]. Raises RunFormatError naming `where` (file:line) otherwise."""
    try:
        return [int(v) for v in str(text).split(";")]
    except ValueError:
        raise RunFormatError(f"{where}: '{text}' is not a list of counts separated by ';'") from None


def parse_layers(text, where: str) -> list[list[int]]:
    """"19;10|20;9" -> [[19, 10], [20, 9]]: per replica (separated by '|'), layers per stage (by ';')."""
    try:
        return [[int(v) for v in part.split(";")] for part in str(text).split("|")]
    except ValueError:
        raise RunFormatError(f"{where}: '{text}' is not layers per stage (counts separated by ';', replicas by "
                             "'|')") from None


def _read_json(path: Path) -> object:
    if not path.is_file():
        raise RunFormatError(f"{path}: missing")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise RunFormatError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from e


def span_kind(name: str) -> str:
    """A timeline span's kind from its name: F<mb>[.chunk] -> "F", B<mb>[.chunk] -> "B", else the name."""
    if len(name) > 1 and name[0] in "FB" and name[1].isdigit():
        return name[0]
    return name


def _read_timeline(path: Path) -> tuple[pd.DataFrame, dict[int, str]]:
    data = _read_json(path)
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        raise RunFormatError(f"{path}: expected a traceEvents list")
    rows, names = [], {}
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            raise RunFormatError(f"{path}: traceEvents[{i}] is not an object")
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[int(e.get("tid", -1))] = str(e.get("args", {}).get("name", ""))
        elif e.get("ph") == "X":
            try:
                ts, dur = float(e["ts"]), float(e["dur"])
                rows.append((int(e["tid"]), str(e["name"]), ts / 1e6, (ts + dur) / 1e6,
                             int(e.get("args", {}).get("step", -1))))
            except (KeyError, TypeError, ValueError):
                raise RunFormatError(f"{path}: traceEvents[{i}]: a span needs tid, name, ts and dur") from None
    df = pd.DataFrame(rows, columns=["device", "name", "start_s", "end_s", "step"])
    df.insert(2, "kind", df["name"].map(span_kind))
    return df, names


def is_hybrid_run(path: str | Path) -> bool:
    """A run folder (summary.json) of a hybrid run: with steps.csv or placement.csv (no other run writes them), or
    a summary.json with a "shape". Whether the rest is there is load_hybrid_run's to say."""
    p = Path(path)
    if not (p / "summary.json").is_file():
        return False
    if (p / "steps.csv").is_file() or (p / "placement.csv").is_file():
        return True
    try:
        summary = json.loads((p / "summary.json").read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(summary, dict) and "shape" in summary


def is_hybrid_comparison(path: str | Path) -> bool:
    """A folder of several policies' hybrid runs: policies.csv and no summary.json of its own."""
    p = Path(path)
    return (p / "policies.csv").is_file() and not (p / "summary.json").exists()


def load_hybrid_run(path: str | Path) -> HybridRun:
    """Reads one hybrid run folder. Raises RunFormatError naming the file (and line) at fault."""
    p = Path(path)
    if not p.is_dir():
        raise RunFormatError(f"{p}: not a folder")
    summary = _read_json(p / "summary.json")
    if not isinstance(summary, dict) or not isinstance(summary.get("shape"), dict):
        raise RunFormatError(f"{p / 'summary.json'}: not a hybrid run's summary (no \"shape\" object)")
    steps = _numeric(_read_csv(p / "steps.csv", STEP_COLUMNS), ["step", "start_s", "step_s", "overhead_s"],
                     p / "steps.csv")
    steps["micro_batches"] = [parse_counts(v, f"{p / 'steps.csv'}:{i + 2}")
                              for i, v in enumerate(steps["micro_batches"])]
    plans = _numeric(_read_csv(p / "plans.csv", PLAN_COLUMNS), ["step", "level"], p / "plans.csv")
    plans["micro_batches"] = [parse_counts(v, f"{p / 'plans.csv'}:{i + 2}")
                              for i, v in enumerate(plans["micro_batches"])]
    plans["layers_per_stage"] = [parse_layers(v, f"{p / 'plans.csv'}:{i + 2}")
                                 for i, v in enumerate(plans["layers_per_stage"])]
    placement = _numeric(_read_csv(p / "placement.csv", PLACEMENT_COLUMNS),
                         ["from_step", "device", "node", "replica", "stage", "tp_rank"], p / "placement.csv")
    devices = _numeric(_read_csv(p / "devices.csv", DEVICE_COLUMNS),
                       ["device", "compute_s", "bubble_s", "comm_s", "wait_s"], p / "devices.csv")
    if (p / "timeline.json").exists():
        timeline, names = _read_timeline(p / "timeline.json")
    else:
        timeline, names = pd.DataFrame(columns=["device", "name", "kind", "start_s", "end_s", "step"]), {}
    return HybridRun(p, summary, steps, plans, placement, devices, timeline, names)


def load_hybrid_comparison(path: str | Path) -> tuple[pd.DataFrame, list[HybridRun]]:
    """Reads policies.csv and each policy's run folder beside it: (table, runs in the table's order)."""
    p = Path(path)
    table = _read_csv(p / "policies.csv", POLICY_COLUMNS)
    if table.empty:
        raise RunFormatError(f"{p / 'policies.csv'}: no policies listed")
    runs = []
    for policy in table["policy"].astype(str):
        folder = p / policy
        if not is_hybrid_run(folder):
            raise RunFormatError(f"{p / 'policies.csv'}: lists policy '{policy}' but {folder} is not a hybrid run "
                                 f"folder (expected {', '.join(RUN_FILES)})")
        runs.append(load_hybrid_run(folder))
    return table, runs
