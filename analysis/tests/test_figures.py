"""The figures say what they show: axis labels in words with units (labels.py), legends naming policies, and the
sweep figure's percentages checked against a hand-made sweep table."""

import io

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from omnilearn_analysis import figures, labels, load_run, tables

# A sweep.csv as `omnilearn sweep` writes it for two levels x three policies (named bases: the `base` column).
SWEEP_CSV = """point,base,policy.name,status,policy,total_time_s,vs_uniform_pct,vs_oracle_pct
s-hl1-uniform,hl1,uniform,ok,uniform,100,0,25
s-hl1-omnilearn,hl1,omnilearn,ok,omnilearn,80,-20,0
s-hl1-oracle,hl1,oracle,ok,oracle,80,-20,0
s-hl8-uniform,hl8,uniform,ok,uniform,200,0,100
s-hl8-omnilearn,hl8,omnilearn,ok,omnilearn,110,-45,10
s-hl8-oracle,hl8,oracle,ok,oracle,100,-50,0
"""


def sweep_table(drop_percentages=False):
    table = pd.read_csv(io.StringIO(SWEEP_CSV))
    return table.drop(columns=["vs_uniform_pct", "vs_oracle_pct"]) if drop_percentages else table


def bar_labels(ax):
    return [t.get_text() for t in ax.texts if t.get_text()]


@pytest.mark.parametrize("drop", [True, False], ids=["computed", "from-sweep.csv"])
def test_comparison_numbers_by_hand(drop):
    comparison = tables.policy_comparison(sweep_table(drop_percentages=drop))
    got = {(r["base"], r["policy"]): (r["vs_uniform_pct"], r["vs_oracle_pct"]) for _, r in comparison.iterrows()}
    assert got[("hl8", "omnilearn")] == pytest.approx((-45.0, 10.0))
    assert got[("hl8", "uniform")] == pytest.approx((0.0, 100.0))
    assert got[("hl1", "omnilearn")] == pytest.approx((-20.0, 0.0))
    assert got[("hl8", "oracle")] == pytest.approx((-50.0, 0.0))


def test_comparison_reuses_the_sweep_csv_columns():
    table = sweep_table()
    table.loc[table["point"] == "s-hl8-omnilearn", "vs_uniform_pct"] = -44.9  # as if rounded by the C++ side
    comparison = tables.policy_comparison(table)
    row = comparison[(comparison["base"] == "hl8") & (comparison["policy"] == "omnilearn")].iloc[0]
    assert row["vs_uniform_pct"] == pytest.approx(-44.9)


def test_sweep_figure_labels_and_percentages():
    table = sweep_table()
    comparison = tables.policy_comparison(table)
    fig = figures.sweep_comparison(comparison, "total_time_s", tables.group_columns(table))
    top, bottom = fig.axes
    assert top.get_ylabel() == "Simulated training time (s)"
    assert bottom.get_ylabel() == "Gap to the oracle (%)"
    assert bottom.get_xlabel() == "Heterogeneity level"
    assert [t.get_text() for t in bottom.get_xticklabels()] == ["HL1", "HL8"]
    assert "per policy and heterogeneity level" in top.get_title()
    assert [t.get_text() for t in top.get_legend().get_texts()] == [
        labels.policy_label(p) for p in ("uniform", "omnilearn", "oracle")]
    # Above each non-uniform bar its change against uniform; below, each non-oracle policy's gap to the oracle.
    assert bar_labels(top) == ["\u221220.0%", "\u221245.0%", "\u221220.0%", "\u221250.0%"]
    assert bar_labels(bottom) == ["+25.0%", "+100.0%", "0.0%", "+10.0%"]
    # The bars are the totals.
    heights = sorted(round(p.get_height()) for p in top.patches)
    assert heights == [80, 80, 100, 100, 110, 200]
    plt.close(fig)


def test_sweep_figure_without_oracle_or_levels():
    table = sweep_table()
    table = table[table["policy"] != "oracle"].rename(columns={"base": "policy.every_n"})
    table["policy.every_n"] = table["policy.every_n"].map({"hl1": "1", "hl8": "10"})
    table["vs_oracle_pct"] = float("nan")  # what sweep.csv holds when the sweep did not run the oracle
    fig = figures.sweep_comparison(tables.policy_comparison(table), "total_time_s", ["policy.every_n"])
    (ax,) = fig.axes
    assert ax.get_xlabel() == "Decision interval (iterations)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "10"]
    plt.close(fig)


def test_labels_table():
    assert labels.axis_label("total_time_s") == "Simulated training time (s)"
    assert labels.axis_label("total_time_s", backend="emulate") == "Wall-clock training time (s)"
    assert labels.axis_label("batch") == "Mini-batch size (samples)"
    assert labels.coordinate_label("base", ["hl1", "hl2"]) == "Heterogeneity level"
    assert labels.coordinate_label("base", ["small", "large"]) == "Base scenario"
    assert labels.coordinate_label("cluster.nodes[0].cores") == "cluster.nodes[0].cores"
    with pytest.raises(KeyError):
        labels.axis_label("no_such_column")


@pytest.mark.parametrize("name, x, y", [
    ("batch_sizes", "Simulated time since the start (s)", "Mini-batch size (samples)"),
    ("time_breakdown", "Worker", "Simulated time per worker (s)"),
    ("iteration_times", "Simulated time since the start (s)", "Iteration time (s)"),
])
def test_run_figures_name_their_axes(quick_run, name, x, y):
    run = load_run(quick_run)
    fig = getattr(figures, name)(run)
    (ax,) = fig.axes
    assert (ax.get_xlabel(), ax.get_ylabel()) == (x, y)
    assert run.name in ax.get_title() and labels.policy_label(run.policy) in ax.get_title()
    assert ax.get_legend() is not None
    plt.close(fig)


def test_breakdown_legend_names_the_parts(quick_run):
    fig = figures.time_breakdown(load_run(quick_run))
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert texts == ["Compute", "Communication", "Idle, waiting for the others"]
    plt.close(fig)


@pytest.mark.parametrize("end_s, unit", [(600, "s"), (86400, "hours"), (7 * 86400, "days")])
def test_trace_plot_time_unit(end_s, unit):
    trace = pd.DataFrame({"time_s": [0, end_s / 2, end_s] * 2, "worker": [0, 0, 0, 1, 1, 1],
                          "fraction": [1.0, 0.5, 1.0, 1.0, 0.0, 1.0]})
    fig = figures.trace_availability(trace)
    ax = fig.axes[0]
    assert ax.get_xlabel() == f"Trace time ({unit})"
    assert ax.get_ylabel() == "Available share of full speed (%)"
    assert max(max(line.get_xdata()) for line in ax.get_lines()) == pytest.approx(
        end_s * labels.scale({"s": "trace_time_s", "hours": "trace_time_h", "days": "trace_time_d"}[unit]))
    plt.close(fig)
