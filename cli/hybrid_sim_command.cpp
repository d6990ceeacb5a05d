#include "cli/hybrid_sim_command.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/progress_bar.h"
#include "omnilearn/base/atomic_file.h"
#include "omnilearn/base/format.h"
#include "omnilearn/hybrid/hybrid_run.h"
#include "omnilearn/run/jobs_run_setup.h"
#include "omnilearn/scenarios/hybrid_scenario.h"
#include "omnilearn/traces/layer_costs.h"

namespace omnilearn::cli {

namespace {

int fail(const std::string& message) {
  std::cerr << "omnilearn sim: " << message << "\n";
  return 1;
}

// The files a hybrid run writes into its folder.
constexpr const char* kRunFiles[] = {"steps.csv", "plans.csv", "placement.csv", "devices.csv", "timeline.json",
                                     "summary.json", "policies.csv"};

// A folder a run may write into: new, empty, or (with --force) holding only what a hybrid run writes, removed first.
Status prepare_folder(const std::filesystem::path& dir, bool force) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return Status::ok();
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    bool ours = false;
    for (const char* f : kRunFiles) ours = ours || name == f;
    if (!force) {
      return Status::invalid_argument(dir.string() + " is not empty (" + name +
                                      "); choose a new folder or pass --force to replace an earlier run's files");
    }
    if (ours) std::filesystem::remove(entry.path(), ec);
  }
  return Status::ok();
}

}  // namespace

int run_hybrid_sim(const std::string& path, const std::vector<std::string>& overrides, const std::string& out,
                   bool force, bool quiet) {
  auto scenario = scenarios::load_hybrid_scenario(path, overrides);
  if (!scenario) return fail(scenario.status().message());
  std::unique_ptr<hybrid::LayerCostSource> source;
  if (scenario->has_transformer) {
    auto s = hybrid::make_transformer_source(scenario->transformer);
    if (!s) return fail(path + ": " + s.status().message());
    source = std::move(s).value();
  } else {
    auto table = traces::read_layer_cost_table(run::shipped_device_table("sailor-layers.csv"),
                                               run::shipped_device_table("sailor-models.csv"));
    if (!table) return fail(table.status().message());
    auto s = hybrid::make_profile_source(std::make_shared<const traces::LayerCostTable>(std::move(table).value()),
                                         scenario->profile);
    if (!s) return fail(path + ": model.profile: " + s.status().message());
    source = std::move(s).value();
  }
  const std::filesystem::path dir = out.empty() ? std::filesystem::path("runs") / scenario->name : std::filesystem::path(out);
  if (Status st = prepare_folder(dir, force); !st) return fail(st.message());
  const bool several = scenario->policies.size() > 1;
  std::string table = "policy,steps,total_time_s,mean_step_s,vs_oracle,micro_batch_changes,layer_changes,replans\n";
  std::vector<std::pair<std::string, hybrid::HybridRunResult>> results;
  for (hybrid::HybridPolicy policy : scenario->policies) {
    hybrid::HybridRunSpec spec = scenario->spec;
    spec.policy = policy;
    ProgressBar bar(std::string("hybrid ") + hybrid::policy_name(policy), !quiet);
    const double steps = static_cast<double>(spec.steps);
    auto result = hybrid::run_hybrid(spec, *source, [&](std::int64_t s) { bar.update(static_cast<double>(s + 1) / steps); });
    bar.finish();
    if (!result) return fail(path + ": " + hybrid::policy_name(policy) + ": " + result.status().message());
    const std::filesystem::path folder = several ? dir / hybrid::policy_name(policy) : dir;
    if (several) {
      if (Status st = prepare_folder(folder, force); !st) return fail(st.message());
    }
    const nlohmann::ordered_json about = {{"name", scenario->name},
                                          {"seed", scenario->seed},
                                          {"file", path},
                                          {"model", source->describe()},
                                          {"text", scenario->text}};
    const std::string extra = about.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (Status st = hybrid::write_hybrid_run(*result, spec, folder.string(), extra); !st) return fail(st.message());
    std::printf("%-10s %6zu steps  total %10.2f s  mean step %8.4f s  (%s)\n", hybrid::policy_name(policy),
                result->steps.size(), result->total_s, result->total_s / static_cast<double>(result->steps.size()),
                folder.string().c_str());
    results.emplace_back(hybrid::policy_name(policy), std::move(result).value());
  }
  if (several) {
    double oracle = 0.0;
    for (const auto& [name, r] : results) {
      if (name == "oracle") oracle = r.total_s;
    }
    for (const auto& [name, r] : results) {
      int changes[4] = {0, 0, 0, 0};
      for (const auto& p : r.plans) ++changes[p.level];
      table += name + "," + std::to_string(r.steps.size()) + "," + format_g(r.total_s, 9) + "," +
               format_g(r.total_s / static_cast<double>(r.steps.size()), 9) + "," + (oracle > 0.0 ? format_g(r.total_s / oracle, 9) : "") +
               "," + std::to_string(changes[1]) + "," + std::to_string(changes[2]) + "," + std::to_string(changes[3]) + "\n";
    }
    if (Status st = write_file_atomically((dir / "policies.csv").string(), table); !st) return fail(st.message());
    std::printf("comparison: %s\n", (dir / "policies.csv").string().c_str());
  }
  return 0;
}

}  // namespace omnilearn::cli
