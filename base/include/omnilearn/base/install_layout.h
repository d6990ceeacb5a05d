// InstallLayout: where OmniLearn's own files are (the analysis package, the scenarios and traces, the testbed
// worker), found from the running executable so that an installed tree works wherever it is copied. The one
// place that knows the layout; pure functions of the file system and the environment, thread-safe.
//
// Installed (cmake --install, the Debian package), relative to the executable's folder <prefix>/bin:
//   ../share/omnilearn/{analysis,scenarios,traces}   and the worker in ../libexec/omnilearn/ (or ../lib/omnilearn/)
// Build tree: CMake writes kBuildTreeMarker at the top of the build folder; an executable in that folder (or up
// to three folders below it) reads the source folder and the worker's path from it. Nothing else is consulted,
// and no path is compiled into the binaries.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace omnilearn {

inline constexpr const char* kBuildTreeMarker = "omnilearn-build-tree.txt";
inline constexpr const char* kWorkerProgram = "omnilearn-emulate-worker";

struct InstallLayout {
  enum class Kind { kInstalled, kBuildTree, kUnknown };
  Kind kind = Kind::kUnknown;
  std::filesystem::path data_dir;      // holds scenarios/ and traces/ (share/omnilearn, or the source tree)
  std::filesystem::path analysis_dir;  // holds the omnilearn_analysis package; empty when not found
  std::filesystem::path worker;        // omnilearn-emulate-worker; empty when not found
};

// The layout around an executable at `exe` (an absolute path). Kind::kUnknown with empty paths when `exe` is in
// neither an installed tree nor a build tree.
InstallLayout locate_install_layout(const std::filesystem::path& exe);

// The running program's path (/proc/self/exe); empty when unreadable.
std::filesystem::path current_executable();

// locate_install_layout(current_executable()).
InstallLayout current_install_layout();

// The folder to put on PYTHONPATH for `python -m omnilearn_analysis`: OMNILEARN_ANALYSIS_DIR when set (from `env`),
// else the layout's; nullopt when neither has it (then the package must be installed for that python, e.g. with
// `pip install ./analysis`).
std::optional<std::string> analysis_dir(const InstallLayout& layout, const std::map<std::string, std::string>& env);

// The python that runs the analysis: `flag` (--python) when not empty, else OMNILEARN_PYTHON from `env`, else
// /usr/bin/python3 (Debian's, with python3-pandas and python3-matplotlib).
std::string python_interpreter(const std::string& flag, const std::map<std::string, std::string>& env);

// The testbed worker: next to the executable, else the layout's, else the bare name (looked up on PATH).
std::string worker_executable(const std::filesystem::path& exe, const InstallLayout& layout);

// The process's environment as a map (NAME -> value).
std::map<std::string, std::string> process_environment();

}  // namespace omnilearn
