// Support for tests that run the built `omnilearn` binary as a subprocess (base/subprocess.h, no shell): a fresh temp
// folder per test, and a runner that captures exit code, stdout and stderr. OMNILEARN_BIN and
// OMNILEARN_SOURCE_DIR come from tests/cli/CMakeLists.txt.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "omnilearn/base/subprocess.h"

extern char** environ;

namespace omnilearn::cli::testing {

namespace fs = std::filesystem;

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string source_path(const std::string& relative) {
  return std::string(OMNILEARN_SOURCE_DIR) + "/" + relative;
}

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        "omnilearn_cli_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" + std::to_string(::getpid());
    std::replace(name.begin(), name.end(), '/', '_');  // parameterised tests are named Suite/Test/Param
    path_ = fs::temp_directory_path() / name;
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    if (!::testing::Test::HasFailure()) fs::remove_all(path_, ec);  // kept for a look when the test failed
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string at(const std::string& relative) const { return (path_ / relative).string(); }
  // Writes `text` to `relative` (creating folders) and returns the full path.
  std::string write(const std::string& relative, const std::string& text) const {
    const fs::path p = path_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

 private:
  fs::path path_;
};

struct RunResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

// Starts `program` (looked up on PATH) with `args` in `cwd`, with the environment plus `extra_env` ("NAME=value"),
// its stdout and stderr going to the two files. It stays in this process's group (a signal reaches it alone, as one
// sent from a shell) and dies with the test.
inline Result<Subprocess> spawn_program(const std::string& program, const std::vector<std::string>& args,
                                        const fs::path& cwd, const fs::path& out_file, const fs::path& err_file,
                                        const std::vector<std::string>& extra_env = {}) {
  std::vector<std::string> words{program};
  words.insert(words.end(), args.begin(), args.end());
  SpawnOptions options;
  options.env = extra_env;
  for (char** e = environ; *e != nullptr; ++e) options.env->emplace_back(*e);
  options.search_path = true;
  options.working_dir = cwd.string();
  options.stdout_file = out_file.string();
  options.stderr_file = err_file.string();
  options.own_process_group = false;
  return Subprocess::start(words, options);
}

// Waits for `child` and returns its exit code (128 + signal when killed).
inline int wait_exit_code(Subprocess& child) {
  child.wait();
  const int status = child.status();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs `program` with `args` in `cwd`, with the environment plus `extra_env` ("NAME=value"), and waits for it.
inline RunResult run_program(const std::string& program, const std::vector<std::string>& args, const fs::path& cwd,
                             const std::vector<std::string>& extra_env = {}) {
  static int counter = 0;
  const std::string tag = std::to_string(::getpid()) + "_" + std::to_string(counter++);
  const fs::path out_file = fs::temp_directory_path() / ("omnilearn_cli_out_" + tag);
  const fs::path err_file = fs::temp_directory_path() / ("omnilearn_cli_err_" + tag);
  RunResult r;
  auto child = spawn_program(program, args, cwd, out_file, err_file, extra_env);
  if (!child) {
    r.err = "cannot start " + program;
    return r;
  }
  r.exit_code = wait_exit_code(*child);
  r.out = read_file(out_file);
  r.err = read_file(err_file);
  std::error_code ec;
  fs::remove(out_file, ec);
  fs::remove(err_file, ec);
  return r;
}

inline RunResult run_omnilearn(const std::vector<std::string>& args, const fs::path& cwd,
                               const std::vector<std::string>& extra_env = {}) {
  return run_program(OMNILEARN_BIN, args, cwd, extra_env);
}

// The full path of `name` on PATH, or "" when it is not there.
inline std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return "";
}

// A copy of scenarios/examples/quick.yaml (2 workers, 8 iterations, well under a second) with `from` replaced by
// `to` (once; `from` must occur).
inline std::string quick_yaml(const std::string& from = "", const std::string& to = "") {
  std::string text = read_file(source_path("scenarios/examples/quick.yaml"));
  if (!from.empty()) {
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace omnilearn::cli::testing
