#include "jobs_command.h"

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "omnilearn/run/jobs_run_setup.h"
#include "cli/subcommand_line.h"
#include "omnilearn/traces/device_speeds.h"
#include "omnilearn/traces/job_file.h"
#include "omnilearn/traces/job_generators.h"
#include "omnilearn/traces/job_importer.h"
#include "omnilearn/traces/text_file.h"

namespace po = boost::program_options;
namespace ot = omnilearn::traces;

namespace {

using omnilearn::cli::command_text;
using omnilearn::cli::parse_subcommand;
using omnilearn::cli::parse_window;

constexpr const char* kUsage =
    "usage: omnilearn jobs <run|emulate|validate|import|generate|check> [options]   (each takes --help)\n\n"
    "  run       simulate a job file on a heterogeneous cluster under a scheduler: JCTs, allocations\n"
    "  emulate   run a job file on this host's testbed (CPU shares as devices) under a live scheduler\n"
    "  validate  the simulator against the testbed on a job file: JCTs and step times per job\n"
    "  import    convert a Pollux workload or a Philly-shaped job trace into a job file (traces/JOBS.md)\n"
    "  generate  draw a Philly-like workload: job sizes and durations from Philly, Poisson arrivals at a load\n"
    "  check     read a job file and summarise it (jobs, arrivals, workers, models and their device speeds)\n\n"
    "examples:\n"
    "  omnilearn jobs generate --jobs 160 --load 0.8 --cluster-gpus 64 --seed 1 --output jobs.csv\n"
    "  omnilearn jobs check jobs.csv\n"
    "  omnilearn jobs run jobs.csv --cluster gavel --scheduler gavel --out runs/jobs-gavel\n"
    "  omnilearn jobs import --format pollux --input workload-6.csv --output pollux-6.csv\n";

int fail(const omnilearn::Status& status) { return omnilearn::cli::fail_with("omnilearn jobs", status); }

std::string shipped(const std::string& file) { return omnilearn::run::shipped_device_table(file); }

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
  auto g = omnilearn::run::generate_workload(o, from);
  if (!g.is_ok()) return fail(g.status());
  const omnilearn::Status st =
      ot::write_job_file(g->jobs, output, "generated by: " + command_text("omnilearn jobs generate", args) + "\n" + g->note);
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

}  // namespace

int run_jobs_command(const std::vector<std::string>& args) {
  return omnilearn::cli::run_subcommand("omnilearn jobs", kUsage, args,
                                        {{"run", omnilearn::cli::run_jobs_run},
#if defined(OMNILEARN_HAVE_SIM) && defined(OMNILEARN_HAVE_EMULATOR)
                                         {"emulate", omnilearn::cli::run_jobs_emulate},
                                         {"validate", omnilearn::cli::run_jobs_validate},
#endif
                                         {"import", run_import}, {"generate", run_generate}, {"check", run_check}});
}
