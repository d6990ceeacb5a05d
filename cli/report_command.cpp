// `omnilearn report`: hands the command line to the Python analysis package (analysis/omnilearn_analysis), run by
// Debian's python3 with pandas and matplotlib (or --python / OMNILEARN_PYTHON). The package is found through
// base/install_layout.h (OMNILEARN_ANALYSIS_DIR first). No shell is involved.
#include <sys/wait.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "omnilearn/base/install_layout.h"
#include "omnilearn/base/subprocess.h"

extern char** environ;

namespace omnilearn::cli {
namespace {

// Removes `--python P` / `--python=P` from `args` (the rest goes to the Python side) and returns P ("" if absent).
std::string take_python_option(std::vector<std::string>& args) {
  std::string python;
  for (std::size_t i = 0; i < args.size();) {
    if (args[i] == "--python" && i + 1 < args.size()) {
      python = args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
    } else if (args[i].rfind("--python=", 0) == 0) {
      python = args[i].substr(9);
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  return python;
}

}  // namespace

int run_report_command(const std::vector<std::string>& command_args) {
  std::vector<std::string> args = command_args;
  const std::map<std::string, std::string> env = process_environment();
  const std::string python = python_interpreter(take_python_option(args), env);
  const std::optional<std::string> dir = analysis_dir(current_install_layout(), env);
  std::vector<std::string> words{python, "-m", "omnilearn_analysis"};
  const bool sub = !args.empty() && (args[0] == "trace-plot" || args[0] == "check-timeline" ||
                                     args[0] == "energy-frontier" || args[0] == "report");
  if (!sub) words.push_back("report");
  words.insert(words.end(), args.begin(), args.end());
  // PYTHONPATH names the package's folder when it was found; everything else of the environment is passed on.
  // Without one, the package must be installed for that python (pip install ./analysis).
  std::vector<std::string> env_store;
  if (dir) env_store.push_back("PYTHONPATH=" + *dir);
  for (char** e = environ; *e != nullptr; ++e) {
    if (!dir || std::string(*e).rfind("PYTHONPATH=", 0) != 0) env_store.emplace_back(*e);
  }
  SpawnOptions options;
  options.env = std::move(env_store);
  options.search_path = true;
  options.own_process_group = false;  // as any command run from a shell: Ctrl-C reaches it too
  options.parent_death_signal = SIGTERM;  // and it does not outlive this process (SIGKILL, a crash)
  auto child = Subprocess::start(words, options);
  if (!child) {
    std::fprintf(stderr, "omnilearn report: cannot run %s (install python3-pandas and python3-matplotlib: "
                 "scripts/setup.sh; or name another python with --python or OMNILEARN_PYTHON)\n", python.c_str());
    return 1;
  }
  child->wait();
  return WIFEXITED(child->status()) ? WEXITSTATUS(child->status()) : 1;
}

}  // namespace omnilearn::cli
