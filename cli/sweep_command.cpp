// `omnilearn sweep`: expand a sweep file and run each point as its own `omnilearn sim` process (SimGrid allows one
// engine per process), N at a time; then gather every summary.json into sweep.csv and print a table.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "cli/progress_bar.h"
#include "cli/sweep_table.h"
#include "omnilearn/scenarios/sweep.h"

extern char** environ;

namespace omnilearn::cli {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;

// Starts `omnilearn sim` for one point with its output and errors in `log_path`; no shell is involved.
Result<pid_t> spawn_point(const std::string& exe, const scenarios::SweepPoint& p, const std::string& run_dir,
                          const std::string& log_path, bool iteration_rows) {
  std::vector<std::string> words{exe, "sim", p.base_path, "--quiet", "--out", run_dir};
  for (const std::string& o : p.overrides) words.insert(words.end(), {"--set", o});
  if (!iteration_rows) words.push_back("--no-iterations");
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Status::io_error("cannot start " + exe + " for point " + p.name);
  return pid;
}

}  // namespace

int run_sweep_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "omnilearn sweep SWEEP [options]\n\n"
      "Runs every point of SWEEP (a sweep YAML: a base scenario and axes of values) as its own simulation,\n"
      "N at a time, writes <out>/<point>/ run folders, <out>/sweep.csv (one row per point: axis values and\n"
      "summary fields, with the change against `uniform` at the same coordinates) and prints a table.\n"
      "A failing point is reported (its log is <out>/<point>.log) and does not stop the others.\n\n"
      "examples:\n"
      "  omnilearn sweep scenarios/paper/sweep-bsp-levels.yaml --jobs 2\n"
      "  omnilearn sweep scenarios/paper/sweep-asp-levels.yaml --out runs/asp\n\n"
      "options");
  opts.add_options()("help,h", "print this help")("sweep", po::value<std::string>(), "sweep YAML file")(
      "jobs,j", po::value<int>()->default_value(2), "points run at the same time")(
      "out", po::value<std::string>(), "output folder (default: runs/<sweep name>)")("quiet,q", "no progress bar")(
      "no-iterations", "skip per-iteration rows in each run's iterations.csv");
  po::positional_options_description pos;
  pos.add("sweep", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "omnilearn sweep: " << e.what() << " (see omnilearn sweep --help)\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  if (!vm.count("sweep") || vm["jobs"].as<int>() < 1) {
    std::cerr << "omnilearn sweep: need a SWEEP file and --jobs >= 1 (see omnilearn sweep --help)\n";
    return 2;
  }
  auto sweep = scenarios::load_sweep(vm["sweep"].as<std::string>());
  if (!sweep) {
    std::cerr << "omnilearn sweep: " << sweep.status().message() << "\n";
    return 1;
  }
  const std::vector<scenarios::SweepPoint> points = scenarios::expand(*sweep);
  const std::string out = vm.count("out") ? vm["out"].as<std::string>() : "runs/" + sweep->name;
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) {
    std::cerr << "omnilearn sweep: cannot create " << out << ": " << ec.message() << "\n";
    return 1;
  }
  const std::string exe = fs::read_symlink("/proc/self/exe", ec).string();

  std::map<pid_t, std::size_t> running;
  std::vector<int> exit_codes(points.size(), -1);
  std::size_t next = 0;
  std::size_t done = 0;
  ProgressBar bar("sweep " + sweep->name, !vm.count("quiet"));
  bar.update(0.0, "0/" + std::to_string(points.size()));
  while (done < points.size()) {
    while (next < points.size() && running.size() < static_cast<std::size_t>(vm["jobs"].as<int>())) {
      const auto& p = points[next];
      auto pid = spawn_point(exe, p, out + "/" + p.name, out + "/" + p.name + ".log", !vm.count("no-iterations"));
      if (pid) {
        running[*pid] = next;
      } else {
        std::cerr << "omnilearn sweep: " << pid.status().message() << "\n";
        exit_codes[next] = 127;
        ++done;
      }
      ++next;
    }
    if (running.empty()) continue;
    int wstatus = 0;
    const pid_t pid = waitpid(-1, &wstatus, 0);
    if (pid < 0 || !running.contains(pid)) continue;
    const std::size_t i = running[pid];
    running.erase(pid);
    exit_codes[i] = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    ++done;
    bar.update(static_cast<double>(done) / static_cast<double>(points.size()),
               std::to_string(done) + "/" + std::to_string(points.size()));
  }
  bar.finish();

  int failed = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (exit_codes[i] == 0) continue;
    ++failed;
    std::cerr << "omnilearn sweep: point " << points[i].name << " failed (exit " << exit_codes[i] << "), see "
              << out << "/" << points[i].name << ".log\n";
  }
  auto table = gather_sweep_table(*sweep, points, exit_codes, out);
  if (!table) {
    std::cerr << "omnilearn sweep: " << table.status().message() << "\n";
    return 1;
  }
  const Status written = write_sweep_csv(*table, out + "/sweep.csv");
  if (!written) {
    std::cerr << "omnilearn sweep: " << written.message() << "\n";
    return 1;
  }
  print_sweep_table(*table, std::cout);
  std::printf("\n%zu points, %d failed; results in %s/sweep.csv\n", points.size(), failed, out.c_str());
  return failed == 0 ? 0 : 1;
}

}  // namespace omnilearn::cli
