// `omnilearn sweep`: expand a sweep file and run each point as its own `omnilearn sim` process (SimGrid allows one
// engine per process), N at a time, here or across MPI ranks; or write a SLURM array script for it; then gather
// every summary.json into sweep.csv and print a table.
#include <boost/program_options.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/mpi_sweep.h"
#include "cli/sweep_folder.h"
#include "cli/sweep_runner.h"
#include "cli/sweep_slurm.h"
#include "cli/sweep_table.h"
#include "omnilearn/base/install_layout.h"
#include "omnilearn/scenarios/sweep.h"

namespace omnilearn::cli {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;

constexpr const char* kSweepHelp =
    "omnilearn sweep SWEEP [options]\n\n"
    "Runs every point of SWEEP (a sweep YAML: a base scenario and axes of values) as its own simulation,\n"
    "N at a time, writes <out>/<point>/ run folders, <out>/sweep.csv (one row per point: axis values, status and\n"
    "summary fields, with the change against `uniform` at the same coordinates) and prints a table.\n"
    "A failing point is reported (its log is <out>/<point>.log) and does not stop the others; the exit code is\n"
    "then 1. Under mpirun, --mpi splits the points across ranks (rank r runs points i with i % size == r,\n"
    "--jobs at a time each) and rank 0 writes sweep.csv. --emit-slurm writes a SLURM job-array script instead of\n"
    "running anything; --gather then builds sweep.csv from the point folders the array tasks wrote.\n"
    "The output folder must be new or empty: --resume runs only the points without a complete summary.json there,\n"
    "--force first removes an earlier sweep's files (sweep.csv, the point folders listed in its sweep-index.txt,\n"
    "their logs; nothing else). It is locked while the sweep runs, so a second sweep into it is refused. Under\n"
    "mpirun without --mpi every rank would run every point into the same folders: that is refused.\n"
    "The points write no timeline.json unless the sweep asks for it (`set: {outputs.timeline: true}` in the sweep\n"
    "file, an axis on outputs.timeline, or --set outputs.timeline=true). Progress goes to stderr: a bar with the\n"
    "elapsed time and the time left on a terminal, plain lines (`sweep NAME: 5/16 done (2 failed), elapsed 1m12s,\n"
    "eta 2m40s`) elsewhere, at most one per finished point and one per 1% or 10 s.\n\n"
    "examples:\n"
    "  omnilearn sweep scenarios/paper/sweep-bsp-levels.yaml --jobs 2\n"
    "  omnilearn sweep scenarios/paper/sweep-asp-levels.yaml --out runs/asp\n"
    "  omnilearn sweep scenarios/paper/sweep-asp-levels.yaml --out runs/asp --resume   (after an interruption)\n"
    "  mpirun -np 4 omnilearn sweep scenarios/traces/sweep-traces.yaml --mpi --jobs 1 --out runs/traces\n"
    "  omnilearn sweep scenarios/paper/sweep-bsp-levels.yaml --emit-slurm bsp.slurm --out /scratch/bsp\n"
    "  omnilearn sweep scenarios/paper/sweep-bsp-levels.yaml --gather --out /scratch/bsp\n"
    "  omnilearn sweep scenarios/paper/sweep-bsp-levels.yaml --set outputs.timeline=true --set workload.epochs=2\n\n"
    "options";

// Prints the failed and missing points and the table, writes sweep.csv; returns the command's exit code.
int report_sweep(const scenarios::Sweep& sweep, const std::vector<scenarios::SweepPoint>& points,
                 const std::vector<int>& exit_codes, const std::string& out) {
  int failed = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (exit_codes[i] == 0) continue;
    ++failed;
    if (exit_codes[i] < 0) {
      std::cerr << "omnilearn sweep: point " << points[i].name << " has no results (no " << out << "/" << points[i].name
                << "/summary.json)\n";
    } else {
      std::cerr << "omnilearn sweep: point " << points[i].name << " failed (exit " << exit_codes[i] << "), see " << out
                << "/" << points[i].name << ".log\n";
    }
  }
  auto table = gather_sweep_table(sweep, points, exit_codes, out);
  if (!table) {
    std::cerr << "omnilearn sweep: " << table.status().message() << "\n";
    return 1;
  }
  if (const Status written = write_sweep_csv(*table, out + "/sweep.csv"); !written) {
    std::cerr << "omnilearn sweep: " << written.message() << "\n";
    return 1;
  }
  print_sweep_table(*table, std::cout);
  std::printf("\n%zu points, %d failed; results in %s/sweep.csv\n", points.size(), failed, out.c_str());
  return failed == 0 ? 0 : 1;
}

// --cfg / --log, as each point's `omnilearn sim` takes them.
std::vector<std::string> simgrid_args(const po::variables_map& vm) {
  std::vector<std::string> args;
  for (const char* key : {"cfg", "log"}) {
    if (!vm.count(key)) continue;
    for (const std::string& v : vm[key].as<std::vector<std::string>>()) args.push_back(std::string("--") + key + "=" + v);
  }
  return args;
}

int emit_slurm(const scenarios::Sweep& sweep, const std::vector<scenarios::SweepPoint>& points,
               const po::variables_map& vm, const std::string& exe, const std::string& out) {
  SlurmOptions slurm;
  if (vm.count("slurm-job-name")) slurm.job_name = vm["slurm-job-name"].as<std::string>();
  slurm.time_limit = vm["slurm-time"].as<std::string>();
  slurm.cpus_per_task = vm["slurm-cpus"].as<int>();
  if (vm.count("slurm-partition")) slurm.partition = vm["slurm-partition"].as<std::string>();
  const std::string path = vm["emit-slurm"].as<std::string>();
  std::error_code ec;
  const std::string sweep_path = fs::absolute(vm["sweep"].as<std::string>(), ec).lexically_normal().string();
  auto script = slurm_array_script(sweep, points, exe, sweep_path, out, !vm.count("no-iterations"), slurm,
                                   simgrid_args(vm));
  const Status written = script ? write_slurm_script(*script, path) : script.status();
  if (!written) {
    std::cerr << "omnilearn sweep: " << written.message() << "\n";
    return 1;
  }
  std::printf(
      "wrote %s: %zu array tasks, run folders in %s\nsubmit: sbatch %s\ngather: omnilearn sweep %s --gather "
      "--out %s\n",
      path.c_str(), points.size(), out.c_str(), shell_quote(path).c_str(), shell_quote(sweep_path).c_str(),
      shell_quote(out).c_str());
  return 0;
}

void add_sweep_options(po::options_description& opts) {
  opts.add_options()("help,h", "print this help")("sweep", po::value<std::string>(), "sweep YAML file")(
      "jobs,j", po::value<int>()->default_value(2), "points run at the same time (per MPI rank with --mpi)")(
      "out", po::value<std::string>(), "output folder (default: runs/<sweep name>)")(
      "quiet,q", "no progress (a bar on a terminal, else a plain line per finished point, at most every 1% or 10 s)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario field in every point, after the sweep file's own: --set path.to.key=value (repeatable); "
      "--set outputs.timeline=true writes each point's timeline.json (off in sweeps unless asked)")(
      "no-iterations", "skip per-iteration rows in each run's iterations.csv")(
      "cfg", po::value<std::vector<std::string>>()->composing(),
      "a SimGrid setting passed to every point, --cfg=name:value (repeatable; see omnilearn sim --help)")(
      "log", po::value<std::vector<std::string>>()->composing(),
      "a SimGrid log setting passed to every point, --log=category.setting:value (repeatable)")(
      "mpi", "split the points across the ranks of an mpirun job; rank 0 writes sweep.csv")(
      "emit-slurm", po::value<std::string>(), "write a SLURM job-array script to this file instead of running")(
      "gather", "run nothing: build sweep.csv and the table from existing point folders in --out")(
      "force", "reuse an output folder that is not empty: first remove an earlier sweep's files (sweep.csv, the point "
      "folders in its sweep-index.txt, their logs), nothing else")(
      "resume", "reuse an output folder that is not empty: skip the points whose folder has a complete summary.json, "
      "run the others again")(
      "slurm-time", po::value<std::string>()->default_value("01:00:00"), "--emit-slurm: time limit per task")(
      "slurm-cpus", po::value<int>()->default_value(1), "--emit-slurm: CPUs per task")(
      "slurm-partition", po::value<std::string>(), "--emit-slurm: partition")(
      "slurm-job-name", po::value<std::string>(), "--emit-slurm: job name (default: omnilearn-<sweep name>)");
}

// Exit code 2 with the reason for flags that exclude each other or cannot work here; nullopt when they are fine.
std::optional<int> refuse_bad_flags(const po::variables_map& vm) {
  if (vm["jobs"].as<int>() < 1 || vm["slurm-cpus"].as<int>() < 1) {
    std::cerr << "omnilearn sweep: need --jobs >= 1 and --slurm-cpus >= 1 (see omnilearn sweep --help)\n";
    return 2;
  }
  if (vm.count("mpi") + vm.count("emit-slurm") + vm.count("gather") > 1) {
    std::cerr << "omnilearn sweep: --mpi, --emit-slurm and --gather exclude each other\n";
    return 2;
  }
  if (vm.count("force") + vm.count("resume") + vm.count("gather") > 1 ||
      (vm.count("resume") && vm.count("emit-slurm"))) {
    std::cerr << "omnilearn sweep: --force, --resume and --gather exclude each other, and --resume --emit-slurm\n";
    return 2;
  }
  if (!vm.count("mpi") && !vm.count("emit-slurm") && !vm.count("gather")) {
    const std::string variable = mpi_launch_variable([](const char* name) { return std::getenv(name); });
    if (!variable.empty()) {
      std::cerr << "omnilearn sweep: started by an MPI launcher as one of several ranks (" << variable
                << ") without --mpi: every rank would run every point into the same folders. Add --mpi to split the "
                   "points across the ranks, or run one omnilearn sweep without mpirun\n";
      return 2;
    }
  }
  if (vm.count("mpi") && !mpi_available()) {
    std::cerr << "omnilearn sweep: --mpi: this omnilearn was built without MPI (install libopenmpi-dev and "
                 "openmpi-bin, e.g. with scripts/setup.sh, then rebuild)\n";
    return 2;
  }
  return std::nullopt;
}

// --gather: sweep.csv and the table from the point folders already in `out`.
int gather_sweep(const scenarios::Sweep& sweep, const std::vector<scenarios::SweepPoint>& points,
                 const std::string& out) {
  std::error_code ec;
  if (!fs::is_directory(out, ec)) {
    std::cerr << "omnilearn sweep: --gather: no folder " << out << " (pass the sweep's --out)\n";
    return 1;
  }
  auto held = claim_sweep_folder(out, points, run::FolderReuse::kKeep, /*keep_index=*/true);
  if (!held) {
    std::cerr << "omnilearn sweep: " << held.status().message() << "\n";
    return 1;
  }
  return report_sweep(sweep, points, exit_codes_from_folders(points, out), out);
}

// Runs the points not in `skip` on this host and reports the sweep.
int run_here(const scenarios::Sweep& sweep, const std::vector<scenarios::SweepPoint>& points,
             const std::vector<bool>& skip, const PointRunOptions& run) {
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!skip[i]) todo.push_back(i);
  }
  if (todo.size() < points.size()) {
    std::fprintf(stderr, "omnilearn sweep: --resume: %zu of %zu points are finished, running %zu\n",
                 points.size() - todo.size(), points.size(), todo.size());
  }
  std::vector<int> codes = run_sweep_points(points, todo, run);
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (skip[i]) codes[i] = 0;
  }
  return report_sweep(sweep, points, codes, run.out);
}

}  // namespace

int run_sweep_command(const std::vector<std::string>& args) {
  po::options_description opts(kSweepHelp);
  add_sweep_options(opts);
  po::variables_map vm;
  if (auto done = parse_command_line("sweep", args, opts, "sweep", /*required=*/true, vm)) return *done;
  if (auto refused = refuse_bad_flags(vm)) return *refused;
  auto sweep = scenarios::load_sweep(vm["sweep"].as<std::string>());
  if (!sweep) {
    std::cerr << "omnilearn sweep: " << sweep.status().message() << "\n";
    return 1;
  }
  if (sweep->kind == scenarios::ScenarioKind::kJobs && (vm.count("cfg") || vm.count("log"))) {
    std::cerr << "omnilearn sweep: --cfg and --log are SimGrid settings of `omnilearn sim`; the points of "
              << sweep->name << " are jobs scenarios (omnilearn jobs run), which take none\n";
    return 2;
  }
  std::vector<scenarios::SweepPoint> points = scenarios::expand(*sweep);
  // --set applies to every point, after the sweep file's overrides (so it wins where both set a field).
  const auto sets = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  for (auto& point : points) point.overrides.insert(point.overrides.end(), sets.begin(), sets.end());
  // An invalid point is named now and fails on its own when it runs; the others are not held back.
  for (const auto& point : points) {
    const Status checked = scenarios::check_point(*sweep, point);
    if (!checked.is_ok()) std::cerr << "omnilearn sweep: " << checked.message() << "\n";
  }
  const std::string out = vm.count("out") ? vm["out"].as<std::string>() : "runs/" + sweep->name;
  if (vm.count("gather")) return gather_sweep(*sweep, points, out);
  const run::FolderReuse reuse = vm.count("force")    ? run::FolderReuse::kReplace
                                 : vm.count("resume") ? run::FolderReuse::kKeep
                                                      : run::FolderReuse::kRefuse;
  // --resume: a point with a complete summary.json is done (summary.json is written last, atomically).
  std::vector<bool> skip(points.size(), false);
  for (std::size_t i = 0; i < points.size() && vm.count("resume"); ++i) skip[i] = point_finished(out, points[i].name);
  std::unique_ptr<run::RunFolder> held;  // the output folder's lock, held until the sweep ends
  auto claim = [&]() -> Status {
    auto folder = claim_sweep_folder(out, points, reuse, /*keep_index=*/false);
    if (!folder) return folder.status();
    held = std::move(folder).value();
    return Status::ok();
  };
  const std::string exe = current_executable().string();  // each point runs this same binary
  if (!vm.count("mpi")) {
    if (const Status claimed = claim(); !claimed) {
      std::cerr << "omnilearn sweep: " << claimed.message() << "\n";
      return 1;
    }
  }
  if (vm.count("emit-slurm")) return emit_slurm(*sweep, points, vm, exe, fs::absolute(out).lexically_normal());

  PointRunOptions run;
  run.exe = exe;
  run.out = out;
  run.jobs = vm["jobs"].as<int>();
  run.iteration_rows = !vm.count("no-iterations");
  run.sim_args = simgrid_args(vm);
  run.progress = !vm.count("quiet");
  run.label = "sweep " + sweep->name;
  if (!vm.count("mpi")) return run_here(*sweep, points, skip, run);
  auto outcome = run_sweep_points_mpi(points, run, claim, skip);
  if (!outcome) {
    std::cerr << "omnilearn sweep: --mpi: " << outcome.status().message() << "\n";
    return 1;
  }
  // Failures are reported once, by rank 0, whose exit code carries them.
  return outcome->root ? report_sweep(*sweep, points, outcome->exit_codes, out) : 0;
}

}  // namespace omnilearn::cli
