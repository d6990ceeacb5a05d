// `omnilearn report`: hands the command line to the Python analysis package (analysis/omnilearn_analysis), run by
// Debian's python3 with pandas and matplotlib. No shell is involved.
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/commands.h"

extern char** environ;

#ifndef OMNILEARN_ANALYSIS_DIR
#define OMNILEARN_ANALYSIS_DIR "analysis"
#endif

namespace omnilearn::cli {

int run_report_command(const std::vector<std::string>& args) {
  const char* dir_env = std::getenv("OMNILEARN_ANALYSIS_DIR");
  const std::string dir = dir_env != nullptr ? dir_env : OMNILEARN_ANALYSIS_DIR;
  const char* python_env = std::getenv("OMNILEARN_PYTHON");
  const std::string python = python_env != nullptr ? python_env : "/usr/bin/python3";
  std::vector<std::string> words{python, "-m", "omnilearn_analysis"};
  const bool sub = !args.empty() && (args[0] == "trace-plot" || args[0] == "check-timeline" || args[0] == "report");
  if (!sub) words.push_back("report");
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  // PYTHONPATH names the package's folder; everything else of the environment is passed on.
  std::vector<std::string> env_store{"PYTHONPATH=" + dir};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("PYTHONPATH=", 0) != 0) env_store.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (std::string& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, python.c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0) {
    std::fprintf(stderr, "omnilearn report: cannot run %s (install python3-pandas and python3-matplotlib: "
                 "scripts/setup.sh)\n", python.c_str());
    return 1;
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace omnilearn::cli
