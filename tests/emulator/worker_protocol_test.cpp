#include "omnilearn/emulator/worker_protocol.h"

#include <gtest/gtest.h>

namespace omnilearn::emulator {
namespace {

template <typename T>
T round_trip(const T& value) {
  const std::string line = encode(WorkerMessage(value));
  EXPECT_EQ(line.back(), '\n');
  auto decoded = decode(std::string_view(line).substr(0, line.size() - 1));
  EXPECT_TRUE(decoded.is_ok()) << decoded.status().message();
  return std::get<T>(*decoded);
}

TEST(WorkerProtocol, IterationRoundTrip) {
  run::IterationRecord r;
  r.worker = 3, r.step = 17, r.epoch = 2, r.start_s = 1.0 / 3.0, r.compute_s = 0.0123, r.comm_s = 1e-5, r.wait_s = 0.5;
  r.batch = 48, r.loss = 0.75;
  const auto back = round_trip(r);
  EXPECT_EQ(back.worker, 3u);
  EXPECT_EQ(back.step, 17);
  EXPECT_DOUBLE_EQ(back.start_s, 1.0 / 3.0);
  EXPECT_EQ(back.batch, 48);
  EXPECT_EQ(back.loss, 0.75);
  EXPECT_FALSE(back.accuracy.has_value());
  EXPECT_FALSE(back.staleness.has_value());
}

TEST(WorkerProtocol, PlanEvaluationExtraDoneAvailability) {
  run::PlanRecord p;
  p.step = 10, p.epoch = 1, p.time_s = 2.5, p.reason = "scheduled", p.changed = true, p.imbalance = 0.3;
  p.batch = {40, 24}, p.weight = {0.625, 0.375};
  const auto pb = round_trip(p);
  EXPECT_EQ(pb.batch, p.batch);
  EXPECT_EQ(pb.weight, p.weight);
  EXPECT_TRUE(pb.changed);
  EXPECT_EQ(pb.reason, "scheduled");
  const auto e = round_trip(run::EvaluationRecord{3.0, 20, 1, 0.4, 0.86});
  EXPECT_EQ(e.accuracy, 0.86);
  EXPECT_EQ(round_trip(ExtraRecord{"controller_decision_s", 0.002}).value, 0.002);
  EXPECT_EQ(round_trip(DoneRecord{run::StopReason::kTarget}).reason, run::StopReason::kTarget);
  EXPECT_EQ(encode(DoneRecord{run::StopReason::kSamples}), "D\tsamples\n");
  EXPECT_EQ(round_trip(AvailabilityNotice{1, 4.0, 0.25}).fraction, 0.25);
}

TEST(WorkerProtocol, MalformedLinesAreErrors) {
  EXPECT_FALSE(decode("").is_ok());
  EXPECT_FALSE(decode("Z\t1").is_ok());
  EXPECT_FALSE(decode("I\t1\t2").is_ok());
  EXPECT_FALSE(decode("E\tx\t1\t0\t0.1\t0.2").is_ok());
  EXPECT_FALSE(decode("D\tepochs\textra").is_ok());
  EXPECT_FALSE(decode("D\tbudget").is_ok());  // not a stop reason's name
}

}  // namespace
}  // namespace omnilearn::emulator
