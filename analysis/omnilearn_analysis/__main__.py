"""Command line: python3 -m omnilearn_analysis
{report,validate,testbed,virtual-time,asp-study,jobs-study,energy-frontier,trace-plot,check-timeline} ... (--help)."""

from __future__ import annotations

import argparse
import sys

import pandas as pd


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="omnilearn report", description=(
        "Turn OmniLearn run folders and sweep folders into PNG figures and one self-contained HTML page."))
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="figures and tables for run or sweep folders",
                         epilog="example: omnilearn report runs/paper-bsp-levels --out runs/report")
    rep.add_argument("paths", nargs="+", help="run folders (with summary.json), sweep folders (with sweep.csv) or "
                     "folders of hybrid runs (with policies.csv)")
    rep.add_argument("--out", default="report", help="output folder (default: report)")
    tp = sub.add_parser("trace-plot", help="plot an availability trace CSV (time_s,worker,fraction)",
                        epilog="example: omnilearn report trace-plot traces/data/azure-v1-16vms.csv --out azure.png")
    tp.add_argument("trace")
    tp.add_argument("--out", required=True, help="PNG file to write")
    va = sub.add_parser("validate", help="compare a simulator run with a testbed run of the same scenario",
                        epilog="example: python3 -m omnilearn_analysis validate runs/val/testbed runs/val/sim "
                               "--out runs/val")
    va.add_argument("testbed", help="testbed run folder (omnilearn emulate)")
    va.add_argument("sim", help="simulator run folder (omnilearn sim) of the same scenario")
    va.add_argument("--out", required=True, help="folder for validation.csv")
    va.add_argument("--level", help="label of the scenario in the table (default: the scenario's name)")
    va.add_argument("--window", type=int, default=20, help="steps per window of the max error (default 20)")
    va.add_argument("--warmup", type=int, default=10, help="first steps left out (default 10)")
    va.add_argument("--repeat", action="append", default=[], metavar="TESTBED_RUN",
                    help="another testbed run of the scenario, compared with the first as the simulator is "
                         "(the repeat_* columns; repeatable)")
    va.add_argument("--energy-verdict", metavar="FILE",
                    help="omnilearn validate's energy-verdict.json: the only judge of energy_within_15pct")
    tb = sub.add_parser("testbed", help="testbed results over seeds: per level, uniform -> omnilearn as median and "
                                         "range (run folders named <scenario>-<policy>-s<seed>)",
                        epilog="example: python3 -m omnilearn_analysis testbed runs/testbed-results")
    tb.add_argument("folder", help="folder of run folders (scripts/testbed-results.sh writes one)")
    vt = sub.add_parser("virtual-time", help="virtual-time training (omnilearn sim, workload.numerics: real) "
                                             "against the testbed's runs of the same scenarios and seeds",
                        epilog="example: python3 -m omnilearn_analysis virtual-time runs/tb-r1 runs/virtual-time "
                               "--out runs/virtual-time/comparison.csv")
    vt.add_argument("testbed", help="folder of testbed run folders (<scenario>-<policy>-s<seed>)")
    vt.add_argument("sim", help="folder of the simulator's run folders, named alike")
    vt.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    vt.add_argument("--levels", type=int, nargs="+", default=[1, 2, 4, 8])
    vt.add_argument("--out", required=True, help="CSV file to write")
    st = sub.add_parser("asp-study", help="asynchronous studies in virtual time (sweep folders): mean final accuracy "
                                          "and times to targets with 95%% intervals, each variant paired by seed "
                                          "against the other batch policy, plain ASGD uniform and BSP omnilearn",
                        epilog="example: python3 -m omnilearn_analysis asp-study runs/asp-study runs/asp-study-bsp "
                               "runs/asp-rules runs/asp-ringmaster --out runs/asp-answer")
    st.add_argument("sweeps", nargs="+", help="sweep folders (with sweep.csv) of scenarios/testbed/sweep-asp-study.yaml "
                                             "and its parts, or of sweep-asp-virtual-time.yaml")
    st.add_argument("--target", type=float, action="append",
                    help="target test accuracy, repeatable (default: 0.80 and 0.85)")
    st.add_argument("--out", help="folder for the tables and figures (default: the sweep folder, when there is one)")
    js = sub.add_parser("jobs-study", help="multi-job runs (omnilearn jobs run) over seeds: average, p99 JCT, "
                                           "makespan and mean and max finish-time fairness rho per workload, scheduler and job policy with 95%% intervals, "
                                           "and ratios paired by seed",
                        epilog="example: python3 -m omnilearn_analysis jobs-study runs/jobs-study")
    js.add_argument("folder", help="folder of run folders <workload>-<scheduler>-<policy>-s<seed> "
                                   "(scripts/jobs-study.sh)")
    js.add_argument("--out", help="folder for the tables and figures (default: the study folder)")
    ef = sub.add_parser("energy-frontier", help="a sweep's Pareto set of time against energy, per base scenario and "
                                                "wait charging, and its picks: the shortest time within X%% of the "
                                                "minimum energy (and the least energy within Y%% of the shortest time)",
                        epilog="example: omnilearn report energy-frontier runs/energy-traces --within 10 "
                               "--time-within 5")
    ef.add_argument("sweep", help="sweep folder (with sweep.csv) whose runs report energy")
    ef.add_argument("--within", type=float, default=10.0, metavar="X",
                    help="pick the shortest time among the points within X%% of the minimum energy (default 10)")
    ef.add_argument("--time-within", type=float, metavar="Y",
                    help="also pick the least energy among the points within Y%% of the shortest time")
    ef.add_argument("--by", action="append", metavar="AXIS",
                    help="compare points only within the same value of this axis, repeatable (default: base and "
                         "energy.wait where they are axes); --by none compares all points")
    ef.add_argument("--out", help="folder for energy-frontier.csv and .png (default: the sweep folder)")
    ct = sub.add_parser("check-timeline", help="check that a timeline.json is valid trace-event JSON")
    ct.add_argument("timeline")
    args = parser.parse_args(argv)

    from .runs import RunFormatError

    try:
        if args.command == "report":
            from .report import write_report
            print(write_report(args.paths, args.out))
        elif args.command == "validate":
            from .validate import Options, format_energy, format_table, write_validation
            table, path = write_validation(args.testbed, args.sim, args.out, args.level,
                                           Options(window=args.window, warmup=args.warmup), args.repeat,
                                           args.energy_verdict)
            print(format_table(table))
            print(format_energy(table))
            if "accuracy_max_gap_pts" in table.columns:  # the simulator trained too (omnilearn validate --train)
                r = table.iloc[0]
                print(f"accuracy curves: max gap {r['accuracy_max_gap_pts']:.2f} points at the common evaluations; "
                      f"steps to target testbed {r['testbed_steps_to_target']:.0f}, sim {r['sim_steps_to_target']:.0f}; "
                      f"time to target testbed {r['testbed_time_to_target_s']:.1f} s, "
                      f"sim {r['sim_time_to_target_s']:.1f} s")
            print(path)
        elif args.command == "testbed":
            from .testbed import format_level_table, write_testbed_results
            runs, table = write_testbed_results(args.folder)
            print(format_level_table(table))
            print(f"{args.folder}/runs.csv, {args.folder}/levels.csv ({len(runs)} runs)")
        elif args.command == "asp-study":
            from .asp_study import write_study
            text, paths = write_study(args.sweeps, args.target or [0.80, 0.85], args.out)
            print(text)
            print(", ".join(str(p) for p in paths))
        elif args.command == "jobs-study":
            from .jobs_study import write_study as write_jobs_study
            text, paths = write_jobs_study(args.folder, args.out)
            print(text)
            print(", ".join(str(p) for p in paths))
        elif args.command == "energy-frontier":
            from .energy_frontier import Rule, write_frontier
            if args.within < 0 or (args.time_within is not None and args.time_within < 0):
                raise ValueError("--within and --time-within take a percentage >= 0")
            groups = None if args.by is None else [g for g in args.by if g != "none"]
            text, paths = write_frontier(args.sweep, Rule(args.within, args.time_within), groups, args.out)
            print(text)
            print(", ".join(str(p) for p in paths))
        elif args.command == "virtual-time":
            from .virtual_time import format_table as vt_table, write_comparison
            table, path = write_comparison(args.testbed, args.sim, args.seeds, args.levels, args.out)
            print(vt_table(table))
            print(path)
        elif args.command == "trace-plot":
            from .figures import trace_availability
            trace = pd.read_csv(args.trace, comment="#")
            fig = trace_availability(trace, title=args.trace)
            fig.savefig(args.out, dpi=110)
            print(args.out)
        else:
            from .timeline import validate_timeline
            problems = validate_timeline(args.timeline)
            for p in problems:
                print(p, file=sys.stderr)
            return 1 if problems else 0
    except (RunFormatError, OSError, ValueError, pd.errors.ParserError) as e:
        print(f"omnilearn report: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
