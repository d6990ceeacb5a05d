"""scripts/asp-tune.py, the driver of docs/results-asp.md's "(b) continued": the rules its design declares (the
next rate beyond a grid edge that is still the best, the choice with ties to the lower rate, the momentum at a held
effective step, the sweep files it writes) on hand-made tuning rows, and its tables from the committed per-run
tables against the page that prints them."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("asp_tune", ROOT / "scripts" / "asp-tune.py")
tune = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(tune)


def _tuning(rows):
    """rows: (workers, variant, momentum, rate, [accuracy per tuning seed])."""
    out = []
    for n, v, m, lr, accs in rows:
        for seed, acc in zip(tune.TUNING_SEEDS, accs):
            out.append({"workers": n, "variant": v, "momentum": m, "learning_rate": lr, "seed": seed,
                        "final_accuracy": acc})
    return pd.DataFrame(out)


def test_an_edge_that_is_still_the_best_gets_the_next_rate_beyond_it_and_a_middle_one_none():
    t = _tuning([
        (16, "asgd", 0.5, 0.01, [0.80, 0.82]), (16, "asgd", 0.5, 0.02, [0.79, 0.80]),  # best: the smallest
        (16, "asgd", 0.5, 0.04, [0.10, 0.10]),
        (16, "bsp", 0.9, 0.05, [0.70, 0.70]), (16, "bsp", 0.9, 0.1, [0.75, 0.75]),     # best: the largest
        (16, "bsp", 0.9, 0.2, [0.80, 0.78]),
        (4, "dc-asgd", 0.5, 0.01, [0.70, 0.70]), (4, "dc-asgd", 0.5, 0.02, [0.85, 0.85]),  # best: the middle
        (4, "dc-asgd", 0.5, 0.04, [0.80, 0.80]),
        # another momentum's better score does not move the edge: edges are searched at the default momentum
        (4, "dc-asgd", 0.0, 0.04, [0.99, 0.99]),
    ])
    assert sorted(tune.edge_points(t)) == sorted([(16, "asgd", 0.005, 0.5), (16, "bsp", 0.4, 0.9)])


def test_the_choice_is_the_best_mean_over_both_seeds_and_a_tie_goes_to_the_lower_rate():
    t = _tuning([
        (16, "asgd", 0.5, 0.01, [0.80, 0.84]), (16, "asgd", 0.5, 0.02, [0.84, 0.80]),  # tie at 0.82
        (16, "asgd", 0.0, 0.02, [0.81, 0.82]),
        (4, "ringmaster", 0.5, 0.02, [0.90, 0.70]), (4, "ringmaster", 0.9, 0.004, [0.81, 0.81]),  # 0.80 < 0.81
    ])
    c = tune.choices(t).set_index(["workers", "variant"])
    assert c.loc[(16, "asgd"), "learning_rate"] == 0.01 and c.loc[(16, "asgd"), "momentum"] == 0.5
    assert c.loc[(4, "ringmaster"), "momentum"] == 0.9
    assert c.loc[(4, "ringmaster"), "accuracy_mean_pct"] == pytest.approx(81.0)
    # The compact table names the choice and the best of the other momenta.
    table = tune.chosen_table(t)
    assert "| 4 | ringmaster | 0.004 | 0.9 | 81.00 | 0.02 | 80.00 (m 0.5, rate 0.02) |" in table


def test_the_sweep_file_gives_each_point_its_cell_rate_momentum_and_partition():
    points = [(16, "asgd-fast", 0.02, 0.5), (64, "staleness-aware", 0.32, 0.0)]
    text = tune.sweep_yaml("t", "asp", points, (1, 2), partition="sorted-shards")
    assert "workload.partition: sorted-shards" in text
    assert "workload.partition" not in tune.sweep_yaml("t", "asp", points, (1, 2))
    fast = next(line for line in text.splitlines() if "n16.asgd-fast" in line)
    # Only the four 32-core copies, at the per-worker batch of 32 (global 8 n), at the point's own rate.
    assert "count: 4, cores: 32" in fast and "cores: 6" not in fast
    assert "workload.global_batch: 128" in fast and "emulator.learning_rate: 0.02" in fast
    sa = next(line for line in text.splitlines() if "n64.staleness-aware" in line)
    assert "count: 16, cores: 6, core_speed: 3.75e+08" in sa and "emulator.momentum: 0" in sa
    labels = [m.group(1) for m in re.finditer(r"^    (n\d+\.[a-z-]+\.m[0-9.]+)-lr[0-9.e-]+:", text, re.M)]
    assert [tune.parse_label(x) for x in labels] == [(16, "asgd-fast", 0.5), (64, "staleness-aware", 0.0)]
    assert "seed: [1, 2]" in text


@pytest.mark.parametrize("csv,section", [
    ("asp-tune-runs.csv", "### The choice per rule and worker count"),
    ("asp-tune-shards-runs.csv", "### Workers that hold different data: Rescaled and the rules"),
])
def test_the_pages_choice_and_evaluation_tables_are_what_the_committed_runs_give(csv, section):
    runs = tune.read_runs(ROOT / "docs" / "data" / csv)
    tuning, ev = runs[runs["stage"] != "evaluation"], runs[runs["stage"] == "evaluation"]
    page = (ROOT / "docs" / "results-asp.md").read_text()
    assert section in page
    for table in (tune.chosen_table(tuning), tune.summary_table(ev), tune.comparisons_table(ev)):
        for line in table.splitlines()[2:]:
            assert line in page, f"{csv}: the page lacks the row {line}"
    # Every variant of every cell ran on all five evaluation seeds, at its choice.
    counts = ev.groupby(["workers", "variant"])["seed"].nunique()
    assert (counts == len(tune.EVAL_SEEDS)).all()
