#include "omnilearn/run/run_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "temp_dir.h"

namespace omnilearn::run {
namespace {

using scenarios::testing::read_file;
using scenarios::testing::TempDir;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

void write_some(RunWriter& w) {
  for (std::int64_t step = 0; step < 100; ++step) {
    for (WorkerId k = 0; k < 2; ++k) {
      IterationRecord r;
      r.worker = k;
      r.step = step;
      r.epoch = step / 50;
      r.start_s = 0.1 * static_cast<double>(step);
      r.compute_s = 0.05;
      r.comm_s = 0.01;
      r.wait_s = k == 0 ? 0.04 : 0.0;
      r.batch = 32;
      if (step == 99) r.loss = 1.25;
      w.add(r);
      w.span(k, "compute", r.start_s, r.compute_s);
    }
  }
  w.add(PlanRecord{10, 0, 1.0, "scheduled", true, 0.25, {40, 24}, {0.625, 0.375}});
  w.add(PlanRecord{20, 0, 2.0, "held-by-dead-band", false, 0.01, {40, 24}, {0.625, 0.375}});
  w.add(AvailabilityRecord{5.0, 1, 0.5});
  w.add(EvaluationRecord{9.0, 99, 1, 1.5, 0.42});
  w.instant("plan", 1.0, R"({"changed":true})");
}

TEST(RunWriter, WritesEveryFileWithTheSchema) {
  TempDir tmp;
  const auto dir = tmp.path() / "runs" / "r1";
  auto w = RunWriter::open(dir.string(), R"({"seed": 1})", /*timeline=*/true);
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  write_some(**w);
  RunSummary s;
  s.policy = "omnilearn";
  s.mode = "bsp";
  s.workers = 2;
  s.iterations = 100;
  s.epochs = 2;
  s.total_time_s = 10.5;
  s.mean_iteration_s = 0.105;
  s.idle_fraction = 0.2;
  s.epoch_time_s = {5.0, 5.5};
  s.final_accuracy = 0.42;
  s.decisions = 2;
  s.batch_changes = 1;
  s.stop_reason = StopReason::kTarget;
  s.extra["controller_overhead_s"] = 0.001;
  EXPECT_EQ(nlohmann::json::parse(summary_json(s))["stop_reason"], "target");
  ASSERT_TRUE((*w)->finish(s).is_ok());
  EXPECT_FALSE((*w)->finish(s).is_ok());  // twice is an error

  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "manifest.json"))["seed"], 1);

  const auto it = lines(read_file(dir / "iterations.csv"));
  ASSERT_EQ(it.size(), 201u);
  EXPECT_EQ(it[0], "worker,step,epoch,start_s,compute_s,comm_s,wait_s,batch,loss,accuracy,staleness");
  EXPECT_EQ(it[1], "0,0,0,0,0.05,0.01,0.04,32,,,");
  EXPECT_EQ(it[4], "1,1,0,0.1,0.05,0.01,0,32,,,");
  EXPECT_EQ(it[200], "1,99,1,9.9,0.05,0.01,0,32,1.25,,");

  const auto plans = lines(read_file(dir / "plans.csv"));
  ASSERT_EQ(plans.size(), 5u);
  EXPECT_EQ(plans[0], "step,epoch,time_s,reason,changed,imbalance,worker,batch,weight");
  EXPECT_EQ(plans[1], "10,0,1,scheduled,true,0.25,0,40,0.625");
  EXPECT_EQ(plans[2], "10,0,1,scheduled,true,0.25,1,24,0.375");
  EXPECT_EQ(plans[4], "20,0,2,held-by-dead-band,false,0.01,1,24,0.375");

  EXPECT_EQ(read_file(dir / "availability.csv"), "time_s,worker,fraction\n5,1,0.5\n");
  EXPECT_EQ(read_file(dir / "evaluations.csv"), "time_s,step,epoch,loss,accuracy\n9,99,1,1.5,0.42\n");

  const auto summary = nlohmann::json::parse(read_file(dir / "summary.json"));
  EXPECT_EQ(summary["policy"], "omnilearn");
  EXPECT_EQ(summary["iterations"], 100);
  EXPECT_EQ(summary["epoch_time_s"], (std::vector<double>{5.0, 5.5}));
  EXPECT_EQ(summary["final_accuracy"], 0.42);
  EXPECT_FALSE(summary.contains("mean_staleness"));
  EXPECT_FALSE(summary.contains("time_to_target_s"));
  EXPECT_EQ(summary["stop_reason"], "target");
  EXPECT_EQ(summary["extra"]["controller_overhead_s"], 0.001);
  EXPECT_EQ(read_file(dir / "summary.json"), summary_json(s));

  const auto timeline = nlohmann::json::parse(read_file(dir / "timeline.json"));
  EXPECT_EQ(timeline["displayTimeUnit"], "ms");
  const auto& events = timeline["traceEvents"];
  ASSERT_EQ(events.size(), 2u + 200u + 1u);  // two thread names, 200 spans, one instant
  EXPECT_EQ(events[0]["ph"], "M");
  const auto& span = events[1];
  EXPECT_EQ(span["ph"], "X");
  EXPECT_EQ(span["pid"], 0);
  EXPECT_EQ(span["tid"], 1);
  EXPECT_EQ(span["dur"], 50000.0);
  const auto& instant = events.back();
  EXPECT_EQ(instant["ph"], "i");
  EXPECT_EQ(instant["s"], "g");
  EXPECT_EQ(instant["ts"], 1e6);
  EXPECT_EQ(instant["args"]["changed"], true);
}

TEST(RunWriter, CompactPlansListOnlyWhatChangedAfterAMarker) {
  TempDir dir;
  auto w = RunWriter::open((dir.path() / "r").string(), "{}", /*timeline=*/false);
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  (*w)->set_plan_rows(PlanRows::kChanges);
  (*w)->add(PlanRecord{0, 0, 0.0, "initial", true, 0.5, {40, 24, 64}, {0.25, 0.25, 0.5}});
  (*w)->add(PlanRecord{5, 0, 1.5, "scheduled", true, 0.25, {40, 32, 56}, {0.25, 0.3, 0.45}});
  (*w)->add(PlanRecord{10, 0, 3.0, "held-by-dead-band", false, 0.01, {40, 32, 56}, {0.25, 0.3, 0.45}});
  ASSERT_TRUE((*w)->close().is_ok());
  EXPECT_EQ(read_file(dir.path() / "r" / "plans.csv"),
            "step,epoch,time_s,reason,changed,imbalance,worker,batch,weight\n"
            "0,0,0,initial,true,0.5,,,\n"
            "0,0,0,initial,true,0.5,0,40,0.25\n"
            "0,0,0,initial,true,0.5,1,24,0.25\n"
            "0,0,0,initial,true,0.5,2,64,0.5\n"
            "5,0,1.5,scheduled,true,0.25,,,\n"
            "5,0,1.5,scheduled,true,0.25,1,32,0.3\n"
            "5,0,1.5,scheduled,true,0.25,2,56,0.45\n"
            "10,0,3,held-by-dead-band,false,0.01,,,\n");
}

TEST(RunWriter, CompactPlansWithBatchShareWeightsListBatchChangesOnly) {
  TempDir dir;
  auto w = RunWriter::open((dir.path() / "r").string(), "{}", /*timeline=*/false);
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  (*w)->set_plan_rows(PlanRows::kChanges);
  // Weights b_k / 96, then b_k / 80 after worker 2 leaves: every weight changes, one batch does.
  (*w)->add(PlanRecord{0, 0, 0.0, "initial", true, 0.0, {32, 48, 16}, {32.0 / 96, 48.0 / 96, 16.0 / 96}});
  (*w)->add(PlanRecord{7, 0, 2.0, "membership", true, 0.0, {32, 48, 0}, {32.0 / 80, 48.0 / 80, 0.0}});
  // Weights that are not the batch shares are written out.
  (*w)->add(PlanRecord{9, 0, 3.0, "scheduled", true, 0.0, {32, 48, 0}, {0.5, 0.5, 0.0}});
  ASSERT_TRUE((*w)->close().is_ok());
  EXPECT_EQ(read_file(dir.path() / "r" / "plans.csv"),
            "step,epoch,time_s,reason,changed,imbalance,worker,batch,weight\n"
            "0,0,0,initial,true,0,,96,\n"
            "0,0,0,initial,true,0,0,32,\n"
            "0,0,0,initial,true,0,1,48,\n"
            "0,0,0,initial,true,0,2,16,\n"
            "7,0,2,membership,true,0,,80,\n"
            "7,0,2,membership,true,0,2,0,\n"
            "9,0,3,scheduled,true,0,,,\n"
            "9,0,3,scheduled,true,0,0,32,0.5\n"
            "9,0,3,scheduled,true,0,1,48,0.5\n");
}

TEST(RunWriter, PlansAreFullUpTo64WorkersAndCompactAbove) {
  for (const std::size_t n : {kFullPlanRowsMaxWorkers, kFullPlanRowsMaxWorkers + 1}) {
    TempDir dir;
    auto w = RunWriter::open((dir.path() / "r").string(), "{}", /*timeline=*/false);
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    const PlanRecord r{0, 0, 0.0, "initial", true, 0.0, std::vector<BatchSize>(n, 8), std::vector<double>(n, 1.0)};
    (*w)->add(r);
    (*w)->add(r);
    ASSERT_TRUE((*w)->close().is_ok());
    const auto rows = lines(read_file(dir.path() / "r" / "plans.csv")).size() - 1;
    EXPECT_EQ(rows, n <= kFullPlanRowsMaxWorkers ? 2 * n : n + 2) << n << " workers";
  }
}

TEST(RunWriter, TimelineIsValidJsonWithoutFinish) {
  TempDir tmp;
  const auto dir = tmp.path() / "r";
  {
    auto w = RunWriter::open(dir.string(), "{}", /*timeline=*/true);
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    write_some(**w);
  }  // destroyed without finish(): a crash-like end
  const auto timeline = nlohmann::json::parse(read_file(dir / "timeline.json"));
  EXPECT_EQ(timeline["traceEvents"].size(), 203u);
  EXPECT_EQ(lines(read_file(dir / "iterations.csv")).size(), 201u);
  EXPECT_FALSE(std::filesystem::exists(dir / "summary.json"));
}

TEST(RunWriter, EmptyTimelineAndNoTimeline) {
  TempDir tmp;
  {
    auto w = RunWriter::open((tmp.path() / "a").string(), "{}", /*timeline=*/true);
    ASSERT_TRUE(w.is_ok());
  }
  EXPECT_EQ(nlohmann::json::parse(read_file(tmp.path() / "a" / "timeline.json"))["traceEvents"].size(), 0u);
  auto w = RunWriter::open((tmp.path() / "b").string(), "{}", /*timeline=*/false);
  ASSERT_TRUE(w.is_ok());
  (*w)->span(0, "compute", 0.0, 1.0);
  ASSERT_TRUE((*w)->finish(RunSummary{}).is_ok());
  EXPECT_FALSE(std::filesystem::exists(tmp.path() / "b" / "timeline.json"));
  EXPECT_TRUE(std::filesystem::exists(tmp.path() / "b" / "summary.json"));
}

TEST(RunWriter, RowsAreFlushedBeforeTheEnd) {
  TempDir tmp;
  auto w = RunWriter::open((tmp.path() / "f").string(), "{}", /*timeline=*/true);
  ASSERT_TRUE(w.is_ok());
  for (std::int64_t i = 0; i < 10; ++i) (*w)->add(IterationRecord{0, i, 0, 0.0, 0.1, 0.0, 0.0, 8, {}, {}, 3});
  (*w)->add(PlanRecord{10, 0, 1.0, "scheduled", true, 0.0, {8}, {1.0}});  // a plan flushes everything
  EXPECT_EQ(lines(read_file(tmp.path() / "f" / "iterations.csv")).size(), 11u);
  EXPECT_EQ(lines(read_file(tmp.path() / "f" / "plans.csv")).size(), 2u);
  EXPECT_EQ(lines(read_file(tmp.path() / "f" / "iterations.csv")).back(), "0,9,0,0,0.1,0,0,8,,,3");
}

TEST(RunWriter, SameRecordsGiveByteIdenticalFiles) {
  TempDir tmp;
  for (const char* name : {"a", "b"}) {
    auto w = RunWriter::open((tmp.path() / name).string(), "{}", /*timeline=*/true);
    ASSERT_TRUE(w.is_ok());
    write_some(**w);
    RunSummary s;
    s.total_time_s = 0.1 + 0.2;  // not representable exactly: printed in shortest round-trip form
    ASSERT_TRUE((*w)->finish(s).is_ok());
  }
  for (const char* file : {"iterations.csv", "plans.csv", "availability.csv", "evaluations.csv", "summary.json",
                           "timeline.json"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(read_file(tmp.path() / "a" / file), read_file(tmp.path() / "b" / file));
  }
  const auto summary = nlohmann::json::parse(read_file(tmp.path() / "a" / "summary.json"));
  EXPECT_EQ(summary["total_time_s"].get<double>(), 0.1 + 0.2);
}

TEST(RunWriter, OpenFailsWithAMessageNamingThePath) {
  TempDir tmp;
  tmp.write("file", "x");
  auto w = RunWriter::open((tmp.path() / "file" / "sub").string(), "{}", true);
  ASSERT_FALSE(w.is_ok());
  EXPECT_NE(w.status().message().find("file/sub"), std::string::npos) << w.status().message();
}

}  // namespace
}  // namespace omnilearn::run
