#include "cli/stage_process.h"

#include <sys/wait.h>

#include <csignal>
#include <iostream>
#include <utility>

extern char** environ;

namespace omnilearn::cli {

Result<Subprocess> spawn_stage(const std::string& who, const std::vector<std::string>& words,
                               const StageOptions& options) {
  std::cerr << who << ": running";
  for (const std::string& w : words) std::cerr << " " << w;
  std::cerr << "\n";
  std::vector<std::string> env_store = options.extra_env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    bool replaced = false;
    for (const std::string& x : options.extra_env) {
      replaced |= kv.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0;
    }
    if (!replaced) env_store.push_back(kv);
  }
  SpawnOptions spawn;
  spawn.env = std::move(env_store);
  spawn.search_path = true;
  spawn.own_process_group = false;
  spawn.parent_death_signal = SIGTERM;
  spawn.stdout_file = options.log_file;
  spawn.stderr_file = options.log_file;
  return Subprocess::start(words, spawn);
}

int stage_exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace omnilearn::cli
