// A short real BSP run: two LibTorch worker processes train the LeNet-sized CNN on a 1024-sample subset of
// Fashion-MNIST for 2 epochs (32 steps) over Gloo, under cgroup quotas when this process may create them (else a
// fake throttler), and the run folder is checked.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "omnilearn/base/subprocess.h"
#include "omnilearn/emulator/cgroup_throttler.h"
#include "omnilearn/emulator/data_partition.h"
#include "omnilearn/emulator/dataset_cache.h"
#include "omnilearn/emulator/launcher.h"
#include "omnilearn/emulator/testbed_config.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "fake_launch_environment.h"
#include "test_scenarios.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

int count_rows(const std::string& path) {
  std::ifstream in(path);
  int rows = -1;  // header
  for (std::string line; std::getline(in, line);) ++rows;
  return rows;
}

// Options for a run of the real worker program into `dir`/run; without cgroup access, a fake throttler (no quotas).
LaunchOptions real_worker_options(const std::string& dir) {
  LaunchOptions o;
  o.output_dir = dir + "/run";
  o.argv = {"e2e_test"};
  auto env = std::make_shared<testing::FakeLaunchEnvironment>(OMNILEARN_WORKER);
  env->host_dataset = true;
  env->host_groups = true;
  if (const Status access = check_cgroup_access(); !access.is_ok()) {
    std::printf("no cgroup access (%s): running without CPU quotas\n", access.message().c_str());
    env->host_groups = false;
  }
  o.environment = std::move(env);
  return o;
}

TEST(EmulatorEndToEnd, TwoWorkerBspRunWritesTheRunFolder) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST missing: install the Debian package dataset-fashion-mnist";
  }
  const std::string dir = testing::fresh_dir("e2e");
  auto scenario = scenarios::load_scenario(testing::write_scenario(dir, "e2e", 2, "", 1024, 64, 2));
  ASSERT_TRUE(scenario.is_ok()) << scenario.status().message();
  scenarios::EmulatorSpec config;
  config.eval_samples = 500;
  config.target_accuracy = 0.0;
  config.cpu_budget = 1.5;
  auto r = run_emulation(with_settings(*scenario, config), real_worker_options(dir));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->message;
  EXPECT_EQ(r->summary.iterations, 16 * 2);  // 1024 / 64 per epoch
  EXPECT_EQ(r->summary.epochs, 2);
  EXPECT_EQ(r->summary.stop_reason, run::StopReason::kEpochs);
  EXPECT_EQ(count_rows(dir + "/run/iterations.csv"), 2 * 32);
  EXPECT_GE(count_rows(dir + "/run/plans.csv"), 2);  // the initial plan, one row per worker
  EXPECT_GE(count_rows(dir + "/run/evaluations.csv"), 2);
  const auto summary = nlohmann::json::parse(std::ifstream(dir + "/run/summary.json"));
  ASSERT_TRUE(summary.contains("final_accuracy"));
  const double acc = summary["final_accuracy"].get<double>();
  std::printf("final accuracy after 2 epochs of 1024 samples: %.3f, %.2f s\n", acc, r->summary.total_time_s);
  EXPECT_GT(acc, 0.3);  // well above chance (0.1)
  EXPECT_TRUE(summary["extra"].contains("controller_overhead"));
  EXPECT_GT(r->summary.decisions, 0);
  // Real cgroups v1: Gloo's threads ran outside the quota (emulator.throttle: compute); a fake throttler cannot.
  const auto manifest = nlohmann::json::parse(std::ifstream(dir + "/run/manifest.json"));
  ASSERT_TRUE(manifest.contains("throttle"));
  EXPECT_EQ(manifest["throttle"], check_cgroup_access().is_ok() && !is_cgroup_v2() ? "compute" : "process");
  EXPECT_EQ(manifest["scenario"]["emulator"]["eval_samples"], 500);  // the settings the run used
  EXPECT_FALSE(manifest["wall_clock"]["elapsed_s"].is_null());       // filled in at the end
  // The workers' one configuration file: the resolved settings, network included.
  auto written = read_testbed_config(dir + "/run/config.json");
  ASSERT_TRUE(written.is_ok()) << written.status().message();
  EXPECT_EQ(written->settings.network, Network::kLeNet);
  EXPECT_EQ(written->world, 2);
}

// Your own model and data: a TorchScript module and torch.save tensor files that the test makes itself (4 classes
// decided by a linear map of [1, 8, 8] inputs), trained by two BSP workers; relative paths resolve beside the
// scenario. `omnilearn calibrate --scenario` then measures the same module into a profile the simulator loads.
TEST(EmulatorEndToEnd, UsersTorchScriptModelTrainsOnUsersTensorFiles) {
  const std::string dir = testing::fresh_dir("e2e-user");
  const auto made = Subprocess::run({OMNILEARN_MAKE_USER_MODEL, dir});
  ASSERT_TRUE(made.is_ok() && *made == 0) << (made.is_ok() ? describe_exit(*made) : made.status().message());
  const std::string settings = "emulator: {model_file: model.pt, input_shape: [1, 8, 8], train_data: train.pt, "
                               "test_data: test.pt, eval_samples: 512, target_accuracy: 0, learning_rate: 0.1}\n";
  const std::string path = testing::write_scenario(dir, "user", 2, settings, 2048, 64, 3);
  {  // the dataset is the user's, whatever workload.dataset says
    std::ifstream in(path);
    std::string yaml((std::istreambuf_iterator<char>(in)), {});
    yaml.replace(yaml.find("fashion-mnist"), 13, "my-blobs");
    std::ofstream(path) << yaml;
  }
  auto scenario = scenarios::load_scenario(path);
  ASSERT_TRUE(scenario.is_ok()) << scenario.status().message();
  auto r = run_emulation(*scenario, real_worker_options(dir));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->message;
  EXPECT_EQ(r->summary.iterations, 3 * 32);  // 2048 / 64 per epoch
  ASSERT_TRUE(r->summary.final_accuracy.has_value());
  std::printf("user model: final accuracy %.3f after 3 epochs\n", *r->summary.final_accuracy);
  EXPECT_GT(*r->summary.final_accuracy, 0.5);  // chance is 0.25
  auto written = read_testbed_config(dir + "/run/config.json");
  ASSERT_TRUE(written.is_ok()) << written.status().message();
  EXPECT_EQ(written->settings.network, Network::kTorchScript);
  EXPECT_EQ(written->settings.model_file, dir + "/model.pt");  // resolved beside the scenario

  // A file that is not a tensor file stops the run (the worker names it on stderr).
  std::ofstream(dir + "/bad.pt") << "not a tensor file";
  auto bad = scenarios::load_scenario(path, {"emulator.train_data=bad.pt"});
  ASSERT_TRUE(bad.is_ok());
  auto failed = run_emulation(*bad, real_worker_options(dir + "/bad"));
  ASSERT_TRUE(failed.is_ok()) << failed.status().message();
  EXPECT_NE(failed->exit_code, 0);
}

// The time budget stops a BSP run (and then the ASP server) long before its 1000 epochs, on every host: every rank
// takes rank 0's reason, which summary.json records.
TEST(EmulatorEndToEnd, TheTimeBudgetStopsBspAndAspRuns) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST missing: install the Debian package dataset-fashion-mnist";
  }
  for (const char* mode : {"bsp", "asp"}) {
    const std::string dir = testing::fresh_dir(std::string("e2e-time-") + mode);
    std::string path = testing::write_scenario(dir, mode, 2, "", 1024, 64, 1000);
    {
      std::ifstream in(path);
      std::string text((std::istreambuf_iterator<char>(in)), {});
      text.replace(text.find("mode: bsp"), 9, std::string("mode: ") + mode);
      std::ofstream(path) << text;
    }
    auto scenario = scenarios::load_scenario(path);
    ASSERT_TRUE(scenario.is_ok()) << scenario.status().message();
    scenarios::EmulatorSpec config;
    config.eval_samples = 200;
    config.target_accuracy = 0.0;
    config.time_budget_s = 1.0;
    auto r = run_emulation(with_settings(*scenario, config), real_worker_options(dir));
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    ASSERT_EQ(r->exit_code, 0) << mode << ": " << r->message;
    EXPECT_EQ(r->summary.stop_reason, run::StopReason::kTime) << mode;
    EXPECT_LT(r->summary.epochs, 1000) << mode;
    const auto summary = nlohmann::json::parse(std::ifstream(dir + "/run/summary.json"));
    EXPECT_EQ(summary["stop_reason"], "time") << mode;
  }
}

// ASP: two workers and a parameter server for 2 epochs of 1024 samples; staleness is recorded.
TEST(EmulatorEndToEnd, TwoWorkerAspRunRecordsStaleness) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST missing: install the Debian package dataset-fashion-mnist";
  }
  const std::string dir = testing::fresh_dir("e2e-asp");
  std::string path = testing::write_scenario(dir, "asp", 2, "", 1024, 64, 2);
  {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    text.replace(text.find("mode: bsp"), 9, "mode: asp");
    std::ofstream(path) << text;
  }
  auto scenario = scenarios::load_scenario(path);
  ASSERT_TRUE(scenario.is_ok()) << scenario.status().message();
  EXPECT_EQ(scenario->policy.name, "omnilearn-asp");
  scenarios::EmulatorSpec config;
  config.eval_samples = 500;
  config.target_accuracy = 0.0;
  config.learning_rate = 0.02;
  // No momentum: with momentum 0.9 stale updates can make such a short run diverge, depending on how the host
  // interleaves the workers (seen once beside a busy process: accuracy 0.118 after 141 updates).
  config.momentum = 0.0;
  auto r = run_emulation(with_settings(*scenario, config), real_worker_options(dir));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->message;
  EXPECT_EQ(r->summary.mode, "asp");
  EXPECT_EQ(r->summary.stop_reason, run::StopReason::kEpochs);
  EXPECT_GE(r->summary.iterations, 2 * 1024 / 56);  // 2 epochs of samples at batches <= max_batch 56
  const auto summary = nlohmann::json::parse(std::ifstream(dir + "/run/summary.json"));
  ASSERT_TRUE(summary.contains("mean_staleness")) << summary.dump();
  ASSERT_TRUE(summary.contains("max_staleness"));
  ASSERT_TRUE(summary.contains("final_accuracy"));
  std::printf("ASP: %lld updates, mean staleness %.2f, max %lld, accuracy %.3f\n",
              static_cast<long long>(r->summary.iterations), summary["mean_staleness"].get<double>(),
              summary["max_staleness"].get<long long>(), summary["final_accuracy"].get<double>());
  EXPECT_GT(summary["final_accuracy"].get<double>(), 0.2);  // above chance (0.1) after ~60 small async updates
  std::ifstream iters(dir + "/run/iterations.csv");
  std::string header, row;
  std::getline(iters, header);
  std::getline(iters, row);
  EXPECT_NE(header.find("staleness"), std::string::npos);
  EXPECT_NE(row.back(), ',') << "the staleness cell is filled: " << row;
}

// workload.asp on the testbed: two workers and the parameter server for 2 epochs of 1024 samples. `asp` is the
// workload.asp mapping, `learning_rate` the workers' step, `decide_every_epoch` the policy's `decide: every-epoch`
// (a decision at each barrier) instead of every 4 updates; returns the run folder.
std::string run_asp_variant(const std::string& name, const std::string& asp, double learning_rate = 0.02,
                            bool decide_every_epoch = false) {
  const std::string dir = testing::fresh_dir(name);
  std::string path = testing::write_scenario(dir, name, 2, "", 1024, 64, 2);
  {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    text.replace(text.find("mode: bsp"), 9, "mode: asp");
    text.replace(text.find("  epochs: 2\n"), 12, "  epochs: 2\n  asp: " + asp + "\n");
    if (decide_every_epoch) text.replace(text.find("every_n: 4}"), 11, "decide: every-epoch}");
    std::ofstream(path) << text;
  }
  auto scenario = scenarios::load_scenario(path);
  EXPECT_TRUE(scenario.is_ok()) << scenario.status().message();
  if (!scenario.is_ok()) return "";
  scenarios::EmulatorSpec config;
  config.eval_samples = 500;
  config.target_accuracy = 0.0;
  config.learning_rate = learning_rate;
  config.momentum = 0.0;
  auto r = run_emulation(with_settings(*scenario, config), real_worker_options(dir));
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  if (!r.is_ok()) return "";
  EXPECT_EQ(r->exit_code, 0) << r->message;
  return dir + "/run";
}

struct AspRow {
  int worker = 0;
  long long staleness = 0;
  double wait_s = 0.0;
};
std::vector<AspRow> asp_rows(const std::string& run) {
  std::ifstream in(run + "/iterations.csv");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::stringstream ss(line); std::getline(ss, line, ',');) header.push_back(line);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t worker = column("worker"), staleness = column("staleness"), wait = column("wait_s");
  std::vector<AspRow> rows;
  for (std::string row; std::getline(in, row);) {
    std::vector<std::string> cells;
    for (std::stringstream ss(row); std::getline(ss, line, ',');) cells.push_back(line);
    if (cells.size() <= std::max({worker, staleness, wait}) || cells[staleness].empty()) continue;
    rows.push_back({std::stoi(cells[worker]), std::stoll(cells[staleness]), std::stod(cells[wait])});
  }
  return rows;
}

// The paper's algorithm (a local step, the whole model pushed over the server's, a pull per epoch after the barrier),
// with the epochs counted by floor and by ceil, and SSP with s = 0 (a synchronous round: with two workers no push is more than one update stale).
TEST(EmulatorEndToEnd, TwoWorkerAspRunsThePapersAlgorithmAndSsp) {
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST missing: install the Debian package dataset-fashion-mnist";
  }
  // The final model is one worker's ~16 local steps (the other's are overwritten), so the step is larger than the
  // gradient variants' 0.02: at 0.02 the accuracy ranged 0.19-0.39 over runs, too near the bound below.
  const std::string paper = run_asp_variant("e2e-asp-paper", "{update: model-overwrite, pull: per-epoch}", 0.1);
  ASSERT_FALSE(paper.empty());
  const auto summary = nlohmann::json::parse(std::ifstream(paper + "/summary.json"));
  ASSERT_TRUE(summary.contains("final_accuracy"));
  std::printf("paper's ASP: accuracy %.3f\n", summary["final_accuracy"].get<double>());
  EXPECT_GT(summary["final_accuracy"].get<double>(), 0.2);  // chance is 0.1
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(paper + "/config.json"))["asp"]["update"], "model-overwrite");
  int held = 0;
  for (const AspRow& r : asp_rows(paper)) held += r.wait_s > 0.0 ? 1 : 0;
  EXPECT_GE(held, 1) << "the first epoch's barrier holds the worker that is not last";

  // epochs: ceil, as the paper's server counts: a barrier after the run's first push and after the first push of
  // each epoch (1, then 2 once 1024 samples are in), where floor has one barrier in 2 epochs (at 1024 samples).
  // With the decision at each barrier, the first comes once both workers have pushed once: step 2, data epoch 0
  // (with floor it would come at 1024 samples, in epoch 1).
  const std::string ceil = run_asp_variant(
      "e2e-asp-paper-ceil", "{update: model-overwrite, pull: per-epoch, epochs: ceil}", 0.1, /*decide_every_epoch=*/true);
  ASSERT_FALSE(ceil.empty());
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(ceil + "/config.json"))["asp_epochs"], "ceil");
  std::ifstream plans(ceil + "/plans.csv");
  std::string line;
  std::getline(plans, line);  // step,epoch,time_s,reason,...
  std::string first_decision;
  while (std::getline(plans, line) && first_decision.empty()) {
    if (line.find(",initial,") == std::string::npos) first_decision = line;
  }
  EXPECT_EQ(first_decision.substr(0, 4), "2,0,") << "the first decision: " << first_decision;

  const std::string ssp = run_asp_variant("e2e-asp-ssp", "{rule: ssp, staleness_bound: 0}");
  ASSERT_FALSE(ssp.empty());
  const auto rows = asp_rows(ssp);
  ASSERT_GT(rows.size(), 20u);
  for (const AspRow& r : rows) EXPECT_LE(r.staleness, 1) << "worker " << r.worker;
}

// The first `count` labels of a decompressed IDX label file (8 header bytes, then one byte per label).
std::vector<std::int64_t> idx_labels(const std::string& path, std::size_t count) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(8);
  std::vector<std::int64_t> labels;
  for (char c; labels.size() < count && in.get(c);) labels.push_back(static_cast<unsigned char>(c));
  return labels;
}

// workload.partition on the testbed: each ASP worker process samples only its shards. Four workers, sorted-shards,
// workers 1-3 down throughout: worker 0 trains alone on the first quarter of the label-sorted 1,024 samples (three
// classes), so the model never learns to predict the others: its test accuracy is at most the share of worker 0's
// classes among the 500 test samples (about 30%, where iid data reach about 60%), while it learns its own (above a
// third of that share). The workers down from the start leave the plan before anyone computes, as in the simulator
// (run::apply_start_levels): only worker 0 pushes.
TEST(EmulatorEndToEnd, SortedShardsTrainAnAspWorkerOnItsOwnClasses) {
  const std::string source = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(source + "/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST missing: install the Debian package dataset-fashion-mnist";
  }
  const std::string dir = testing::fresh_dir("e2e-asp-shards");
  std::string path = testing::write_scenario(
      dir, "asp-shards", 4,
      "availability: {schedule: {unit: seconds, phases: [{at: 0, fractions: [1, 0, 0, 0]}]}}\n", 1024, 64, 4);
  {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    text.replace(text.find("mode: bsp"), 9, "mode: asp");
    text.replace(text.find("  epochs: 4\n"), 12, "  epochs: 4\n  partition: sorted-shards\n");
    std::ofstream(path) << text;
  }
  auto scenario = scenarios::load_scenario(path);
  ASSERT_TRUE(scenario.is_ok()) << scenario.status().message();
  scenarios::EmulatorSpec config;
  config.eval_samples = 500;
  config.target_accuracy = 0.0;
  config.learning_rate = 0.05;
  config.momentum = 0.0;
  auto r = run_emulation(with_settings(*scenario, config), real_worker_options(dir));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->exit_code, 0) << r->message;
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(dir + "/run/config.json"))["partition"]["kind"], "sorted-shards");
  const auto rows = asp_rows(dir + "/run");
  ASSERT_FALSE(rows.empty());
  for (const AspRow& row : rows) ASSERT_EQ(row.worker, 0) << "a worker down from the start pushed";
  auto data = prepare_fashion_mnist(source, default_dataset_cache_dir());
  ASSERT_TRUE(data.is_ok()) << data.status().message();
  const auto train = idx_labels(*data + "/train-labels-idx1-ubyte", 1024);
  const auto test = idx_labels(*data + "/t10k-labels-idx1-ubyte", 500);
  ASSERT_EQ(train.size(), 1024u);
  ASSERT_EQ(test.size(), 500u);
  std::vector<bool> held(10, false);
  for (std::int64_t i : partition_samples(train, 4, 0, {scenarios::PartitionKind::kSortedShards, 1})) {
    held[static_cast<std::size_t>(train[static_cast<std::size_t>(i)])] = true;
  }
  const double share = static_cast<double>(std::count_if(test.begin(), test.end(), [&](std::int64_t l) {
                         return held[static_cast<std::size_t>(l)];
                       })) / static_cast<double>(test.size());
  const double accuracy =
      nlohmann::json::parse(std::ifstream(dir + "/run/summary.json"))["final_accuracy"].get<double>();
  std::printf("sorted shards: worker 0's classes are %.1f%% of the test samples; accuracy %.3f\n", 100 * share,
              accuracy);
  EXPECT_LE(accuracy, share + 0.005) << "classes outside worker 0's shard were learnt";
  EXPECT_GT(accuracy, share / 3.0) << "worker 0 learns its own classes";
}

}  // namespace
}  // namespace omnilearn::emulator
