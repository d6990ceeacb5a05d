#include "trace_command.h"

#include <boost/program_options.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/subcommand_line.h"
#include "omnilearn/traces/availability_trace.h"
#include "omnilearn/traces/trace_file.h"
#include "omnilearn/traces/trace_generators.h"
#include "omnilearn/traces/trace_importer.h"
#include "omnilearn/traces/trace_operations.h"
#include "omnilearn/traces/trace_statistics.h"


namespace po = boost::program_options;
namespace ot = omnilearn::traces;

namespace {

using omnilearn::cli::command_text;
using omnilearn::cli::parse_subcommand;
using omnilearn::cli::parse_window;

constexpr const char* kUsage =
    "usage: omnilearn trace <import|synth|stats> [options]   (each takes --help)\n\n"
    "  import   convert a raw public trace into the trace format (traces/FORMAT.md)\n"
    "  synth    generate a trace: the paper's HL routines, Markov on/off, random walk, diurnal\n"
    "  stats    per-worker availability, time down, changes, and the heterogeneity level\n\n"
    "examples:\n"
    "  omnilearn trace stats traces/data/azure-v1-16vms.csv\n"
    "  omnilearn trace synth markov --workers 8 --duration 7200 --mtbf 900 --mttr 120 --output m.csv\n"
    "  omnilearn trace import --format lanl --input LA-UR-05-7318-failure-data-1996-2005.csv --system 20 \\\n"
    "      --max-workers 64 --select most-active --output lanl.csv\n"
    "  omnilearn report trace-plot traces/data/lanl-64nodes.csv --out lanl.png   (plot a trace)\n";

int fail(const omnilearn::Status& status) { return omnilearn::cli::fail_with("omnilearn trace", status); }

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int run_import(const std::vector<std::string>& args) {
  std::string format;
  std::string select = "source";
  std::string nodes;
  std::string window;
  std::size_t map_workers = 0;
  double time_scale = 1.0;
  double duration = 0.0;
  double step = 0.0;
  ot::ImportOptions o;
  std::string output;
  po::options_description desc("omnilearn trace import: convert a raw public trace into a trace file");
  desc.add_options()("help,h", "show this help")(
      "format", po::value(&format)->required(),
      "azure-v1 | bitbrains | alibaba-2018 | alibaba-genai | philly | helios | azure-noise | lanl | titan | "
      "alibaba-2017")("input", po::value(&o.input)->required(), "raw file (bitbrains: a file or folder)")(
      "output", po::value(&output)->required(), "trace file to write (atomically)")(
      "max-workers", po::value(&o.max_workers)->default_value(16),
      "nodes to keep, 0 = all (philly/helios/alibaba-2018: nodes to simulate)")(
      "select", po::value(&select)->default_value("source"), "source (source order) | most-active")(
      "nodes", po::value(&nodes), "comma-separated source node names (overrides --select)")(
      "system", po::value(&o.lanl_system)->default_value("20"), "lanl: System to import")(
      "repair-time", po::value(&o.repair_time_s)->default_value(600.0), "alibaba-2017: seconds down per error")(
      "seed", po::value(&o.seed)->default_value(1), "philly/helios: seed for which nodes are taken")(
      "clip", po::value(&window), "T0:T1 keep the window [T0,T1) s of the source, re-based to 0")(
      "resample", po::value(&step), "STEP average over fixed steps of STEP s (after --clip)")(
      "time-scale", po::value(&time_scale), "F multiply all times by F (after --resample)")(
      "duration", po::value(&duration), "S scale time so the trace lasts S s (instead of --time-scale)")(
      "map-workers", po::value(&map_workers), "M map the nodes onto M workers w0..w{M-1} round-robin");
  const char* examples =
      "  omnilearn trace import --format azure-v1 --input azure_v1_avg_cpu_100vms_5min.csv \\\n"
      "      --max-workers 16 --clip 0:172800 --output azure-v1-16vms.csv\n"
      "  omnilearn trace import --format lanl --input LA-UR-05-7318-failure-data-1996-2005.csv --system 20 \\\n"
      "      --max-workers 64 --select most-active --time-scale 0.001 --output lanl-64nodes.csv\n";
  po::variables_map vm;
  if (auto done = parse_subcommand(args, desc, {}, vm, examples)) return *done;
  const auto f = ot::parse_import_format(format);
  if (!f) return fail(omnilearn::Status::invalid_argument("--format '" + format + "' is not known; see --help"));
  o.format = *f;
  if (select != "source" && select != "most-active") {
    return fail(omnilearn::Status::invalid_argument("--select '" + select + "'; expected source or most-active"));
  }
  o.selection = select == "most-active" ? ot::NodeSelection::kMostActive : ot::NodeSelection::kSourceOrder;
  o.nodes = split_list(nodes);
  auto trace = ot::import_trace(o);
  if (!trace.is_ok()) return fail(trace.status());
  if (!window.empty()) {
    const auto w = parse_window(window);
    if (!w) return fail(omnilearn::Status::invalid_argument("--clip '" + window + "'; expected T0:T1"));
    trace = ot::clip(*trace, w->first, w->second);
    if (!trace.is_ok()) return fail(trace.status());
  }
  if (vm.count("resample") != 0U) {
    trace = ot::resample(*trace, step);
    if (!trace.is_ok()) return fail(trace.status());
  }
  if (vm.count("duration") != 0U) {
    trace = ot::scale_to_duration(*trace, duration);
  } else if (vm.count("time-scale") != 0U) {
    trace = ot::scale_time(*trace, time_scale);
  }
  if (!trace.is_ok()) return fail(trace.status());
  if (vm.count("map-workers") != 0U) {
    trace = ot::map_round_robin(*trace, map_workers);
    if (!trace.is_ok()) return fail(trace.status());
  }
  const omnilearn::Status st =
      ot::write_trace_file(*trace, output, "generated by: " + command_text("omnilearn trace import", args));
  if (!st.is_ok()) return fail(st);
  std::cout << "wrote " << output << ": " << trace->worker_count() << " workers, " << trace->duration() << " s\n";
  return 0;
}

int run_synth(const std::vector<std::string>& args) {
  std::string kind;
  std::string output;
  std::uint64_t seed = 1;
  std::size_t workers = 4;
  double duration = 3600.0;
  ot::MarkovOptions markov;
  ot::RandomWalkOptions walk;
  ot::DiurnalOptions diurnal;
  ot::HlScheduleOptions hl;
  po::options_description desc("omnilearn trace synth KIND: generate a synthetic trace");
  desc.add_options()("help,h", "show this help")(
      "kind", po::value(&kind)->required(), "hl1 | hl2 | hl4 | hl8 | hl-dynamic | markov | random-walk | diurnal")(
      "output", po::value(&output)->required(), "trace file to write (atomically)")(
      "seed", po::value(&seed)->default_value(1), "random seed (logged in the file)")(
      "workers", po::value(&workers)->default_value(4), "workers (not for hl*: always 4)")(
      "duration", po::value(&duration)->default_value(3600.0), "seconds (diurnal default 86400)")(
      "epoch-s", po::value(&hl.epoch_s)->default_value(1.0), "hl*: seconds per epoch (1 = epoch schedule)")(
      "epochs", po::value(&hl.epochs)->default_value(45), "hl1..hl8: epochs covered")(
      "mtbf", po::value(&markov.mtbf_s)->default_value(600.0), "markov: mean up time, s")(
      "mttr", po::value(&markov.mttr_s)->default_value(60.0), "markov: mean down time, s")(
      "step", po::value(&walk.step_s)->default_value(10.0), "random-walk: step, s (diurnal: 300)")(
      "sigma", po::value(&walk.sigma)->default_value(0.05), "random-walk: std dev per step")(
      "min", po::value(&walk.min_fraction)->default_value(0.2), "random-walk: lower bound")(
      "max", po::value(&walk.max_fraction)->default_value(1.0), "random-walk: upper bound (and start)")(
      "period", po::value(&diurnal.period_s)->default_value(86400.0), "diurnal: period, s")(
      "amplitude", po::value(&diurnal.amplitude)->default_value(0.25), "diurnal: amplitude")(
      "mean", po::value(&diurnal.mean)->default_value(0.7), "diurnal: mean availability");
  po::positional_options_description pos;
  pos.add("kind", 1);
  const char* examples =
      "  omnilearn trace synth hl-dynamic --epoch-s 30 --output hl-dynamic.csv\n"
      "  omnilearn trace synth markov --workers 8 --duration 7200 --mtbf 900 --mttr 120 --seed 7 --output m.csv\n"
      "  omnilearn trace synth diurnal --workers 16 --duration 172800 --amplitude 0.3 --output d.csv\n";
  po::variables_map vm;
  if (auto done = parse_subcommand(args, desc, pos, vm, examples)) return *done;
  omnilearn::Result<ot::AvailabilityTrace> trace = omnilearn::Status::invalid_argument(
      "KIND '" + kind + "' is not known; expected hl1, hl2, hl4, hl8, hl-dynamic, markov, random-walk or diurnal");
  if (kind.rfind("hl", 0) == 0) {
    const std::vector<std::pair<std::string, ot::HlRoutine>> routines{{"hl1", ot::HlRoutine::kHl1},
                                                                      {"hl2", ot::HlRoutine::kHl2},
                                                                      {"hl4", ot::HlRoutine::kHl4},
                                                                      {"hl8", ot::HlRoutine::kHl8},
                                                                      {"hl-dynamic", ot::HlRoutine::kDynamic}};
    for (const auto& [name, routine] : routines) {
      if (name == kind) {
        hl.routine = routine;
        trace = ot::generate_hl_schedule(hl);
      }
    }
  } else if (kind == "markov") {
    markov.workers = workers;
    markov.duration_s = duration;
    markov.seed = seed;
    trace = ot::generate_markov_on_off(markov);
  } else if (kind == "random-walk") {
    walk.workers = workers;
    walk.duration_s = duration;
    walk.seed = seed;
    walk.start = walk.max_fraction;
    trace = ot::generate_random_walk(walk);
  } else if (kind == "diurnal") {
    diurnal.workers = workers;
    diurnal.duration_s = vm["duration"].defaulted() ? 86400.0 : duration;
    diurnal.step_s = vm["step"].defaulted() ? 300.0 : walk.step_s;
    diurnal.seed = seed;
    trace = ot::generate_diurnal(diurnal);
  }
  if (!trace.is_ok()) return fail(trace.status());
  const omnilearn::Status st =
      ot::write_trace_file(*trace, output, "generated by: " + command_text("omnilearn trace synth", args));
  if (!st.is_ok()) return fail(st);
  std::cout << "wrote " << output << ": " << trace->worker_count() << " workers, " << trace->duration() << " s\n";
  return 0;
}

int run_stats(const std::vector<std::string>& args) {
  std::string file;
  po::options_description desc("omnilearn trace stats FILE: per-worker availability and heterogeneity");
  desc.add_options()("help,h", "show this help")("file", po::value(&file)->required(), "trace file");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (auto done = parse_subcommand(args, desc, pos, vm, "  omnilearn trace stats traces/data/lanl-64nodes.csv\n")) return *done;
  const auto trace = ot::read_trace_file(file);
  if (!trace.is_ok()) return fail(trace.status());
  const ot::TraceStatistics st = ot::compute_statistics(*trace);
  std::printf("%s: %zu workers, duration %.6g s%s\n", file.c_str(), trace->worker_count(), st.duration_s,
              trace->loop_after_s() ? " (loops)" : "");
  std::printf("%-24s %10s %8s %8s %12s %8s\n", "worker", "mean", "min", "max", "down_s", "changes");
  for (const ot::WorkerStatistics& w : st.workers) {
    std::printf("%-24s %10.4f %8.4f %8.4f %12.6g %8zu\n", w.name.c_str(), w.mean_fraction, w.min_fraction,
                w.max_fraction, w.down_s, w.change_count);
  }
  std::printf("heterogeneity (max/min among live workers): mean %.4g, max %.4g, %zu steps, min live workers %zu\n",
              st.mean_heterogeneity, st.max_heterogeneity, st.heterogeneity.size(), st.min_live_workers);
  return 0;
}

}  // namespace

int run_trace_command(const std::vector<std::string>& args) {
  return omnilearn::cli::run_subcommand("omnilearn trace", kUsage, args,
                                        {{"import", run_import}, {"synth", run_synth}, {"stats", run_stats}});
}
