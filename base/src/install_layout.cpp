#include "omnilearn/base/install_layout.h"

#include <fstream>
#include <system_error>

extern char** environ;

namespace omnilearn {
namespace {

namespace fs = std::filesystem;

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// key=value lines of a build-tree marker.
std::map<std::string, std::string> read_marker(const fs::path& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

// <exe>/../share/omnilearn, with the worker in ../libexec/omnilearn or ../lib/omnilearn.
std::optional<InstallLayout> installed_layout(const fs::path& bin) {
  const fs::path prefix = bin.parent_path();
  const fs::path share = prefix / "share" / "omnilearn";
  if (!is_dir(share / "scenarios") && !is_dir(share / "analysis")) return std::nullopt;
  InstallLayout layout;
  layout.kind = InstallLayout::Kind::kInstalled;
  layout.data_dir = share;
  if (is_dir(share / "analysis" / "omnilearn_analysis")) layout.analysis_dir = share / "analysis";
  for (const char* dir : {"libexec", "lib"}) {
    const fs::path worker = prefix / dir / "omnilearn" / kWorkerProgram;
    if (layout.worker.empty() && is_file(worker)) layout.worker = worker;
  }
  return layout;
}

// A build folder at most three levels above `bin` that holds a marker naming that same folder.
std::optional<InstallLayout> build_tree_layout(const fs::path& bin) {
  fs::path dir = bin;
  for (int up = 0; up <= 3 && !dir.empty(); ++up, dir = dir.parent_path()) {
    const fs::path marker = dir / kBuildTreeMarker;
    if (!is_file(marker)) {
      if (dir == dir.parent_path()) break;
      continue;
    }
    const auto fields = read_marker(marker);
    std::error_code ec;
    const auto named = fields.find("build_dir");
    if (named == fields.end() || !fs::equivalent(named->second, dir, ec)) return std::nullopt;  // a copied marker
    InstallLayout layout;
    layout.kind = InstallLayout::Kind::kBuildTree;
    if (const auto s = fields.find("source_dir"); s != fields.end()) layout.data_dir = s->second;
    if (is_dir(layout.data_dir / "analysis" / "omnilearn_analysis")) layout.analysis_dir = layout.data_dir / "analysis";
    if (const auto w = fields.find("worker"); w != fields.end() && is_file(w->second)) layout.worker = w->second;
    return layout;
  }
  return std::nullopt;
}

}  // namespace

InstallLayout locate_install_layout(const fs::path& exe) {
  const fs::path bin = exe.parent_path();
  if (auto installed = installed_layout(bin)) return *installed;
  if (auto built = build_tree_layout(bin)) return *built;
  return {};
}

fs::path current_executable() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p;
}

InstallLayout current_install_layout() {
  const fs::path exe = current_executable();
  return exe.empty() ? InstallLayout{} : locate_install_layout(exe);
}

std::optional<std::string> analysis_dir(const InstallLayout& layout, const std::map<std::string, std::string>& env) {
  if (const auto e = env.find("OMNILEARN_ANALYSIS_DIR"); e != env.end() && !e->second.empty()) return e->second;
  if (!layout.analysis_dir.empty()) return layout.analysis_dir.string();
  return std::nullopt;
}

std::string python_interpreter(const std::string& flag, const std::map<std::string, std::string>& env) {
  if (!flag.empty()) return flag;
  if (const auto e = env.find("OMNILEARN_PYTHON"); e != env.end() && !e->second.empty()) return e->second;
  return "/usr/bin/python3";
}

std::string worker_executable(const fs::path& exe, const InstallLayout& layout) {
  if (!exe.empty()) {
    const fs::path next_to_me = exe.parent_path() / kWorkerProgram;
    if (is_file(next_to_me)) return next_to_me.string();
  }
  if (!layout.worker.empty()) return layout.worker.string();
  return kWorkerProgram;
}

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

}  // namespace omnilearn
