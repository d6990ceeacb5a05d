#!/usr/bin/env python3
"""Derives the tables of traces/sailor_plans.h from Sailor's raw files in ../shared/traces-raw/sailor-sosp25/
(eth-easl/sailor @ cf2c8e3, MIT; Strati et al., SOSP 2025):
- traces/devices/sailor-gh200-plans.csv: the 27 measured GH200 training plans of validation-gh200/ (one row each: the
  layout, the batch, the measured iteration and gradient-reduction seconds and peak memory, and a note for each quirk
  of the raw file and how it is read);
- traces/devices/sailor-kinds.csv: GPUs per node and memory per GPU of each kind, from basic_cluster_config.json;
- traces/devices/sailor-network.csv: Sailor's fitted bandwidth polynomial and measured peak per kind, scope and
  group size, from network_coeffs_all_homo.json (checked against intra_node_bandwidths.json and the same-zone entries
  of multizone_bandwidths_het.json, the files Sailor's simulator reads).
Values are copied as written in the raw files (no rounding). Standard library only.
Usage: scripts/sailor-plans.py [--raw ../shared/traces-raw] [--plans traces/devices/sailor-gh200-plans.csv]
                               [--kinds traces/devices/sailor-kinds.csv] [--network traces/devices/sailor-network.csv]"""
import argparse
import glob
import json
import os
import sys

sys.dont_write_bytecode = True  # nothing left beside the scripts
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import derived_tables  # noqa: E402

ATTRIBUTION = ("# Sailor (MIT, Copyright (c) 2023 - present | ETH Zurich; Strati et al., SOSP 2025; "
               "eth-easl/sailor @ cf2c8e3, {files})")
# The raw folders' model names, as sailor-layers.csv and sailor-models.csv name them.
MODELS = {"OPT-350": "OPT-350", "GPT-NEO": "GPT-Neo-2.7"}
PLAN_KEYS = {"zone", "pipeline_list", "mbs", "gbs", "real", "red_grads", "max_mem", "N"}


def load(path):
    """The JSON file at `path` with its numbers kept as the text written there."""
    with open(path) as f:
        return json.load(f, parse_float=str, parse_int=str)


def fail(where, what):
    sys.exit(f"{where}: {what}")


def write_table(path, command, files, description, header, lines, notes=()):
    """One derived table (scripts/lib/derived_tables.py) with this source's attribution naming the raw `files`."""
    derived_tables.write_table(path, command, ATTRIBUTION.format(files=files), description, header, lines, notes)


def ranges(stages, n_layers, where, notes):
    """The stages' layer lists as "a-b;c-d" (inclusive, contiguous, covering 0..n-1). A stage that lists one layer of
    another stage in place of the one missing from its run (GPT-NEO's 4-stage plans list 29 in the third stage where
    19 belongs) is read with the missing layer, and a note says so; anything else is refused."""
    listed = [int(x) for s in stages for x in s]
    missing = sorted(set(range(n_layers)) - set(listed))
    out = []
    for i, stage in enumerate(stages):
        layers = [int(x) for x in stage]
        lo = layers[0]
        if layers != list(range(lo, lo + len(layers))):
            wrong = [(k, x) for k, x in enumerate(layers) if x != lo + k]
            if len(wrong) != 1 or wrong[0][0] == 0 or [lo + wrong[0][0]] != missing or \
                    listed.count(wrong[0][1]) != 2:
                fail(where, f"stage {i} lists layers {layers}: not a run, and not one misprint")
            k, x = wrong[0]
            other = next(j for j, s in enumerate(stages) if j != i and str(x) in s)
            notes.append(f"layers_per_stage lists layer {x} twice (stages {i + 1} and {other + 1} counting from 1) "
                         f"and lacks {lo + k}: read as {lo + k} in stage {i + 1}")
            layers[k] = lo + k
        out.append((layers[0], layers[-1]))
    flat = [x for a, b in out for x in range(a, b + 1)]
    if flat != list(range(n_layers)):
        notes.append(f"lists {len(flat)} layers (0-{flat[-1]}) where the model has {n_layers}")
        if flat != list(range(len(flat))):
            fail(where, f"stages {out} do not cover layers 0..{len(flat) - 1} once each")
    return ";".join(f"{a}-{b}" for a, b in out)


def plan_rows(base, kinds, layer_counts):
    """sailor-gh200-plans.csv's rows, by model folder, then nodes, then file name."""
    folder = os.path.join(base, "validation-gh200")
    files = glob.glob(os.path.join(folder, "*", "N*", "plan_config_*.json"))
    if len(files) != 27:
        fail(folder, f"{len(files)} plan files; expected the 27 of SOURCE.md")
    plans = {}
    for path in files:
        rel = os.path.relpath(path, base)
        plans[rel] = load(path)

    def order(rel):
        parts = rel.split(os.sep)
        return parts[1], int(parts[2][1:]), parts[3]

    # A measured time repeated in another plan's other field is flagged in both (the two N4_D4 plans).
    values = {}
    for rel, d in plans.items():
        values.setdefault(d["real"], []).append((rel, "real"))
        values.setdefault(d["red_grads"], []).append((rel, "red_grads"))
    for rel in sorted(plans, key=order):
        d = plans[rel]
        if set(d) != PLAN_KEYS or len(d["pipeline_list"]) != 1:
            fail(rel, f"keys {sorted(d)}; expected {sorted(PLAN_KEYS)} with one pipeline")
        model = MODELS[rel.split(os.sep)[1]]
        p = d["pipeline_list"][0]
        pp = int(p["num_stages"])
        if len(p["layers_per_stage"]) != pp or len(p["tmp_per_stage"]) != pp or len(p["dp"]) != pp:
            fail(rel, "num_stages differs from the lengths of layers_per_stage, tmp_per_stage or dp")
        dp = int(p["dp"][0])
        if any(int(x) != dp for x in p["dp"]):
            fail(rel, f"dp {p['dp']}: expected one degree for every stage")
        replicas = [r for stage in p["tmp_per_stage"] for r in stage]
        if any(len(stage) != dp for stage in p["tmp_per_stage"]):
            fail(rel, "a stage's tmp_per_stage does not list dp replicas")
        if any(len(r[0]) != 1 for r in replicas):
            fail(rel, "a replica spans several VM kinds; expected one")
        kind_set = {r[0][0][0] for r in replicas}
        tp_set = {int(r[1]) for r in replicas}
        if len(kind_set) != 1 or len(tp_set) != 1:
            fail(rel, f"kinds {kind_set}, tp degrees {tp_set}: expected one of each")
        kind, tp = kind_set.pop(), tp_set.pop()
        nodes = int(d["N"])
        gpus = pp * tp * dp
        if gpus != nodes * kinds[kind]:
            fail(rel, f"pp x tp x dp = {gpus} GPUs; N = {nodes} nodes of {kinds[kind]} {kind}")
        mbs, gbs = int(d["mbs"]), int(d["gbs"])
        if gbs % (mbs * dp) != 0:
            fail(rel, f"gbs {gbs} is not a multiple of mbs {mbs} x dp {dp}")
        notes = []
        layers = ranges(p["layers_per_stage"], layer_counts[model], rel, notes)
        if d["red_grads"] == d["real"]:
            notes.append(f"red_grads equals real ({d['real']} s): suspicious; kept as written")
        for field, other in (("red_grads", "real"), ("real", "red_grads")):
            for rel2, f2 in values[d[field]]:
                if rel2 != rel and f2 == other:
                    notes.append(f"{field} ({d[field]} s) equals {other} of {rel2}: suspicious; kept as written")
        name = os.path.basename(rel)
        if "_M" in name and f"_M{mbs}_" not in name:
            notes.append(f"the file name says {name.split('_')[4]} but mbs is {mbs}: read as written (mbs {mbs})")
        note = "; ".join(notes)
        if "," in note:
            fail(rel, "a note holds a comma")
        yield [model, rel.replace(os.sep, "/"), str(nodes), str(gpus), kind, str(pp), str(tp), str(dp), str(mbs),
               str(gbs), layers, d["real"], d["red_grads"], d["max_mem"], note]


def kind_rows(cluster):
    for kind in sorted(k for k in cluster if k != "zone"):
        yield [kind, cluster[kind]["gpus_per_node"], cluster[kind]["mem_per_gpu"]]


def network_rows(coeffs, intra, multizone):
    """sailor-network.csv's rows from network_coeffs_all_homo.json, after checking that its "intra" part is
    intra_node_bandwidths.json and its "inter" part the same-zone entries of multizone_bandwidths_het.json."""
    for kind, by_n in coeffs["intra"].items():
        if intra.get(kind) != by_n:
            fail("network_coeffs_all_homo.json", f"intra/{kind} differs from intra_node_bandwidths.json")
    for kind, by_n in coeffs["inter"].items():
        for n, v in by_n.items():
            z = multizone.get("us-central1-a", {}).get(kind, {}).get(n, {}).get("us-central1-a", {})
            if kind in z and z[kind].get(n) != v:
                fail("network_coeffs_all_homo.json", f"inter/{kind}/{n} differs from multizone_bandwidths_het.json")
    for scope in ("intra", "inter"):
        for kind in sorted(coeffs[scope]):
            for n, v in sorted(coeffs[scope][kind].items(), key=lambda kv: int(kv[0])):
                poly, peak = v
                if len(poly) != 3:
                    fail("network_coeffs_all_homo.json", f"{scope}/{kind}/{n}: {len(poly)} coefficients; expected 3")
                yield [kind, scope, n] + list(poly) + [peak]


NETWORK_NOTES = (
    "Sailor evaluates for a message of m bytes: x = log2(m / 1e6); bandwidth_GB_s = c2*x^2 + c1*x + c0; seconds = "
    "(m / 1e9) / bandwidth_GB_s (sailor/providers/gcp/model_networking.py:4-11 get_time_on_config; the same by "
    "Horner's rule in sailor/Planner/sailor_planner/cpp_src/utils/network_utils.cpp:23-31); nothing caps it",
    "a send of m bytes takes seconds(m) (sailor/profiling/profile_utils.py:233-237 estimate_send_time); an all-reduce "
    "of m bytes over D ranks 2*(D-1)*seconds(m/D) (profile_utils.py:224-230 estimate_ar_time)",
    "max_bandwidth_bytes_per_s: the largest bandwidth measured (sailor/profiling/networking/fit_func.py:22); Sailor's "
    "planner uses it only to pick the slowest link of an all-reduce (sailor/Planner/sailor_planner/cpp_src/"
    "planner_utils.cpp:224) and some baselines as a constant bandwidth",
    "c2 c1 c0: np.polyfit of the measured GB/s on log2(MB) for messages of 2^16..2^30 bytes (fit_func.py:25; "
    "sailor/profiling/networking/run_all.py:5-6); the bandwidth is the total of gpus/2 (intra) or gpus (inter) "
    "concurrent sender-receiver pairs (sailor/profiling/networking/test_sendrecv.py:57-74)",
    "gpus: intra: GPUs of one node taking part; inter: GPUs per node each sending to a peer on a second node. Sailor's "
    "simulator takes min(tp; gpus_per_node) for pipeline sends (sailor/Planner/simulations/runtime_simulator.py:617) "
    "and 1 for data-parallel all-reduce (runtime_simulator.py:470)",
    "Sailor's simulator reads the same values from multizone_bandwidths_het.json (inter: same-zone entries; no A100-80 "
    "there) and intra_node_bandwidths.json (runtime_simulator.py:167-175); A100-80's intra rows repeat A100-40's")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--raw", default="../shared/traces-raw")
    ap.add_argument("--plans", default="traces/devices/sailor-gh200-plans.csv")
    ap.add_argument("--kinds", default="traces/devices/sailor-kinds.csv")
    ap.add_argument("--network", default="traces/devices/sailor-network.csv")
    args = ap.parse_args()
    base = derived_tables.raw_folder(args.raw, "sailor-sosp25")
    command = ("# generated by: scripts/sailor-plans.py --raw ../shared/traces-raw --plans " + args.plans +
               " --kinds " + args.kinds + " --network " + args.network)
    cluster = load(os.path.join(base, "basic_cluster_config.json"))
    kinds = {k: int(v["gpus_per_node"]) for k, v in cluster.items() if k != "zone"}
    info = load(os.path.join(base, "llm_info.json"))
    layer_counts = {m: len(info[m]["1"]) for m in MODELS.values()}
    write_table(args.plans, command, "sailor/Planner/simulations/validation/clariden/",
                "one measured training plan per row on nodes of 4 GH200 (kind GH-96): gpus = pp x tp x dp = nodes x 4; "
                "layers_per_stage: each stage's layers as first-last (inclusive; 0 = embedding; last = output head) "
                "joined by ';'; measured_iteration_s = real; measured_red_grads_s = red_grads (gradient reduction); "
                "measured_max_mem_bytes = max_mem; note: each quirk of the raw file and how it is read",
                "model,file,nodes,gpus,kind,pp,tp,dp,micro_batch,global_batch,layers_per_stage,measured_iteration_s,"
                "measured_red_grads_s,measured_max_mem_bytes,note",
                plan_rows(base, kinds, layer_counts),
                ("file: the path under ../shared/traces-raw/sailor-sosp25/ (sailor/Planner/simulations/validation/"
                 "clariden/ in Sailor's repository)",))
    write_table(args.kinds, command, "sailor/Planner/simulations/configs/basic_cluster_config.json",
                "per GPU kind (Sailor's names): GPUs per node and memory per GPU in bytes",
                "kind,gpus_per_node,memory_bytes", kind_rows(cluster))
    write_table(args.network, command, "sailor/providers/network_coeffs_all_homo.json",
                "per GPU kind; scope (intra: within a node; inter: between two nodes) and gpus: Sailor's fitted "
                "bandwidth polynomial (c2 c1 c0; GB/s against log2 of the message in MB) and the peak measured",
                "kind,scope,gpus,c2,c1,c0,max_bandwidth_bytes_per_s",
                network_rows(load(os.path.join(base, "network_coeffs_all_homo.json")),
                             load(os.path.join(base, "intra_node_bandwidths.json")),
                             load(os.path.join(base, "multizone_bandwidths_het.json"))),
                NETWORK_NOTES)


if __name__ == "__main__":
    main()
