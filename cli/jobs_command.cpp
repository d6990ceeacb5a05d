#include "jobs_command.h"

#include <boost/program_options.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli/progress_bar.h"
#include "cli/stop_signals.h"
#include "cli/subcommand_line.h"
#include "omnilearn/base/install_layout.h"
#include "omnilearn/run/run_folder.h"
#include "omnilearn/scenarios/device_cluster.h"
#include "omnilearn/sim/cluster_simulation.h"
#include "omnilearn/traces/device_speeds.h"
#include "omnilearn/traces/job_file.h"
#include "omnilearn/traces/job_generators.h"
#include "omnilearn/traces/job_importer.h"
#include "omnilearn/traces/packed_speeds.h"
#include "omnilearn/traces/text_file.h"

namespace po = boost::program_options;
namespace ot = omnilearn::traces;

namespace {

using omnilearn::cli::command_text;
using omnilearn::cli::parse_subcommand;
using omnilearn::cli::parse_window;

constexpr const char* kUsage =
    "usage: omnilearn jobs <run|import|generate|check> [options]   (each takes --help)\n\n"
    "  run       simulate a job file on a heterogeneous cluster under a scheduler: JCTs, allocations\n"
    "  import    convert a Pollux workload or a Philly-shaped job trace into a job file (traces/JOBS.md)\n"
    "  generate  draw a Philly-like workload: job sizes and durations from Philly, Poisson arrivals at a load\n"
    "  check     read a job file and summarise it (jobs, arrivals, workers, models and their device speeds)\n\n"
    "examples:\n"
    "  omnilearn jobs generate --jobs 160 --load 0.8 --cluster-gpus 64 --seed 1 --output jobs.csv\n"
    "  omnilearn jobs check jobs.csv\n"
    "  omnilearn jobs run jobs.csv --cluster gavel --scheduler gavel --out runs/jobs-gavel\n"
    "  omnilearn jobs import --format pollux --input workload-6.csv --output pollux-6.csv\n";

int fail(const omnilearn::Status& status) {
  std::cerr << "omnilearn jobs: " << status.message() << "\n";
  return 1;
}

// The shipped device tables: beside the source tree or the installed data, else relative to the working folder.
std::string shipped(const std::string& file) {
  const omnilearn::InstallLayout layout = omnilearn::current_install_layout();
  const std::string rel = "traces/devices/" + file;
  return layout.data_dir.empty() ? rel : (layout.data_dir / rel).string();
}

// Options every subcommand that converts (GPUs, duration) records into jobs shares.
struct Conversion {
  std::string kinds = shipped("device-kinds.csv");
  std::string speeds = shipped("device-speeds.csv");
  std::string policy = "uniform";
  std::string mode = "bsp";
  std::string reference = "t4";
  void add(po::options_description& desc) {
    desc.add_options()("batch-policy", po::value(&policy)->default_value(policy), "every job's batch policy")(
        "mode", po::value(&mode)->default_value(mode), "every job's mode: bsp | asp")(
        "reference-device", po::value(&reference)->default_value(reference),
        "philly: the device kind the durations were measured on (sizes the work)")(
        "kinds", po::value(&kinds)->default_value(kinds), "device kinds table")(
        "speeds", po::value(&speeds)->default_value(speeds), "device speeds table");
  }
};

int run_import(const std::vector<std::string>& args) {
  std::string format;
  std::string output;
  std::string window;
  Conversion conv;
  ot::JobImportOptions o;
  po::options_description desc("omnilearn jobs import: convert a public job workload into a job file");
  desc.add_options()("help,h", "show this help")("format", po::value(&format)->required(), "pollux | philly")(
      "input", po::value(&o.input)->required(), "raw file")("output", po::value(&output)->required(),
                                                            "job file to write (atomically)")(
      "cluster", po::value(&o.cluster), "philly: keep one virtual cluster")(
      "min-duration", po::value(&o.min_duration_s)->default_value(0.0), "philly: drop jobs shorter than S s")(
      "clip", po::value(&window), "philly: T0:T1 keep arrivals in [T0,T1) s from the first, re-based to 0")(
      "max-jobs", po::value(&o.max_jobs)->default_value(0), "philly: keep the first N jobs (0 = all)")(
      "seed", po::value(&o.seed)->default_value(1), "philly: seed of the application coin");
  conv.add(desc);
  const char* examples =
      "  omnilearn jobs import --format pollux --input workload-6.csv --batch-policy omnilearn --output pollux-6.csv\n"
      "  omnilearn jobs import --format philly --input philly.csv --min-duration 60 --clip 0:86400 \\\n"
      "      --max-jobs 500 --output philly-day1.csv\n";
  po::variables_map vm;
  if (auto done = parse_subcommand(args, desc, {}, vm, examples)) return *done;
  const auto f = ot::parse_job_import_format(format);
  if (!f) return fail(omnilearn::Status::invalid_argument("--format '" + format + "'; expected pollux or philly"));
  o.format = *f;
  const auto mode = ot::parse_job_mode(conv.mode);
  if (!mode) return fail(omnilearn::Status::invalid_argument("--mode '" + conv.mode + "'; expected bsp or asp"));
  o.mode = *mode;
  o.batch_policy = conv.policy;
  if (!window.empty()) {
    const auto w = parse_window(window);
    if (!w) return fail(omnilearn::Status::invalid_argument("--clip '" + window + "'; expected T0:T1 in seconds"));
    std::tie(o.clip_from_s, o.clip_to_s) = *w;
  }
  std::optional<ot::DeviceSpeedTable> speeds;
  if (o.format == ot::JobImportFormat::kPhilly) {
    auto t = ot::read_device_speed_table(conv.kinds, conv.speeds);
    if (!t.is_ok()) return fail(t.status());
    speeds = std::move(t).value();
    o.philly.speeds = &*speeds;
    o.philly.reference_device = conv.reference;
  }
  auto jobs = ot::import_jobs(o);
  if (!jobs.is_ok()) return fail(jobs.status());
  const omnilearn::Status st =
      ot::write_job_file(*jobs, output, "generated by: " + command_text("omnilearn jobs import", args));
  if (!st.is_ok()) return fail(st);
  std::cout << "wrote " << output << ": " << jobs->size() << " jobs\n";
  return 0;
}

int run_generate(const std::vector<std::string>& args) {
  std::string output;
  std::string from;
  Conversion conv;
  ot::PhillyLikeOptions o;
  po::options_description desc("omnilearn jobs generate: a Philly-like workload with Poisson arrivals");
  desc.add_options()("help,h", "show this help")("output", po::value(&output)->required(),
                                                 "job file to write (atomically)")(
      "jobs", po::value(&o.jobs)->default_value(160), "number of jobs")(
      "load", po::value(&o.load)->default_value(1.0), "offered load: rate x mean GPU-seconds / cluster GPUs")(
      "cluster-gpus", po::value(&o.cluster_gpus)->default_value(64), "GPUs of the cluster the load refers to")(
      "seed", po::value(&o.seed)->default_value(1), "random seed (logged in the file)")(
      "from", po::value(&from), "draw sizes from this Philly-shaped trace instead of the built-in distribution");
  conv.add(desc);
  const char* examples =
      "  omnilearn jobs generate --jobs 160 --load 0.8 --cluster-gpus 64 --seed 1 --output jobs.csv\n"
      "  omnilearn jobs generate --jobs 5120 --load 1.2 --cluster-gpus 2048 --batch-policy omnilearn --output big.csv\n";
  po::variables_map vm;
  if (auto done = parse_subcommand(args, desc, {}, vm, examples)) return *done;
  const auto mode = ot::parse_job_mode(conv.mode);
  if (!mode) return fail(omnilearn::Status::invalid_argument("--mode '" + conv.mode + "'; expected bsp or asp"));
  auto speeds = ot::read_device_speed_table(conv.kinds, conv.speeds);
  if (!speeds.is_ok()) return fail(speeds.status());
  o.conversion = {&*speeds, conv.reference, conv.policy, *mode};
  if (!from.empty()) {
    ot::JobImportOptions in;
    in.input = from;
    in.min_duration_s = 60.0;  // as Pollux's generator filters the trace
    auto sizes = ot::read_philly_sizes(in);
    if (!sizes.is_ok()) return fail(sizes.status());
    o.sizes = std::move(sizes).value();
  }
  auto g = ot::generate_philly_like(o);
  if (!g.is_ok()) return fail(g.status());
  const std::string note = from.empty() ? ot::philly_size_distribution_note() : "sizes drawn from " + from;
  const omnilearn::Status st = ot::write_job_file(
      g->jobs, output,
      "generated by: " + command_text("omnilearn jobs generate", args) + "\n" + note + "\nseed=" + std::to_string(o.seed) +
          " arrival_rate_per_s=" + ot::shortest_number(g->arrival_rate_per_s) +
          " mean_gpu_seconds=" + ot::shortest_number(g->mean_gpu_seconds));
  if (!st.is_ok()) return fail(st);
  std::printf("wrote %s: %zu jobs over %.6g s (mean gap %.6g s)\n", output.c_str(), g->jobs.size(),
              g->jobs.back().arrival_s, 1.0 / g->arrival_rate_per_s);
  return 0;
}

int run_check(const std::vector<std::string>& args) {
  std::string file;
  Conversion conv;
  po::options_description desc("omnilearn jobs check FILE: read a job file and summarise it");
  desc.add_options()("help,h", "show this help")("file", po::value(&file)->required(), "job file")(
      "kinds", po::value(&conv.kinds)->default_value(conv.kinds), "device kinds table")(
      "speeds", po::value(&conv.speeds)->default_value(conv.speeds), "device speeds table");
  po::positional_options_description pos;
  pos.add("file", 1);
  po::variables_map vm;
  if (auto done = parse_subcommand(args, desc, pos, vm, "  omnilearn jobs check jobs.csv\n")) return *done;
  const auto jobs = ot::read_job_file(file);
  if (!jobs.is_ok()) return fail(jobs.status());
  const auto speeds = ot::read_device_speed_table(conv.kinds, conv.speeds);
  if (!speeds.is_ok()) return fail(speeds.status());
  std::int64_t min_w = jobs->front().workers;
  std::int64_t max_w = min_w;
  double sum_w = 0.0;
  std::size_t elastic = 0;
  std::map<std::string, std::size_t> models;
  std::map<std::string, std::size_t> policies;
  for (const ot::JobSpec& j : *jobs) {
    min_w = std::min(min_w, j.workers);
    max_w = std::max(max_w, j.workers);
    sum_w += static_cast<double>(j.workers);
    elastic += j.elastic() ? 1 : 0;
    ++models[j.model];
    ++policies[j.batch_policy];
  }
  std::printf("%s: %zu jobs arriving over %.6g s; workers %lld..%lld (mean %.3g), %zu elastic\n", file.c_str(),
              jobs->size(), jobs->back().arrival_s - jobs->front().arrival_s, static_cast<long long>(min_w),
              static_cast<long long>(max_w), sum_w / static_cast<double>(jobs->size()), elastic);
  std::printf("batch policies:");
  for (const auto& [p, n] : policies) std::printf(" %s %zu", p.c_str(), n);
  std::printf("\n%-16s %6s  %s\n", "model", "jobs", "measured on (other kinds are derived by peak FP32 rate)");
  for (const auto& [m, n] : models) {
    std::string on;
    for (const std::string& k : speeds->measured_kinds(m)) on += (on.empty() ? "" : ", ") + k;
    std::printf("%-16s %6zu  %s\n", m.c_str(), n, on.empty() ? "no speeds in the table" : on.c_str());
  }
  return 0;
}

// A device cluster: a preset's name (gavel, sia, pollux) or a cluster YAML file.
omnilearn::Result<omnilearn::scenarios::DeviceCluster> load_cluster(const std::string& name) {
  namespace os = omnilearn::scenarios;
  if (name.find('/') != std::string::npos || name.ends_with(".yaml") || name.ends_with(".yml")) {
    return os::load_device_cluster(name);
  }
  const omnilearn::InstallLayout layout = omnilearn::current_install_layout();
  auto file = os::device_cluster_preset_file(name, layout.data_dir.empty() ? "." : layout.data_dir.string());
  if (!file.is_ok()) return file.status();
  return os::load_device_cluster(*file);
}

int run_run(const std::vector<std::string>& args) {
  std::string file;
  std::string cluster_name = "gavel";
  std::string out;
  std::string placement = "pack";
  std::string kinds = shipped("device-kinds.csv");
  std::string speeds_file = shipped("device-speeds.csv");
  std::string packed_file = shipped("packed-speeds.csv");
  bool force = false;
  bool quiet = false;
  std::vector<std::string> parameters;
  std::string job_policy;
  omnilearn::sim::ClusterSimOptions o;
  po::options_description desc(
      "omnilearn jobs run JOBS: simulate a job file (traces/JOBS.md) on a heterogeneous cluster under a scheduler");
  desc.add_options()("help,h", "show this help")("jobs", po::value(&file)->required(), "job file")(
      "cluster", po::value(&cluster_name)->default_value(cluster_name),
      "device cluster: a preset (gavel, sia, pollux) or a cluster YAML file")(
      "scheduler", po::value(&o.scheduler)->default_value(o.scheduler), "fifo | las | gavel | balanced-mix")(
      "round", po::value(&o.scheduling.round_s)->default_value(o.scheduling.round_s), "round length, s")(
      "checkpoint", po::value(&o.scheduling.checkpoint_s)->default_value(0.0),
      "seconds a job spends saving its state when it loses or changes its devices")(
      "restore", po::value(&o.scheduling.restore_s)->default_value(0.0),
      "seconds a job spends loading its state when it resumes or changes its devices")(
      "placement", po::value(&placement)->default_value(placement), "pack | spread")(
      "packing", po::bool_switch(&o.scheduling.packing),
      "pack a waiting one-worker job onto a device a one-worker job holds where both gain (Gavel's measured pairs)")(
      "job-policy", po::value(&job_policy), "every job's batch policy, instead of the file's (uniform, omnilearn, ...)")(
      "las-thresholds", po::value(&o.scheduling.las_thresholds)->multitoken(),
      "las, balanced-mix: attained service (worker-seconds) between the queues, increasing (default 3600 36000)")(
      "node-bandwidth", po::value(&o.node_bandwidth_Bps)->default_value(o.node_bandwidth_Bps),
      "a node's link in bytes/s where the cluster file states none")(
      "max-time", po::value(&o.max_time_s)->default_value(0.0), "stop the simulation there, s (0: when all end)")(
      "out", po::value(&out)->required(), "run folder: jobs.csv, allocations.csv, summary.json, timeline.json")(
      "force", po::bool_switch(&force), "replace an earlier run's files in --out")(
      "quiet", po::bool_switch(&quiet), "no progress line")(
      "parameters", po::value(&parameters)->composing(),
      "MODEL=N: the parameter count of a model the simulator does not know (repeatable)")(
      "kinds", po::value(&kinds)->default_value(kinds), "device kinds table")(
      "speeds", po::value(&speeds_file)->default_value(speeds_file), "device speeds table")(
      "packed-speeds", po::value(&packed_file)->default_value(packed_file), "packed-pair table (with --packing)");
  po::positional_options_description pos;
  pos.add("jobs", 1);
  const char* examples =
      "  omnilearn jobs generate --jobs 20 --load 0.8 --cluster-gpus 108 --seed 1 --output jobs.csv\n"
      "  omnilearn jobs run jobs.csv --cluster gavel --scheduler gavel --out runs/jobs-gavel\n"
      "  omnilearn jobs run jobs.csv --cluster sia --scheduler las --round 360 --restore 30 --out runs/jobs-las\n";
  po::variables_map vm;
  if (auto done = parse_subcommand(args, desc, pos, vm, examples)) return *done;
  if (placement == "pack" || placement == "spread") {
    o.scheduling.placement =
        placement == "pack" ? omnilearn::scheduler::Placement::kPack : omnilearn::scheduler::Placement::kSpread;
  } else {
    return fail(omnilearn::Status::invalid_argument("--placement '" + placement + "'; expected pack or spread"));
  }
  for (const std::string& p : parameters) {
    const std::size_t eq = p.find('=');
    double n = 0.0;
    if (eq != std::string::npos) {
      const char* first = p.data() + eq + 1;
      const char* last = p.data() + p.size();
      const auto [end, ec] = std::from_chars(first, last, n);
      if (ec != std::errc() || end != last) n = 0.0;  // the whole value must be a number
    }
    if (eq == 0 || eq == std::string::npos || !(n > 0.0) || !std::isfinite(n)) {
      return fail(omnilearn::Status::invalid_argument("--parameters '" + p + "'; expected MODEL=N with N > 0"));
    }
    o.model_parameters[p.substr(0, eq)] = n;
  }
  auto jobs = ot::read_job_file(file);
  if (!jobs.is_ok()) return fail(jobs.status());
  if (!job_policy.empty()) {
    for (ot::JobSpec& j : *jobs) j.batch_policy = job_policy;
  }
  const auto speeds = ot::read_device_speed_table(kinds, speeds_file);
  if (!speeds.is_ok()) return fail(speeds.status());
  std::optional<ot::PackedSpeedTable> packed;
  if (o.scheduling.packing) {
    auto t = ot::read_packed_speed_table(packed_file);
    if (!t.is_ok()) return fail(t.status());
    packed = std::move(t).value();
    o.packed_speeds = &*packed;
  }
  const auto cluster = load_cluster(cluster_name);
  if (!cluster.is_ok()) return fail(cluster.status());
  // Checked before the folder is claimed: with --force a typo would otherwise replace the earlier run's files.
  if (const omnilearn::Status st = omnilearn::sim::check_cluster_simulation(*jobs, *cluster, *speeds, o); !st.is_ok()) {
    return fail(st);
  }
  omnilearn::run::RunFolderOptions folder_options;
  folder_options.reuse = force ? omnilearn::run::FolderReuse::kReplace : omnilearn::run::FolderReuse::kRefuse;
  folder_options.own_files = {"jobs.csv",      "allocations.csv",      "summary.json",      "timeline.json",
                               ".jobs.csv.tmp", ".allocations.csv.tmp", ".summary.json.tmp", ".timeline.json.tmp"};
  auto folder = omnilearn::run::RunFolder::claim(out, folder_options);
  if (!folder.is_ok()) return fail(folder.status());
  o.output_dir = out;
  o.argv = args;
  o.argv.insert(o.argv.begin(), {"omnilearn", "jobs", "run"});
  omnilearn::cli::StopSignals signals;
  o.stop_requested = [] { return omnilearn::cli::StopSignals::received() != 0; };
  omnilearn::cli::ProgressBar bar("jobs", !quiet);  // drawn on a terminal only
  o.on_round = [&bar](omnilearn::Seconds now_s, std::size_t done, std::size_t total) {
    bar.update(static_cast<double>(done) / static_cast<double>(total),
               std::to_string(done) + "/" + std::to_string(total) + " jobs done, " +
                   std::to_string(static_cast<long long>(now_s)) + " s simulated");
  };
  auto summary = omnilearn::sim::run_cluster_simulation(*jobs, *cluster, *speeds, o);
  bar.finish();
  if (!summary.is_ok()) {
    const int sig = omnilearn::cli::StopSignals::received();
    if (sig != 0) {
      std::cerr << "omnilearn jobs run: " << summary.status().message() << "; what was simulated is in " << out
                << "\n";
      return 128 + sig;
    }
    return fail(summary.status());
  }
  std::printf("%s on %s (%s): %zu/%zu jobs done, mean JCT %.6g s, median %.6g s, p99 %.6g s, makespan %.6g s\n",
              o.scheduler.c_str(), cluster->name.c_str(), file.c_str(), summary->finished, summary->jobs.size(),
              summary->mean_jct_s, summary->median_jct_s, summary->p99_jct_s, summary->makespan_s);
  std::printf("  utilisation:");
  for (const auto& [kind, u] : summary->utilisation) std::printf(" %s %.1f%%", kind.c_str(), 100.0 * u);
  std::printf("\n  finish-time fairness: mean rho %.3g, max rho %.3g\n", summary->mean_rho, summary->max_rho);
  std::printf("  run folder: %s\n", out.c_str());
  return 0;
}

}  // namespace

int run_jobs_command(const std::vector<std::string>& args) {
  return omnilearn::cli::run_subcommand("omnilearn jobs", kUsage, args,
                                        {{"run", run_run}, {"import", run_import}, {"generate", run_generate}, {"check", run_check}});
}
