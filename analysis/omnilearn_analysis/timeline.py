"""Checks that a timeline.json is valid Chrome trace-event JSON (what Perfetto and chrome://tracing load)."""

from __future__ import annotations

import json
from pathlib import Path

_REQUIRED = {"X": ("name", "ts", "dur", "pid", "tid"), "i": ("name", "ts", "pid", "s"), "I": ("name", "ts", "pid"),
             "M": ("name", "pid", "args"), "B": ("name", "ts", "pid", "tid"), "E": ("ts", "pid", "tid"),
             "C": ("name", "ts", "pid", "args")}


def validate_timeline(path: str | Path) -> list[str]:
    """Returns the problems found (an empty list means valid)."""
    try:
        data = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        return [f"{path}:{e.lineno}: not JSON ({e.msg})"]
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list):
        return [f"{path}: expected a traceEvents array"]
    problems = []
    for i, ev in enumerate(events):
        ph = ev.get("ph") if isinstance(ev, dict) else None
        if ph not in _REQUIRED:
            problems.append(f"event {i}: unknown phase {ph!r}")
            continue
        missing = [k for k in _REQUIRED[ph] if k not in ev]
        if missing:
            problems.append(f"event {i} ({ph}): missing {missing}")
        if ph == "X" and isinstance(ev.get("dur"), (int, float)) and ev["dur"] < 0:
            problems.append(f"event {i}: negative duration")
    return problems
