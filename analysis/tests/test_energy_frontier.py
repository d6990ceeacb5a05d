"""Energy traded against time (energy_frontier.py): the Pareto set and the two picks on hand-made sweep rows, groups by
base and wait, energy to the target when every point reached it, and the command through the CLI."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import run_cli
from omnilearn_analysis.__main__ import main
from omnilearn_analysis.energy_frontier import Rule, frontier, pareto_mask


def sweep_rows(rows: list[tuple]) -> pd.DataFrame:
    """sweep.csv as `omnilearn sweep` writes it: point, the axes, status, then summary fields."""
    return pd.DataFrame(
        [{"point": f"p{i}", "base": base, "policy.name": policy, "energy.slow_with_slack": slow, "energy.wait": wait,
          "status": status, "total_time_s": time, "energy_joules": joules}
         for i, (base, policy, slow, wait, status, time, joules) in enumerate(rows)])


# One base, waits idle: uniform+slowing is the least energy and the slowest of the frontier (the paper's HL2 shape).
HL2 = [("hl2", "uniform", False, "idle", "ok", 4500.0, 560e3),
       ("hl2", "uniform", True, "idle", "ok", 4500.0, 380e3),
       ("hl2", "omnilearn", False, "idle", "ok", 3000.0, 510e3),
       ("hl2", "omnilearn", True, "idle", "ok", 3000.0, 505e3)]


def picks(result: pd.DataFrame, column: str) -> list[str]:
    return list(result.loc[result[column], "configuration"])


def test_pareto_set_keeps_only_undominated_points():
    t = pd.Series([1.0, 2.0, 2.0, 3.0, 1.0])
    e = pd.Series([5.0, 3.0, 4.0, 1.0, 5.0])
    # (2, 4) is dominated by (2, 3); the two (1, 5) are equal and both kept.
    assert list(pareto_mask(t, e)) == [True, True, False, True, True]


@pytest.mark.parametrize("within, expected", [
    (10.0, "uniform slow_with_slack=True"),      # 505 kJ is 33% above 380 kJ: only uniform+slowing qualifies
    (33.0, "omnilearn slow_with_slack=True"),    # 505 <= 380 x 1.33 = 505.4: the 3000 s point qualifies
    (0.0, "uniform slow_with_slack=True"),
])
def test_shortest_time_within_x_percent_of_the_minimum_energy(within, expected):
    result = frontier(sweep_rows(HL2), Rule(within_energy_pct=within))
    assert picks(result, "within_energy") == [expected]
    assert picks(result, "within_time") == []
    assert set(result.loc[result["pareto"], "configuration"]) == {"uniform slow_with_slack=True",
                                                                 "omnilearn slow_with_slack=True"}
    row = result.set_index("configuration").loc["omnilearn slow_with_slack=True"]
    assert row["energy_vs_min_pct"] == pytest.approx(100.0 * (505 / 380 - 1))
    assert row["time_vs_min_pct"] == 0.0


@pytest.mark.parametrize("within_time, expected", [
    (5.0, "omnilearn slow_with_slack=True"),     # only the 3000 s points; the cheaper of them
    (50.0, "uniform slow_with_slack=True"),      # 4500 <= 3000 x 1.5: the cheapest of all
])
def test_least_energy_within_y_percent_of_the_shortest_time(within_time, expected):
    result = frontier(sweep_rows(HL2), Rule(within_energy_pct=10.0, within_time_pct=within_time))
    assert picks(result, "within_time") == [expected]


def test_ties_in_time_go_to_less_energy():
    rows = [("b", "omnilearn", False, "idle", "ok", 100.0, 20.0), ("b", "omnilearn", True, "idle", "ok", 100.0, 19.0)]
    result = frontier(sweep_rows(rows), Rule(within_energy_pct=100.0))
    assert picks(result, "within_energy") == ["omnilearn slow_with_slack=True"]
    assert list(result["pareto"]) == [False, True]


def test_points_are_compared_within_base_and_wait_and_failed_points_left_out():
    rows = HL2 + [("hl2", "uniform", False, "busy", "ok", 4500.0, 755e3),
                  ("hl2", "omnilearn", False, "busy", "ok", 3000.0, 514e3),
                  ("hl8", "uniform", False, "idle", "ok", 8900.0, 717e3),
                  ("hl8", "omnilearn", True, "idle", "ok", 4500.0, 360e3),
                  ("hl8", "omnilearn", False, "idle", "failed", None, None)]
    result = frontier(sweep_rows(rows), Rule(within_energy_pct=10.0))
    assert list(dict.fromkeys(result["group"])) == ["hl2 idle", "hl2 busy", "hl8 idle"]
    assert len(result) == 8
    chosen = result[result["within_energy"]].set_index("group")["configuration"].to_dict()
    assert chosen == {"hl2 idle": "uniform slow_with_slack=True", "hl2 busy": "omnilearn slow_with_slack=False",
                      "hl8 idle": "omnilearn slow_with_slack=True"}
    # Without groups, every point competes: hl8's 360 kJ is the least energy of all.
    everything = frontier(sweep_rows(rows), Rule(within_energy_pct=10.0), groups=[])
    assert picks(everything, "within_energy") == ["hl8 omnilearn slow_with_slack=True idle"]


def test_energy_to_target_is_used_when_every_point_reached_it():
    table = sweep_rows(HL2)
    table["time_to_target_s"] = [900.0, 900.0, 1000.0, 1000.0]
    table["energy_energy_to_target_j"] = [110e3, 90e3, 170e3, 168e3]
    result = frontier(table, Rule(within_energy_pct=10.0))
    assert result["to_target"].all()
    assert picks(result, "within_energy") == ["uniform slow_with_slack=True"]
    assert list(result["time_s"]) == [900.0, 900.0, 1000.0, 1000.0]
    # One point that never reached the target: the whole run is compared.
    table.loc[0, "time_to_target_s"] = None
    assert not frontier(table, Rule(within_energy_pct=10.0))["to_target"].any()


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="no energy"):
        frontier(sweep_rows(HL2).drop(columns=["energy_joules"]), Rule(10.0))
    with pytest.raises(ValueError, match="--by seed: not an axis"):
        frontier(sweep_rows(HL2), Rule(10.0), groups=["seed"])


def test_command_writes_the_table_and_the_figure(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    sweep_rows(HL2).to_csv(sweep / "sweep.csv", index=False)
    assert main(["energy-frontier", str(sweep), "--within", "10", "--time-within", "5"]) == 0
    out = capsys.readouterr().out
    assert "shortest time within 10% of the minimum energy: uniform slow_with_slack=True (4500.00 s, 380.00 kJ)" in out
    assert "least energy within 5% of the shortest time: omnilearn slow_with_slack=True (3000.00 s, 505.00 kJ)" in out
    written = pd.read_csv(sweep / "energy-frontier.csv")
    assert written["within_energy"].sum() == 1 and written["pareto"].sum() == 2
    assert (sweep / "energy-frontier.png").stat().st_size > 0
    assert main(["energy-frontier", str(tmp_path / "absent")]) == 1
    assert main(["energy-frontier", str(sweep), "--within", "-1"]) == 1


def test_through_the_cli_on_a_real_sweep(tmp_path):
    out = tmp_path / "sweep"
    r = run_cli("sweep", "scenarios/examples/sweep-energy.yaml", "--jobs", "2", "--quiet", "--set", "workload.epochs=1",
                "--out", str(out))
    assert r.returncode == 0, r.stderr
    r = run_cli("report", "energy-frontier", str(out), "--within", "5")
    assert r.returncode == 0, r.stderr
    # energy.yaml is HL8: OmniLearn with slowing is both the fastest and the least energy, under either wait.
    assert r.stdout.count("shortest time within 5% of the minimum energy: omnilearn slow_with_slack=True") == 2
    assert (out / "energy-frontier.csv").exists()
