// Virtual-time training's simulator side (workload.numerics: real) against a scripted fake at the numerics seam:
// the refusal without numerics, the evaluation schedule, the stop at the target accuracy or the time budget (the stop
// reason in summary.json), the time to target and the energy to it.
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "omnilearn/sim/numerics.h"
#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using testing::read_csv;
using testing::read_text;
using testing::run_in_child;
using testing::summary_number;
using testing::test_dir;

// Each evaluation is 0.1 more accurate than the last; each batch's loss is its worker's id.
class ScriptedNumerics final : public TrainingNumerics {
 public:
  Result<std::vector<std::optional<BatchOutcome>>> bsp_step(std::span<const BatchSize> batch,
                                                            const std::vector<bool>& lost) override {
    std::vector<std::optional<BatchOutcome>> out(batch.size());
    for (std::size_t k = 0; k < batch.size(); ++k) {
      if (batch[k] > 0 && !lost[k]) out[k] = BatchOutcome{static_cast<double>(k), 0.5};
    }
    return out;
  }
  Result<BatchOutcome> asp_push(WorkerId k, BatchSize, std::int64_t, Seconds) override {
    return BatchOutcome{static_cast<double>(k), 0.5};
  }
  void asp_pull(WorkerId) override {}
  Result<EvaluationOutcome> evaluate() override {
    ++evaluations_;
    return EvaluationOutcome{1.0, 0.1 * evaluations_};
  }
  std::int64_t parameters() const override { return 42; }

 private:
  int evaluations_ = 0;
};

scenarios::Scenario real_numerics_scenario(controller::TrainingMode mode) {
  scenarios::Scenario s = testing::four_worker_scenario({6, 6, 4, 32}, "uniform");
  s.mode = mode;
  s.workload.numerics = scenarios::Numerics::kReal;
  s.emulator.eval_every = 5;
  s.emulator.target_accuracy = 0.45;
  return s;
}

TEST(VirtualTrainingTest, RefusedWithoutNumericsNamingTheSetting) {
  const std::string dir = test_dir("run");
  const std::string msg = run_in_child(real_numerics_scenario(controller::TrainingMode::kBsp), dir);
  EXPECT_NE(msg.find("workload.numerics: real"), std::string::npos) << msg;
  EXPECT_NE(msg.find("LibTorch"), std::string::npos) << msg;
  EXPECT_FALSE(std::filesystem::exists(dir + "/manifest.json")) << "refused before the run folder is made";
}

TEST(VirtualTrainingTest, BspEvaluatesOnScheduleAndStopsAtTheTarget) {
  const std::string dir = test_dir("run");
  SimOptions options;
  options.numerics = [](const scenarios::Scenario&) -> Result<std::unique_ptr<TrainingNumerics>> {
    return std::unique_ptr<TrainingNumerics>(std::make_unique<ScriptedNumerics>());
  };
  ASSERT_EQ(run_in_child(real_numerics_scenario(controller::TrainingMode::kBsp), dir, options), "");
  const auto evaluations = read_csv(dir + "/evaluations.csv");
  ASSERT_EQ(evaluations.size(), 5u);  // 0.1 ... 0.5: the fifth reaches 0.45
  EXPECT_EQ(evaluations.back().at("step"), "24");  // after 25 steps, labelled 0-based as the testbed does
  const auto iterations = read_csv(dir + "/iterations.csv");
  ASSERT_EQ(iterations.size(), 25u * 4u);  // the run stopped at the target
  EXPECT_EQ(iterations[3].at("loss"), "3");
  EXPECT_DOUBLE_EQ(summary_number(dir, "time_to_target_s"), std::stod(evaluations.back().at("time_s")));
  EXPECT_DOUBLE_EQ(summary_number(dir, "steps_to_target"), 25.0);
  EXPECT_DOUBLE_EQ(summary_number(dir, "final_accuracy"), 0.5);
  EXPECT_NE(read_text(dir + "/summary.json").find("\"stop_reason\": \"target\""), std::string::npos);
  EXPECT_DOUBLE_EQ(summary_number(dir, "stopped_at_target"), 1.0);
}

// A time budget spent at the first step: no evaluation at that step but the final one, which may still reach the
// target (the target outranks the time).
TEST(VirtualTrainingTest, TheTimeBudgetStopsTheRunAndTheFinalEvaluationMayReachTheTarget) {
  for (const double target : {0.0, 0.05}) {
    const std::string dir = test_dir(target > 0.0 ? "target" : "time");
    SimOptions options;
    options.numerics = [](const scenarios::Scenario&) -> Result<std::unique_ptr<TrainingNumerics>> {
      return std::unique_ptr<TrainingNumerics>(std::make_unique<ScriptedNumerics>());
    };
    scenarios::Scenario s = real_numerics_scenario(controller::TrainingMode::kBsp);
    s.emulator.time_budget_s = 1e-9;
    s.emulator.target_accuracy = target;
    ASSERT_EQ(run_in_child(s, dir, options), "");
    EXPECT_EQ(read_csv(dir + "/iterations.csv").size(), 4u);  // one step of four workers
    ASSERT_EQ(read_csv(dir + "/evaluations.csv").size(), 1u);  // the final one (0.1)
    const std::string reason = target > 0.0 ? "target" : "time";
    EXPECT_NE(read_text(dir + "/summary.json").find("\"stop_reason\": \"" + reason + "\""), std::string::npos)
        << read_text(dir + "/summary.json");
    EXPECT_DOUBLE_EQ(summary_number(dir, "stopped_at_target"), target > 0.0 ? 1.0 : 0.0);
  }
}

// With energy, each evaluation's `joules` counts what the run's total counts up to it, a down worker's off power and
// its idle time included: at the evaluation that reached the target, the run's end, it is summary.json's joules and
// energy_to_target_j.
TEST(VirtualTrainingTest, EnergyToTargetCountsADownWorkersOffPowerAndEqualsTheTotalAtTheEnd) {
  SimOptions options;
  options.numerics = [](const scenarios::Scenario&) -> Result<std::unique_ptr<TrainingNumerics>> {
    return std::unique_ptr<TrainingNumerics>(std::make_unique<ScriptedNumerics>());
  };
  scenarios::Scenario s = real_numerics_scenario(controller::TrainingMode::kBsp);
  scenarios::EnergySpec energy;
  energy.wait = {scenarios::PhasePowerMode::kIdle, 0.0};
  energy.cpu.idle_w = 1.0, energy.cpu.busy_w = 3.0, energy.cpu.off_w = 0.5;  // per core
  s.energy = energy;
  const std::string all_up = test_dir("up");
  ASSERT_EQ(run_in_child(s, all_up, options), "");
  const double t = summary_number(all_up, "time_to_target_s");
  ASSERT_GT(t, 0.0);
  EXPECT_DOUBLE_EQ(std::stod(read_csv(all_up + "/energy.csv")[3].at("idle_j")), 0.0);  // BSP: always in a step
  // Worker 3 (32 cores) down from 0.2 t to 0.5 t of the first run's time to target.
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kSeconds;
  s.availability.phases = {{0.0, {1, 1, 1, 1}}, {0.2 * t, {1, 1, 1, 0}}, {0.5 * t, {1, 1, 1, 1}}};
  const std::string dir = test_dir("down");
  ASSERT_EQ(run_in_child(s, dir, options), "");
  const auto evaluations = read_csv(dir + "/evaluations.csv");
  ASSERT_GE(evaluations.size(), 2u);
  double before = 0.0;
  for (const auto& e : evaluations) {
    EXPECT_GE(std::stod(e.at("joules")), before);
    before = std::stod(e.at("joules"));
  }
  const double joules = summary_number(dir, "joules");
  EXPECT_NEAR(std::stod(evaluations.back().at("joules")), joules, 1e-9 * joules);
  EXPECT_NEAR(summary_number(dir, "energy_to_target_j"), joules, 1e-9 * joules);
  // The down worker's off power (and idle power outside its steps) is in it: at least 0.5 W x 32 cores x 0.2 t.
  EXPECT_GE(std::stod(read_csv(dir + "/energy.csv")[3].at("idle_j")), 0.5 * 32 * 0.2 * t);
  EXPECT_NEAR(joules,
              summary_number(dir, "compute_j") + summary_number(dir, "comm_j") + summary_number(dir, "wait_j") +
                  summary_number(dir, "idle_j"),
              1e-9 * joules);
}

TEST(VirtualTrainingTest, AspEvaluatesEveryNUpdatesWithLossesInTheRows) {
  const std::string dir = test_dir("run");
  SimOptions options;
  options.numerics = [](const scenarios::Scenario&) -> Result<std::unique_ptr<TrainingNumerics>> {
    return std::unique_ptr<TrainingNumerics>(std::make_unique<ScriptedNumerics>());
  };
  ASSERT_EQ(run_in_child(real_numerics_scenario(controller::TrainingMode::kAsp), dir, options), "");
  const auto evaluations = read_csv(dir + "/evaluations.csv");
  ASSERT_EQ(evaluations.size(), 5u);
  EXPECT_EQ(evaluations.back().at("step"), "25");  // the server's update count
  EXPECT_DOUBLE_EQ(summary_number(dir, "steps_to_target"), 25.0);
  for (const auto& row : read_csv(dir + "/iterations.csv")) {
    if (std::stoll(row.at("step")) <= 25) {
      EXPECT_EQ(row.at("loss"), row.at("worker"));
    }
  }
}

}  // namespace
}  // namespace omnilearn::sim
