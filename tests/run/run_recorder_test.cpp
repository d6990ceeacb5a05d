#include "omnilearn/run/run_recorder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "omnilearn/run/manifest.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "temp_dir.h"

namespace omnilearn::run {
namespace {

using scenarios::testing::read_file;
using scenarios::testing::TempDir;

IterationRecord row(WorkerId k, std::int64_t step, std::int64_t epoch, double start, double compute, double wait) {
  IterationRecord r;
  r.worker = k, r.step = step, r.epoch = epoch, r.start_s = start;
  r.compute_s = compute, r.wait_s = wait, r.comm_s = 0.1, r.batch = 16;
  return r;
}

TEST(RunRecorder, KeepsExactTotalsWithRowsOffAndFillsTheSummary) {
  TempDir tmp;
  auto w = RunWriter::open((tmp.path() / "r").string(), "{}", /*timeline=*/false);
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  RunRecorder rec(std::move(w).value(), RecorderOptions{/*iteration_rows=*/false, /*timeline=*/false});
  // Two workers, three steps; epoch 1 starts at step 2. Worker 1 waits 0.2 s per step.
  for (std::int64_t step = 0; step < 3; ++step) {
    const double start = 10.0 + static_cast<double>(step);
    rec.iteration(row(0, step, step / 2, start, 0.5, 0.0));
    rec.iteration(row(1, step, step / 2, start, 0.3, 0.2));
  }
  rec.plan(PlanRecord{2, 0, 12.0, "scheduled", true, 0.4, {20, 12}, {0.625, 0.375}});
  rec.plan(PlanRecord{4, 0, 14.0, "held-by-dead-band", false, 0.01, {20, 12}, {0.625, 0.375}});
  rec.evaluation(EvaluationRecord{13.0, 2, 1, 0.7, 0.81});
  RunSummary s;
  rec.complete(s);
  rec.fill_from_records(s, 10.0);
  EXPECT_EQ(s.decisions, 2);
  EXPECT_EQ(s.batch_changes, 1);
  EXPECT_NEAR(s.idle_fraction, 0.6 / (2.4 + 0.6 + 0.6), 1e-12);  // wait / (compute + comm + wait)
  EXPECT_EQ(s.final_accuracy, 0.81);
  EXPECT_FALSE(s.mean_staleness.has_value());
  EXPECT_EQ(s.iterations, 3);
  EXPECT_EQ(s.epochs, 2);
  EXPECT_NEAR(s.total_time_s, 3.0 - 0.4, 1e-12);  // the last step ends at 12 + 0.6
  EXPECT_NEAR(s.mean_iteration_s, 0.6, 1e-12);
  ASSERT_EQ(s.epoch_time_s.size(), 2u);
  EXPECT_NEAR(s.epoch_time_s[0], 2.0, 1e-12);
  EXPECT_EQ(rec.max_epoch(), 1);
  ASSERT_TRUE(rec.finish(s).is_ok());
  // Rows off: only the header in iterations.csv; plans and evaluations are always written.
  EXPECT_EQ(read_file(tmp.path() / "r" / "iterations.csv").find('\n'),
            read_file(tmp.path() / "r" / "iterations.csv").size() - 1);
  EXPECT_NE(read_file(tmp.path() / "r" / "plans.csv").find("held-by-dead-band"), std::string::npos);
}

TEST(RunRecorder, WithoutAWriterKeepsTheTotalsOnly) {
  RunRecorder rec(nullptr, RecorderOptions{});
  rec.iteration(row(0, 0, 0, 0.0, 0.5, 0.0));
  rec.iteration(row(1, 0, 0, 0.0, 0.3, 0.2));
  rec.plan(PlanRecord{1, 0, 0.6, "scheduled", true, 0.4, {20, 12}, {0.625, 0.375}});
  rec.availability(1, 0.5, 0.7);
  rec.evaluation(EvaluationRecord{0.8, 0, 0, 0.7, 0.81});
  RunSummary s;
  rec.complete(s);
  rec.fill_from_records(s, 0.0);
  EXPECT_EQ(s.iterations, 1);
  EXPECT_EQ(s.decisions, 1);
  EXPECT_EQ(s.final_accuracy, 0.81);
  EXPECT_NEAR(s.idle_fraction, 0.2 / 1.2, 1e-12);
  EXPECT_TRUE(rec.finish(s).is_ok());
  EXPECT_TRUE(rec.rewrite_manifest("{}").is_ok());
}

TEST(RunRecorder, StalenessAndTimelineEvents) {
  TempDir tmp;
  auto w = RunWriter::open((tmp.path() / "r").string(), "{}", /*timeline=*/true);
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  RunRecorder rec(std::move(w).value(), RecorderOptions{});
  IterationRecord a = row(0, 1, 0, 0.0, 0.5, 0.0);
  a.staleness = 2;
  IterationRecord b = row(1, 2, 0, 0.1, 0.5, 0.0);
  b.staleness = 5;
  rec.iteration(a);
  rec.iteration(b);
  rec.availability(1, 0.5, 0.3);
  RunSummary s;
  rec.complete(s);
  EXPECT_EQ(s.mean_staleness, 3.5);
  EXPECT_EQ(s.max_staleness, 5);
  ASSERT_TRUE(rec.finish(s).is_ok());
  const auto timeline = nlohmann::json::parse(read_file(tmp.path() / "r" / "timeline.json"));
  int availability = 0, compute = 0;
  for (const auto& e : timeline["traceEvents"]) {
    if (e["name"] == "availability") {
      ++availability;
      EXPECT_EQ(e["args"]["fraction"], 0.5);
    }
    if (e["name"] == "compute") ++compute;
  }
  EXPECT_EQ(availability, 1);
  EXPECT_EQ(compute, 2);
}

TEST(Manifest, HoldsTheScenarioTheFieldsInOrderAndTheWallClockLast) {
  auto s = scenarios::parse_scenario("cluster: {nodes: [{name: a, core_speed: 1e9}]}\nworkload: {model: resnet18, global_batch: 64}\nseed: 42\n",
                                     "m.yaml");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  Manifest m("sim", *s, {"omnilearn", "sim", "m.yaml"});
  m.set("zeta", 1);
  m.set("alpha", "\xff not utf-8");
  m.set_all({{"git_sha", "abc"}});
  const std::string open = m.text();
  EXPECT_NE(open.find("\"elapsed_s\": null"), std::string::npos);
  const auto j = nlohmann::ordered_json::parse(m.text(1.5));
  EXPECT_EQ(j["backend"], "sim");
  EXPECT_EQ(j["seed"], 42);
  EXPECT_EQ(j["scenario"]["seed"], 42);
  EXPECT_EQ(j["argv"][2], "m.yaml");
  EXPECT_EQ(j["wall_clock"]["elapsed_s"], 1.5);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  const std::vector<std::string> expected{"backend", "scenario", "argv", "seed", "zeta", "alpha", "git_sha", "wall_clock"};
  EXPECT_EQ(keys, expected);
}

}  // namespace
}  // namespace omnilearn::run
