// Virtual-time training with the real LibTorch numerics (workload.numerics: real) on Fashion-MNIST: one worker
// matches plain single-process SGD step for step, BSP's accuracy per step does not depend on the policy when the
// batches sum to B, ASP applies each push with the staleness the run folder records, and a run repeats itself.
// Each simulation runs in a forked child (one SimGrid engine per process) before this process touches Torch.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../sim/sim_test_support.h"
#include "omnilearn/emulator/data_partition.h"
#include "omnilearn/emulator/dataset_cache.h"
#include "omnilearn/emulator/global_sampler.h"
#include "omnilearn/emulator/torch_numerics.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "torch_parts.h"

namespace omnilearn::emulator {
namespace {

using sim::testing::read_csv;
using sim::testing::read_text;
using sim::testing::run_in_child;
using sim::testing::summary_number;
using sim::testing::test_dir;

constexpr const char* kDataSource = "/usr/share/datasets/fashion-mnist";

// Four LeNet workers at the testbed's HL8 core split (or one worker), 3,000 training samples, `extra` appended.
std::string scenario_yaml(bool one_worker, const std::string& mode, const std::string& extra) {
  std::string nodes = one_worker ? "    - {name: w0, cores: 8, core_speed: 6e9, bandwidth: 10GBps, latency: 1us}\n"
                                 : "    - {name: w0, cores: 6, core_speed: 6e9, bandwidth: 10GBps, latency: 1us}\n"
                                   "    - {name: w1, cores: 6, core_speed: 6e9, bandwidth: 10GBps, latency: 1us}\n"
                                   "    - {name: w2, cores: 4, core_speed: 6e9, bandwidth: 10GBps, latency: 1us}\n"
                                   "    - {name: w3, cores: 32, core_speed: 6e9, bandwidth: 10GBps, latency: 1us}\n";
  return "seed: 3\nmode: " + mode +
         "\ncluster:\n  topology: star\n  nodes:\n" + nodes +
         "  backbone: {bandwidth: 10GBps, latency: 1us}\n"
         "workload:\n"
         "  model: {name: lenet, parameters: 22310, flops_per_sample: 2.3e6, flops_per_iteration: 2.2e5}\n"
         "  dataset: fashion-mnist\n  dataset_samples: 3000\n  global_batch: " +
         std::string(one_worker ? "64" : "128") +
         "\n  epochs: 1\n  numerics: real\n"
         "emulator: {target_accuracy: 0, eval_every: 10, eval_samples: 1000, learning_rate: 0.05, momentum: 0.9,\n"
         "           warmup_updates: 5}\n" + extra;
}

scenarios::Scenario load(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  auto s = scenarios::parse_scenario(yaml, "virtual-time.yaml", overrides);
  EXPECT_TRUE(s) << s.status().message();
  return *s;
}

sim::SimOptions numerics_options() {
  sim::SimOptions o;
  o.numerics = torch_numerics_factory(TorchNumericsOptions{/*threads=*/1});
  return o;
}

bool have_data() { return std::filesystem::exists(std::string(kDataSource) + "/train-images-idx3-ubyte.gz"); }

// The one-worker tests' reference: plain SGD in this process on one thread. LeNet from seed 3, SGD at 0.05 with
// momentum 0.9 and a 5-step warm-up, `steps` batches of 64 from the first 3,000 training samples, drawn by a
// GlobalSampler of `sampler_seed`. Each step's loss, and the final evaluation on 1,000 test samples (no losses when
// the data cannot be read: the caller's size check fails).
struct PlainSgd {
  std::vector<double> losses;
  worker::Evaluation final;
};
PlainSgd plain_sgd(std::uint64_t sampler_seed, std::size_t steps) {
  at::set_num_threads(1);
  auto data_dir = prepare_fashion_mnist(kDataSource, default_dataset_cache_dir());
  EXPECT_TRUE(data_dir) << data_dir.status().message();
  if (!data_dir) return {};
  auto train = worker::read_split(*data_dir, "train", 3000);
  auto test = worker::read_split(*data_dir, "t10k", 1000);
  EXPECT_TRUE(train && test);
  if (!train || !test) return {};
  torch::manual_seed(3);
  worker::Net net = worker::make_net(Network::kLeNet);
  torch::optim::SGD sgd(net.parameters, torch::optim::SGDOptions(0.05).momentum(0.9));
  GlobalSampler sampler(3000, sampler_seed);
  const std::vector<BatchSize> batch{64};
  PlainSgd out;
  for (std::size_t step = 0; step < steps; ++step) {
    const StepAssignment a = sampler.next(batch);
    const auto idx_span = sampler.indices(a, 0);
    auto idx = torch::from_blob(const_cast<std::int64_t*>(idx_span.data()), {a.batch[0]}, torch::kInt64);
    out.losses.push_back(worker::forward_backward(net, train->images.index_select(0, idx),
                                                  train->labels.index_select(0, idx)).loss);
    static_cast<torch::optim::SGDOptions&>(sgd.param_groups()[0].options())
        .lr(0.05 * std::min(1.0, static_cast<double>(step + 1) / 5.0));
    sgd.step();
  }
  out.final = worker::evaluate(net, *test);
  return out;
}

TEST(VirtualTimeTest, OneWorkerMatchesPlainSgdStepForStep) {
  if (!have_data()) GTEST_SKIP() << "no Fashion-MNIST at " << kDataSource << " (Debian: dataset-fashion-mnist)";
  const scenarios::Scenario s = load(scenario_yaml(/*one_worker=*/true, "bsp", "policy: {name: uniform, min_batch: 16, max_batch: 96}\n"));
  const std::string dir = test_dir("run");
  ASSERT_EQ(run_in_child(s, dir, numerics_options()), "");
  const auto rows = read_csv(dir + "/iterations.csv");
  ASSERT_EQ(rows.size(), 47u);  // 3,000 samples at 64: 46 steps and a remainder of 56

  // Plain SGD in this process: the same seed, sampler, network, optimiser and warm-up.
  const PlainSgd ref = plain_sgd(/*sampler_seed=*/3, rows.size());
  ASSERT_EQ(ref.losses.size(), rows.size());
  for (std::size_t step = 0; step < rows.size(); ++step) {
    const double simulated = std::stod(rows[step].at("loss"));
    EXPECT_NEAR(simulated, ref.losses[step], 1e-6 * std::max(1.0, std::abs(ref.losses[step]))) << "step " << step;
  }
  const worker::Evaluation& ev = ref.final;
  const auto evaluations = read_csv(dir + "/evaluations.csv");
  ASSERT_EQ(evaluations.size(), 5u);  // steps 10, 20, 30, 40 and the end (47)
  EXPECT_NEAR(std::stod(evaluations.back().at("accuracy")), ev.accuracy, 1e-9);
  EXPECT_NEAR(std::stod(evaluations.back().at("loss")), ev.loss, 1e-6);
}

TEST(VirtualTimeTest, BspAccuracyPerStepDoesNotDependOnThePolicy) {
  if (!have_data()) GTEST_SKIP() << "no Fashion-MNIST at " << kDataSource;
  const std::string policy = "policy: {name: omnilearn, min_batch: 16, max_batch: 96, dead_band: 0.05, decide: every-n, "
                             "every_n: 5, memory_guard: false}\n";
  const scenarios::Scenario omni = load(scenario_yaml(false, "bsp", policy));
  const scenarios::Scenario uniform = load(scenario_yaml(false, "bsp", policy), {"policy.name=uniform"});
  const std::string a = test_dir("omnilearn"), b = test_dir("uniform");
  ASSERT_EQ(run_in_child(omni, a, numerics_options()), "");
  ASSERT_EQ(run_in_child(uniform, b, numerics_options()), "");
  EXPECT_GT(summary_number(a, "batch_changes"), 0.0) << "the omnilearn run must change the batches";
  const auto ea = read_csv(a + "/evaluations.csv"), eb = read_csv(b + "/evaluations.csv");
  ASSERT_EQ(ea.size(), eb.size());
  ASSERT_GE(ea.size(), 3u);
  for (std::size_t i = 0; i < ea.size(); ++i) {
    EXPECT_EQ(ea[i].at("step"), eb[i].at("step"));
    // The same samples each step, split otherwise: the same gradient up to float rounding.
    EXPECT_NEAR(std::stod(ea[i].at("accuracy")), std::stod(eb[i].at("accuracy")), 0.003) << "evaluation " << i;
    EXPECT_NEAR(std::stod(ea[i].at("loss")), std::stod(eb[i].at("loss")), 2e-3) << "evaluation " << i;
  }
  // ... while the simulated time to the same step differs (HL8: the balanced run is faster).
  EXPECT_LT(std::stod(ea.back().at("time_s")), 0.9 * std::stod(eb.back().at("time_s")));
}

TEST(VirtualTimeTest, AspAppliesTheStalenessTheRunFolderRecords) {
  if (!have_data()) GTEST_SKIP() << "no Fashion-MNIST at " << kDataSource;
  const std::string policy = "policy: {name: omnilearn, min_batch: 16, max_batch: 96, every_n: 20, memory_guard: false}\n"
                             "max_iterations: 150\n";
  // The testbed's ASP optimiser (momentum 0.5, a lower rate), five epochs of 3,000 samples, capped at 150 pushes.
  const scenarios::Scenario s =
      load(scenario_yaml(false, "asp", policy), {"emulator.lr_scaling=true", "emulator.lr_scaling_rule=sqrt",
                                                 "emulator.learning_rate=0.02", "emulator.momentum=0.5",
                                                 "workload.epochs=5"});
  const std::string dir = test_dir("run");
  // The numerics count each push's staleness from the parameter versions they hold and fail the run on any
  // difference from the simulator's count.
  ASSERT_EQ(run_in_child(s, dir, numerics_options()), "");
  const auto rows = read_csv(dir + "/iterations.csv");
  double staleness = 0.0;
  int applied = 0, stale = 0;
  for (const auto& r : rows) {
    if (r.at("loss").empty()) continue;  // a push that arrived after the run's last update
    staleness += std::stod(r.at("staleness"));
    stale += std::stoll(r.at("staleness")) > 0 ? 1 : 0;
    ++applied;
  }
  EXPECT_EQ(applied, 150);
  EXPECT_GT(stale, 100) << "four asynchronous workers: most pushes are stale";
  EXPECT_GT(staleness / applied, 1.0);
  EXPECT_GE(summary_number(dir, "numerics_peak_versions"), 2.0);
  EXPECT_LE(summary_number(dir, "numerics_peak_versions"), 5.0);  // at most workers + 1 versions
  EXPECT_GT(summary_number(dir, "final_accuracy"), 0.4);  // it learns (0.557 here)
}

// With energy, each evaluation's `joules` is what the run's total counts up to it: at the evaluation that reached the
// target, which ends the run, it is summary.json's `joules` and its energy_to_target_j.
TEST(VirtualTimeTest, EnergyOfTheLastEvaluationIsTheRunsJoules) {
  if (!have_data()) GTEST_SKIP() << "no Fashion-MNIST at " << kDataSource;
  const std::string extra = "policy: {name: omnilearn, min_batch: 16, max_batch: 96, every_n: 5, memory_guard: false}\n"
                            "energy: {cpu: {idle: 0.74, busy: 3.5}}\n";
  const scenarios::Scenario s =
      load(scenario_yaml(false, "bsp", extra), {"emulator.target_accuracy=0.5", "workload.epochs=5"});
  const std::string dir = test_dir("energy");
  ASSERT_EQ(run_in_child(s, dir, numerics_options()), "");
  ASSERT_EQ(summary_number(dir, "stopped_at_target"), 1.0) << "the run must stop at the target (its last evaluation)";
  const auto rows = read_csv(dir + "/evaluations.csv");
  ASSERT_GE(rows.size(), 2u);
  double before = 0.0;
  for (const auto& r : rows) {  // cumulative: never falls
    EXPECT_GE(std::stod(r.at("joules")), before);
    before = std::stod(r.at("joules"));
  }
  const double joules = summary_number(dir, "joules");
  ASSERT_GT(joules, 0.0);
  EXPECT_NEAR(std::stod(rows.back().at("joules")), joules, 1e-9 * joules);
  EXPECT_NEAR(summary_number(dir, "energy_to_target_j"), joules, 1e-9 * joules);
  EXPECT_NEAR(std::stod(rows.back().at("time_s")), summary_number(dir, "total_time_s"), 1e-12);
  // The joules include the idle time of the workers that wait at the barrier (HL8, waiting idle on CPUs).
  EXPECT_GT(summary_number(dir, "wait_j"), 0.0);
}

TEST(VirtualTimeTest, SameScenarioAndThreadsGiveTheSameFiles) {
  if (!have_data()) GTEST_SKIP() << "no Fashion-MNIST at " << kDataSource;
  const std::string policy = "policy: {name: omnilearn, min_batch: 16, max_batch: 96, every_n: 20, memory_guard: false}\n"
                             "max_iterations: 60\n";
  const scenarios::Scenario s = load(scenario_yaml(false, "asp", policy));
  const std::string a = test_dir("a"), b = test_dir("b");
  ASSERT_EQ(run_in_child(s, a, numerics_options()), "");
  ASSERT_EQ(run_in_child(s, b, numerics_options()), "");
  for (const char* f : {"iterations.csv", "evaluations.csv", "plans.csv", "summary.json"}) {
    EXPECT_EQ(read_text(a + "/" + f), read_text(b + "/" + f)) << f;
  }
}

// One worker is never stale (τ = 0) and always the last writer: every rule, the model overwrite and the per-epoch
// pull are plain SGD step for step (the worker's local step and the server's are the same arithmetic). Not
// staleness-bounded: it scales the last, partial batch's step (56 of b_ref = 64 samples) by 56/64.
TEST(VirtualTimeTest, OneAspWorkerIsPlainSgdStepForStepUnderEveryRule) {
  if (!have_data()) GTEST_SKIP() << "no Fashion-MNIST at " << kDataSource;
  const std::vector<std::string> variants = {
      "{}", "{rule: staleness-aware}", "{rule: dc-asgd, dc_lambda: 0.5}", "{rule: ssp, staleness_bound: 0}",
      "{rule: ringmaster, delay_threshold: 0}", "{rule: rescaled}", "{update: model-overwrite}", "{pull: per-epoch}",
      "{update: model-overwrite, pull: per-epoch}"};
  std::vector<std::string> dirs;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const scenarios::Scenario s = load(scenario_yaml(true, "asp", "policy: {name: uniform, min_batch: 16, max_batch: 96}\n"),
                                       {"workload.asp=" + variants[v]});
    dirs.push_back(test_dir("v" + std::to_string(v)));
    ASSERT_EQ(run_in_child(s, dirs.back(), numerics_options()), "") << variants[v];
  }

  // Plain SGD in this process: the ASP worker's sampler (seed + 7919), the network, optimiser and warm-up; 3,000
  // samples at 64: 46 pushes and a remainder of 56.
  const PlainSgd ref = plain_sgd(/*sampler_seed=*/3 + 7919, 47);
  ASSERT_EQ(ref.losses.size(), 47u);
  const std::vector<double>& losses = ref.losses;
  const worker::Evaluation& ev = ref.final;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    SCOPED_TRACE(variants[v]);
    const auto rows = read_csv(dirs[v] + "/iterations.csv");
    ASSERT_EQ(rows.size(), losses.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].at("staleness"), "0");
      EXPECT_NEAR(std::stod(rows[i].at("loss")), losses[i], 1e-5 * std::max(1.0, losses[i])) << "push " << i;
    }
    const auto evaluations = read_csv(dirs[v] + "/evaluations.csv");
    ASSERT_FALSE(evaluations.empty());
    EXPECT_NEAR(std::stod(evaluations.back().at("loss")), ev.loss, 1e-5);
    EXPECT_NEAR(std::stod(evaluations.back().at("accuracy")), ev.accuracy, 0.002);
  }
}

// The paper's algorithm at the numerics seam: the server's model is the last pushed model, and a worker trains on its
// own copy between pulls (with its own momentum), not on what others pushed. Each worker's trajectory is replayed
// here as plain SGD on its own samples; after every push the server evaluates as the pusher's replica does.
TEST(VirtualTimeTest, ModelOverwriteServerHoldsTheLastPushedModel) {
  if (!have_data()) GTEST_SKIP() << "no Fashion-MNIST at " << kDataSource;
  const scenarios::Scenario s =
      load(scenario_yaml(false, "asp", "policy: {name: uniform, min_batch: 16, max_batch: 96}\n"),
           {"workload.asp={update: model-overwrite, pull: per-epoch}", "emulator.warmup_updates=0"});
  auto made = make_torch_numerics(s, TorchNumericsOptions{/*threads=*/1});
  ASSERT_TRUE(made) << made.status().message();
  sim::TrainingNumerics& numerics = **made;

  auto data_dir = prepare_fashion_mnist(kDataSource, default_dataset_cache_dir());
  ASSERT_TRUE(data_dir);
  auto train = worker::read_split(*data_dir, "train", 3000);
  auto test = worker::read_split(*data_dir, "t10k", 1000);
  ASSERT_TRUE(train && test);
  struct Replica {
    worker::Net net;
    std::unique_ptr<torch::optim::SGD> sgd;
    std::unique_ptr<GlobalSampler> sampler;
  };
  std::vector<Replica> replicas(2);
  for (std::size_t k = 0; k < 2; ++k) {
    torch::manual_seed(3);  // every worker starts from the server's initial weights
    replicas[k].net = worker::make_net(Network::kLeNet);
    replicas[k].sgd = std::make_unique<torch::optim::SGD>(replicas[k].net.parameters,
                                                          torch::optim::SGDOptions(0.05).momentum(0.9));
    replicas[k].sampler = std::make_unique<GlobalSampler>(3000, 3 + 7919 * (k + 1));
  }
  auto step_replica = [&](Replica& r) {
    const std::vector<BatchSize> batch{32};
    const StepAssignment a = r.sampler->next(batch);
    const auto idx_span = r.sampler->indices(a, 0);
    auto idx = torch::from_blob(const_cast<std::int64_t*>(idx_span.data()), {a.batch[0]}, torch::kInt64);
    worker::forward_backward(r.net, train->images.index_select(0, idx), train->labels.index_select(0, idx));
    r.sgd->step();
  };
  // Staleness: the other worker's updates since k pulled (the numerics check it against their own count).
  std::int64_t updates = 0;
  std::vector<std::int64_t> pulled(2, 0), own(2, 0);
  auto push = [&](WorkerId k) {
    SCOPED_TRACE("push " + std::to_string(updates + 1) + " by worker " + std::to_string(k));
    auto out = numerics.asp_push(k, 32, updates - pulled[k] - own[k], /*compute_s=*/0.01);
    ASSERT_TRUE(out) << out.status().message();
    ++updates;
    ++own[k];
    step_replica(replicas[k]);
    auto server = numerics.evaluate();
    ASSERT_TRUE(server);
    const worker::Evaluation mine = worker::evaluate(replicas[k].net, *test);
    EXPECT_NEAR(server->loss, mine.loss, 1e-5);
    EXPECT_NEAR(server->accuracy, mine.accuracy, 0.002);
    const worker::Evaluation other = worker::evaluate(replicas[1 - k].net, *test);
    EXPECT_GT(std::abs(server->loss - other.loss), 1e-4) << "the other worker's model differs: the test could fail";
  };
  // Worker 1 pushes after worker 0 twice: had it pulled, its replica (its own copy only) would not match.
  for (const WorkerId k : {0, 0, 1, 0, 1, 1, 0}) push(k);
  // A pull (the epoch's end): worker 1 takes the server's model, worker 0's last, and keeps its own momentum.
  numerics.asp_pull(1);
  pulled[1] = updates;
  own[1] = 0;
  {
    torch::NoGradGuard ng;
    for (std::size_t i = 0; i < replicas[1].net.parameters.size(); ++i) {
      replicas[1].net.parameters[i].copy_(replicas[0].net.parameters[i]);
    }
  }
  for (const WorkerId k : {1, 0, 1}) push(k);
}

// Ringmaster with R = inf drops nothing: the same run as ASGD, file for file.
TEST(VirtualTimeTest, RingmasterWithoutAThresholdIsAsgd) {
  if (!have_data()) GTEST_SKIP() << "no Fashion-MNIST at " << kDataSource;
  const std::string policy = "policy: {name: omnilearn, min_batch: 16, max_batch: 96, every_n: 20, memory_guard: false}\n"
                             "max_iterations: 60\n";
  const scenarios::Scenario asgd = load(scenario_yaml(false, "asp", policy));
  const scenarios::Scenario ring =
      load(scenario_yaml(false, "asp", policy), {"workload.asp={rule: ringmaster, delay_threshold: inf}"});
  const std::string a = test_dir("asgd"), b = test_dir("ringmaster");
  ASSERT_EQ(run_in_child(asgd, a, numerics_options()), "");
  ASSERT_EQ(run_in_child(ring, b, numerics_options()), "");
  for (const char* f : {"iterations.csv", "evaluations.csv", "plans.csv"}) {
    EXPECT_EQ(read_text(a + "/" + f), read_text(b + "/" + f)) << f;
  }
}

// Every rule and the paper's algorithm learn with four stale workers, and repeat themselves file for file.
TEST(VirtualTimeTest, EachRuleLearnsAndRepeatsItself) {
  if (!have_data()) GTEST_SKIP() << "no Fashion-MNIST at " << kDataSource;
  const std::string policy = "policy: {name: omnilearn, min_batch: 16, max_batch: 96, decide: every-epoch, dead_band: 0.2, "
                             "memory_guard: false}\n";
  for (const std::string& asp :
       {std::string("{update: model-overwrite, pull: per-epoch}"), std::string("{rule: dc-asgd}"),
        std::string("{rule: ssp, staleness_bound: 1}"), std::string("{rule: ringmaster, delay_threshold: 2}"),
        std::string("{rule: staleness-aware}"), std::string("{rule: rescaled}")}) {
    SCOPED_TRACE(asp);
    const scenarios::Scenario s = load(scenario_yaml(false, "asp", policy),
                                       {"workload.asp=" + asp, "workload.epochs=2", "emulator.momentum=0.5",
                                        "emulator.learning_rate=0.02", "emulator.eval_every=0"});
    const std::string a = test_dir("a"), b = test_dir("b");
    ASSERT_EQ(run_in_child(s, a, numerics_options()), "");
    ASSERT_EQ(run_in_child(s, b, numerics_options()), "");
    for (const char* f : {"iterations.csv", "evaluations.csv", "plans.csv", "summary.json"}) {
      EXPECT_EQ(read_text(a + "/" + f), read_text(b + "/" + f)) << f;
    }
    EXPECT_GT(summary_number(a, "final_accuracy"), 0.2) << "chance is 0.1";
  }
}

// The staleness-bounded rule with its batch policy (R = 3 = n - 1 at HL8's 6/6/4/32 split: the slow workers' batches
// fall towards equal compute times) learns, keeps every push, and repeats itself file for file.
TEST(VirtualTimeTest, StalenessBoundedLearnsAndRepeatsItself) {
  if (!have_data()) GTEST_SKIP() << "no Fashion-MNIST at " << kDataSource;
  const std::string policy = "policy: {name: staleness-bounded, min_batch: 4, max_batch: 32, every_n: 10, "
                             "memory_guard: false}\n";
  const scenarios::Scenario s = load(scenario_yaml(false, "asp", policy),
                                     {"workload.asp={rule: staleness-bounded, delay_threshold: 3}", "workload.epochs=2",
                                      "emulator.momentum=0.5", "emulator.learning_rate=0.02", "emulator.eval_every=0"});
  const std::string a = test_dir("a"), b = test_dir("b");
  ASSERT_EQ(run_in_child(s, a, numerics_options()), "");
  ASSERT_EQ(run_in_child(s, b, numerics_options()), "");
  for (const char* f : {"iterations.csv", "evaluations.csv", "plans.csv", "summary.json"}) {
    EXPECT_EQ(read_text(a + "/" + f), read_text(b + "/" + f)) << f;
  }
  EXPECT_GT(summary_number(a, "final_accuracy"), 0.2) << "chance is 0.1";
  const auto rows = read_csv(a + "/iterations.csv");
  ASSERT_FALSE(rows.empty());
  long last = 0;
  for (const auto& r : rows) last = std::max(last, std::stol(r.at("step")));
  EXPECT_EQ(last, static_cast<long>(rows.size())) << "every push is an update (a dropped one repeats a step)";
}

// workload.partition: sorted-shards gives each ASP worker only its shard of the label-sorted samples. With workers
// 1-3 down from the start, worker 0 alone trains, on the first quarter of the sorted 3,000 samples: the model never
// sees the other classes, so its test accuracy is at most the share of worker 0's classes in the test set (a model
// does not learn to predict a class it was never shown). The same run with iid data learns every class and beats it.
TEST(VirtualTimeTest, SortedShardsTrainEachWorkerOnItsOwnClasses) {
  if (!have_data()) GTEST_SKIP() << "no Fashion-MNIST at " << kDataSource;
  const std::string rest = "policy: {name: uniform}\n"
                           "availability: {schedule: {unit: seconds, phases: [{at: 0, fractions: [1, 0, 0, 0]}]}}\n";
  const std::vector<std::string> set = {"workload.epochs=2", "emulator.momentum=0.5", "emulator.learning_rate=0.05",
                                        "emulator.eval_every=0"};
  std::vector<std::string> shards = set;
  shards.push_back("workload.partition=sorted-shards");
  const std::string iid = test_dir("iid"), sorted = test_dir("sorted");
  ASSERT_EQ(run_in_child(load(scenario_yaml(false, "asp", rest), set), iid, numerics_options()), "");
  ASSERT_EQ(run_in_child(load(scenario_yaml(false, "asp", rest), shards), sorted, numerics_options()), "");
  EXPECT_NE(read_text(sorted + "/manifest.json").find("sorted-shards"), std::string::npos) << "the run records it";
  // Worker 0's classes, and their share of the 1,000 test samples.
  auto data_dir = prepare_fashion_mnist(kDataSource, default_dataset_cache_dir());
  ASSERT_TRUE(data_dir) << data_dir.status().message();
  auto train = worker::read_split(*data_dir, "train", 3000);
  auto test = worker::read_split(*data_dir, "t10k", 1000);
  ASSERT_TRUE(train && test);
  const torch::Tensor train_labels = train->labels.to(torch::kInt64).contiguous();
  const std::vector<std::int64_t> labels(train_labels.data_ptr<std::int64_t>(),
                                         train_labels.data_ptr<std::int64_t>() + train_labels.numel());
  const auto mine = partition_samples(labels, 4, 0, {scenarios::PartitionKind::kSortedShards, 1});
  ASSERT_EQ(mine.size(), 750u);
  std::set<std::int64_t> held;
  for (std::int64_t i : mine) held.insert(labels[static_cast<std::size_t>(i)]);
  const torch::Tensor test_labels = test->labels.to(torch::kInt64).contiguous();
  double share = 0.0;
  for (std::int64_t i = 0; i < test_labels.numel(); ++i) share += held.count(test_labels[i].item<std::int64_t>());
  share /= static_cast<double>(test_labels.numel());
  ASSERT_LT(share, 0.5) << "worker 0 holds a few classes";
  const double sorted_accuracy = summary_number(sorted, "final_accuracy");
  EXPECT_LE(sorted_accuracy, share + 0.005) << "classes outside worker 0's shard were learnt";
  EXPECT_GT(sorted_accuracy, 0.5 * share) << "worker 0 learns its own classes";
  EXPECT_GT(summary_number(iid, "final_accuracy"), share + 0.1) << "iid data teaches every class";
}

}  // namespace
}  // namespace omnilearn::emulator
