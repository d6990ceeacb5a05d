#include "cli/sweep_folder.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

namespace omnilearn::cli {

std::vector<std::string> read_sweep_index(const std::string& out) {
  std::vector<std::string> names;
  std::ifstream in(out + "/" + kSweepIndex);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line != "." && line != ".." && line.find('/') == std::string::npos) names.push_back(line);
  }
  return names;
}

Result<std::unique_ptr<run::RunFolder>> claim_sweep_folder(const std::string& out,
                                                                 const std::vector<scenarios::SweepPoint>& points,
                                                                 run::FolderReuse reuse, bool keep_index) {
  const std::vector<std::string> index = read_sweep_index(out);
  // The new index: the points listed before (unless they are removed now) and this sweep's.
  std::vector<std::string> names = reuse == run::FolderReuse::kReplace ? std::vector<std::string>{} : index;
  for (const auto& p : points) {
    if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  }
  run::RunFolderOptions options;
  options.reuse = reuse;
  options.own_files = {"sweep.csv", kSweepIndex};  // RunFolder removes their temporary files too
  for (const std::string& n : index) options.own_files.insert(options.own_files.end(), {n + ".log", n + ".exit"});
  options.own_folders = index;
  options.remedy =
      "pass --resume to run only the points without a complete summary.json, --force to replace an earlier sweep's "
      "files there (only those omnilearn wrote: sweep.csv, the point folders in sweep-index.txt, their logs), or "
      "choose another --out";
  auto folder = run::RunFolder::claim(out, options);
  if (!folder || keep_index) return folder;
  std::string text;
  for (const std::string& n : names) text += n + "\n";
  OMNI_RETURN_IF_ERROR(run::write_file_atomically(out + "/" + kSweepIndex, text));
  return folder;
}

bool point_finished(const std::string& out, const std::string& name) {
  std::ifstream in(out + "/" + name + "/summary.json");
  if (!in) return false;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.empty()) return false;
  // A jobs run stopped early on request (a signal) or by an error writes its summary too: run it again. One that
  // reached its max_time is complete.
  if (j.value("kind", "") == "jobs" && j.contains("stopped") && j["stopped"].is_string()) {
    return j["stopped"].get<std::string>().rfind("max-time", 0) == 0;
  }
  return true;
}

}  // namespace omnilearn::cli
