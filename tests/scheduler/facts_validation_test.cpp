// Bad facts and options get errors naming the job (or host) and the field; the registry refuses unknown names.
#include <gtest/gtest.h>

#include "omnilearn/scheduler/round_facts.h"
#include "omnilearn/scheduler/scheduling_policies.h"
#include "scheduler_test_util.h"

namespace omnilearn::scheduler {
namespace {

using testing::job;

RoundFacts two_kinds() {
  RoundFacts f;
  f.now_s = 100.0;
  f.cluster.hosts = {{"v", "V100", 2}, {"k", "K80", 4}};
  f.jobs = {job("ok", 0.0, 1, 1, {{"V100", 2.0}, {"K80", 1.0}})};
  return f;
}

// The error validate_round_facts gives after `edit`; every policy's decide() gives the same.
std::string error_after(void (*edit)(RoundFacts&)) {
  RoundFacts f = two_kinds();
  edit(f);
  const Status s = validate_round_facts(f);
  EXPECT_FALSE(s.is_ok());
  for (const std::string& name : make_default_scheduler_registry().names()) {
    auto a = testing::make(name)->decide(f);
    EXPECT_FALSE(a.is_ok()) << name;
    if (!a.is_ok()) {
      EXPECT_EQ(a.status().message(), s.message()) << name;
    }
  }
  return s.message();
}

TEST(RoundFactsValidation, ValidFactsPass) { EXPECT_TRUE(validate_round_facts(two_kinds()).is_ok()); }

TEST(RoundFactsValidation, AJobAskingMoreThanTheClusterIsNamed) {
  const std::string m = error_after([](RoundFacts& f) { f.jobs.push_back(job("big", 0.0, 7, 7, {{"K80", 1.0}})); });
  EXPECT_NE(m.find("job 'big'"), std::string::npos) << m;
  EXPECT_NE(m.find("max_workers 7"), std::string::npos) << m;
  EXPECT_NE(m.find("6 device slots"), std::string::npos) << m;
}

TEST(RoundFactsValidation, AJobAskingMoreThanTheKindsItRunsOnIsNamed) {
  const std::string m = error_after([](RoundFacts& f) { f.jobs.push_back(job("v3", 0.0, 3, 3, {{"V100", 1.0}})); });
  EXPECT_NE(m.find("job 'v3': min_workers 3 is more than the 2 device slots"), std::string::npos) << m;
}

TEST(RoundFactsValidation, NegativeThroughputIsNamed) {
  const std::string m = error_after([](RoundFacts& f) { f.jobs[0].throughput_per_worker["K80"] = -1.0; });
  EXPECT_NE(m.find("job 'ok': throughput_per_worker['K80'] must be a finite number >= 0, got -1"), std::string::npos)
      << m;
}

TEST(RoundFactsValidation, UnknownKindIsNamed) {
  const std::string m = error_after([](RoundFacts& f) { f.jobs[0].throughput_per_worker["A100"] = 3.0; });
  EXPECT_NE(m.find("job 'ok': throughput_per_worker names kind 'A100', which no host of the cluster has"),
            std::string::npos)
      << m;
  const std::string s = error_after([](RoundFacts& f) { f.jobs[0].service_by_kind["T4"] = 3.0; });
  EXPECT_NE(s.find("job 'ok': service_by_kind names kind 'T4'"), std::string::npos) << s;
}

TEST(RoundFactsValidation, OtherFieldsAreNamed) {
  EXPECT_NE(error_after([](RoundFacts& f) {
              f.jobs[0].throughput_per_worker = {{"K80", 0.0}};
            }).find("job 'ok': throughput_per_worker is 0 on every kind"),
            std::string::npos);
  EXPECT_NE(error_after([](RoundFacts& f) { f.jobs.push_back(f.jobs[0]); }).find("job 'ok': id given twice"),
            std::string::npos);
  EXPECT_NE(error_after([](RoundFacts& f) { f.jobs[0].arrival_s = 101.0; }).find("job 'ok': arrival_s 101"),
            std::string::npos);
  EXPECT_NE(error_after([](RoundFacts& f) { f.jobs[0].max_workers = 0; }).find("job 'ok': max_workers 0 is less"),
            std::string::npos);
  EXPECT_NE(error_after([](RoundFacts& f) { f.jobs[0].remaining_samples = -5.0; }).find("job 'ok': remaining_samples"),
            std::string::npos);
  EXPECT_NE(error_after([](RoundFacts& f) {
              f.jobs[0].current = {{0, 0}, {0, 1}};
            }).find("job 'ok': current holds 2 slots, outside [min_workers, max_workers] = [1, 1]"),
            std::string::npos);
  EXPECT_NE(error_after([](RoundFacts& f) {
              f.jobs[0].current = {{1, 4}};
            }).find("job 'ok': current names slot 4 of host 1, which the cluster does not have"),
            std::string::npos);
  EXPECT_NE(error_after([](RoundFacts& f) {
              f.jobs[0].current = {{1, 0}};
              f.jobs.push_back(job("other", 0.0, 1, 1, {{"K80", 1.0}}));
              f.jobs[1].current = {{1, 0}};
            }).find("job 'other': current names slot 0 of host 1, which another job"),
            std::string::npos);
  EXPECT_NE(error_after([](RoundFacts& f) {
              f.cluster.hosts[1].slots = 0;
            }).find("cluster: host 1 ('k'): slots must be >= 1, got 0"),
            std::string::npos);
  EXPECT_NE(error_after([](RoundFacts& f) { f.cluster.hosts[1].name = "v"; }).find("host 1 ('v'): name given twice"),
            std::string::npos);
}

TEST(SchedulerOptionsValidation, OutOfRangeOptionsAreNamed) {
  SchedulerOptions o;
  o.checkpoint_s = -1.0;
  auto p = make_fifo_policy(o);
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("checkpoint_s must be a finite number >= 0, got -1"), std::string::npos);
  o = {};
  o.round_s = 0.0;
  EXPECT_FALSE(make_gavel_policy(o).is_ok());
  o = {};
  o.las_thresholds = {100.0, 50.0};
  auto l = make_las_policy(o);
  ASSERT_FALSE(l.is_ok());
  EXPECT_NE(l.status().message().find("las_thresholds[1] must be finite, > 0 and greater than the one before, got 50"),
            std::string::npos);
}

TEST(SchedulerRegistry, UnknownNameListsTheKnownOnes) {
  const SchedulerRegistry r = make_default_scheduler_registry();
  EXPECT_EQ(r.names(), (std::vector<std::string>{"balanced-mix", "fifo", "fifo-blind", "gavel", "gavel-packed",
                                                 "goodput", "las", "las-blind"}));
  auto p = r.make("tiresias", {});
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(p.status().message(),
            "unknown scheduler 'tiresias' (expected one of: balanced-mix, fifo, fifo-blind, gavel, gavel-packed, "
            "goodput, las, las-blind)");
  for (const std::string& name : r.names()) EXPECT_EQ(testing::make(name)->name(), name);
}

TEST(EffectiveThroughput, BalancedJobsSumUniformJobsWaitForTheSlowest) {
  const std::vector<double> per_worker = {1.0, 4.0};  // K80, V100
  EXPECT_DOUBLE_EQ(effective_throughput(per_worker, std::vector<int>{2, 1}, /*balances_batches=*/true), 6.0);
  EXPECT_DOUBLE_EQ(effective_throughput(per_worker, std::vector<int>{2, 1}, /*balances_batches=*/false), 3.0);
  EXPECT_DOUBLE_EQ(effective_throughput(per_worker, std::vector<int>{0, 3}, /*balances_batches=*/false), 12.0);
  EXPECT_DOUBLE_EQ(effective_throughput(std::vector<double>{0.0, 4.0}, std::vector<int>{1, 1}, true), 0.0);
  EXPECT_DOUBLE_EQ(effective_throughput(per_worker, std::vector<int>{0, 0}, true), 0.0);
  RoundFacts f = two_kinds();
  f.jobs[0].balances_batches = true;
  EXPECT_DOUBLE_EQ(effective_throughput(f.jobs[0], f.cluster, {{0, 0}, {1, 0}, {1, 3}}), 4.0);
}

}  // namespace
}  // namespace omnilearn::scheduler
