// set_change: what a job's change between rounds is and what it costs; restore_at_first_start charges the restore
// at a job's first start as Pollux's simulator does.
#include <gtest/gtest.h>

#include "scheduler_test_util.h"

namespace omnilearn::scheduler {
namespace {

using testing::job;

TEST(SetChange, AFirstStartCostsTheRestoreOnlyWithRestoreAtFirstStart) {
  const JobFacts fresh = job("a", 0.0, 2, 2, {{"K80", 1.0}});
  JobFacts resumed = fresh;
  resumed.service_by_kind["K80"] = 120.0;
  struct Case {
    bool at_first_start;
    const JobFacts* job;
    Seconds restart_s;
  };
  const Case cases[] = {
      {/*at_first_start=*/false, &fresh, 0.0},
      {/*at_first_start=*/true, &fresh, 30.0},
      {/*at_first_start=*/false, &resumed, 30.0},
      {/*at_first_start=*/true, &resumed, 30.0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.at_first_start ? "on, " : "off, ") + (c.job == &fresh ? "first start" : "resume"));
    SchedulerOptions o;
    o.restore_s = 30.0;
    o.restore_at_first_start = c.at_first_start;
    JobAllocation a;
    a.slots = testing::slots_of(0, 2);
    set_change(*c.job, o, a);
    EXPECT_EQ(a.change, JobChange::kStarted);
    EXPECT_EQ(a.restart_s, c.restart_s);
    // A job that stays waiting costs nothing either way.
    JobAllocation idle;
    set_change(*c.job, o, idle);
    EXPECT_EQ(idle.change, JobChange::kWaiting);
    EXPECT_EQ(idle.restart_s, 0.0);
  }
}

TEST(SetChange, APolicysFirstStartCarriesTheRestoreWithRestoreAtFirstStart) {
  RoundFacts f;
  f.cluster.hosts = {{"a", "K80", 4}};
  f.jobs = {job("a", 0.0, 2, 2, {{"K80", 1.0}})};
  SchedulerOptions o;
  o.restore_s = 30.0;
  Allocation a = testing::decide_ok(*testing::make("las", o), f);
  EXPECT_EQ(a.jobs[0].change, JobChange::kStarted);
  EXPECT_EQ(a.jobs[0].restart_s, 0.0);
  o.restore_at_first_start = true;
  a = testing::decide_ok(*testing::make("las", o), f);
  EXPECT_EQ(a.jobs[0].change, JobChange::kStarted);
  EXPECT_EQ(a.jobs[0].restart_s, 30.0);
}

}  // namespace
}  // namespace omnilearn::scheduler
