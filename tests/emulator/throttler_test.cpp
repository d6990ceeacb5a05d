#include <gtest/gtest.h>

#include "omnilearn/emulator/cgroup_throttler.h"
#include "omnilearn/emulator/fake_throttler.h"

namespace omnilearn::emulator {
namespace {

TEST(CpuQuota, TenMillisecondPeriodAndOneMillisecondFloor) {
  EXPECT_EQ(cpu_quota_for(0.5, 0.010).quota_us, 5000);
  EXPECT_EQ(cpu_quota_for(0.5, 0.010).period_us, 10000);
  EXPECT_EQ(cpu_quota_for(1.5, 0.010).quota_us, 15000);  // more than one core
  // 0.05 cores: 0.5 ms per 10 ms is under the kernel's minimum, so the period grows to 20 ms.
  const CpuQuota small = cpu_quota_for(0.05, 0.010);
  EXPECT_EQ(small.quota_us, 1000);
  EXPECT_EQ(small.period_us, 20000);
  // Down: the floor, 1 ms per period.
  EXPECT_EQ(cpu_quota_for(0.0, 0.010).quota_us, 1000);
  EXPECT_EQ(cpu_quota_for(0.0, 0.010).period_us, 10000);
  // Tiny shares never exceed the 1 s maximum period.
  EXPECT_EQ(cpu_quota_for(1e-6, 0.010).period_us, 1000000);
}

TEST(FakeThrottler, RecordsAndFails) {
  FakeThrottler t(3);
  EXPECT_EQ(t.fractions().size(), 3u);
  ASSERT_TRUE(t.attach(1, 1234).is_ok());
  ASSERT_TRUE(t.apply(2, 0.25).is_ok());
  EXPECT_EQ(t.fractions()[2], 0.25);
  EXPECT_FALSE(t.apply(3, 0.5).is_ok());
  EXPECT_FALSE(t.apply(0, 1.5).is_ok());
  t.fail_with(Status::permission_denied("no"));
  EXPECT_EQ(t.apply(0, 0.5).code(), StatusCode::kPermissionDenied);
  ASSERT_EQ(t.calls().size(), 1u);
  EXPECT_TRUE(t.remove().is_ok());
  EXPECT_TRUE(t.removed());
  EXPECT_EQ(t.attached(), std::vector<pid_t>{1234});
}

TEST(CgroupThrottler, RejectsBadOptionsBeforeTouchingTheSystem) {
  EXPECT_FALSE(make_cgroup_throttler({"x", {}, 0.01, ""}).is_ok());
  EXPECT_FALSE(make_cgroup_throttler({"x", {0.5, 0.0}, 0.01, ""}).is_ok());
}

}  // namespace
}  // namespace omnilearn::emulator
