// The analytic server link (FairShareLink, ServerLinkSpec) against closed forms, against SimGrid's own flows on the
// same star platform (concurrent pushes and pulls of different sizes, bounds and start times, some held at their
// bound), and whole ASP runs on both paths. Each simulation runs in a forked child (one SimGrid engine per process).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <map>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <string>
#include <vector>

#include "platform_builder.h"
#include "server_link_model.h"
#include "sim_test_support.h"

namespace omnilearn::sim {
namespace {

using scenarios::ClusterSpec;

// One flow of the comparison: worker `worker` pushes (to the server) or pulls (from it) `bytes`, from `start_s`.
struct TestFlow {
  WorkerId worker;
  bool push;
  double bytes;
  Seconds start_s;
};

// Runs `link` to its end; returns each flow's completion time by id.
std::map<std::int64_t, Seconds> run_link(FairShareLink& link) {
  std::map<std::int64_t, Seconds> done;
  std::vector<std::int64_t> finished;
  for (Seconds t = link.next_event_s(); t < std::numeric_limits<double>::infinity(); t = link.next_event_s()) {
    finished.clear();
    link.advance(t, finished);
    for (std::int64_t id : finished) done[id] = t;
  }
  return done;
}

// The flows' completion times by the analytic model: pushes and pulls on their two links. Empty if the cluster does
// not qualify.
std::vector<Seconds> analytic_times(const ClusterSpec& cluster, const std::vector<TestFlow>& flows) {
  const auto spec = server_link_spec(cluster, 4194304.0);
  if (!spec) return {};
  auto push = FairShareLink::create(spec->server_Bps, spec->classes);
  auto pull = FairShareLink::create(spec->server_Bps, spec->classes);
  if (!push || !pull) return {};
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const TestFlow& f = flows[i];
    const Seconds latency = f.push ? spec->push_latency_s[f.worker] : spec->pull_latency_s[f.worker];
    (f.push ? *push : *pull)
        .add(static_cast<std::int64_t>(i), spec->worker_class[f.worker], f.bytes, f.start_s + latency);
  }
  auto a = run_link(*push);
  const auto b = run_link(*pull);
  a.insert(b.begin(), b.end());
  std::vector<Seconds> out(flows.size(), -1.0);
  for (const auto& [id, t] : a) out[static_cast<std::size_t>(id)] = t;
  return out;
}

// The flows' completion times as SimGrid flows on the cluster's platform, in a child process's engine (SimOptions'
// default network configuration). Empty when the child failed.
std::vector<Seconds> simgrid_times(const ClusterSpec& cluster, const std::vector<TestFlow>& flows) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    testing::DefaultEngineArgs defaults;
    simgrid::s4u::Engine engine(&defaults.argc, defaults.argv.data());
    auto platform = build_platform(cluster, {});
    if (!platform) _exit(2);
    std::vector<Seconds> times(flows.size(), -1.0);
    for (std::size_t i = 0; i < flows.size(); ++i) {
      simgrid::s4u::Host* worker = platform->workers[flows[i].worker];
      simgrid::s4u::Host* ps = platform->parameter_server;
      simgrid::s4u::Actor::create("flow-" + std::to_string(i), flows[i].push ? worker : ps, [&, i, worker, ps] {
        simgrid::s4u::this_actor::sleep_until(flows[i].start_s);
        const TestFlow& f = flows[i];
        simgrid::s4u::Comm::sendto(f.push ? worker : ps, f.push ? ps : worker, static_cast<std::uint64_t>(f.bytes));
        times[i] = simgrid::s4u::Engine::get_clock();
      });
    }
    engine.run();
    const auto size = static_cast<ssize_t>(times.size() * sizeof(Seconds));
    if (write(fds[1], times.data(), times.size() * sizeof(Seconds)) != size) _exit(3);
    _exit(0);
  }
  close(fds[1]);
  std::vector<Seconds> times(flows.size(), -1.0);
  const auto size = static_cast<ssize_t>(times.size() * sizeof(Seconds));
  if (read(fds[0], times.data(), times.size() * sizeof(Seconds)) != size) times.clear();
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return times;
}

scenarios::NodeSpec node(double bandwidth_Bps, Seconds latency_s) {
  scenarios::NodeSpec n;
  n.speed_flops = 1e10;
  n.bandwidth_Bps = bandwidth_Bps;
  n.latency_s = latency_s;
  return n;
}

// Three kinds of worker (bandwidth, latency), a 100 MB/s server link and a backbone that never saturates.
ClusterSpec three_kind_star() {
  ClusterSpec c;
  const scenarios::NodeSpec kinds[] = {node(12.5e6, 5e-3), node(50e6, 1e-3), node(80e6, 20e-3)};
  for (int k = 0; k < 6; ++k) c.workers.push_back(kinds[k % 3]);
  c.parameter_server = node(100e6, 1e-3);
  c.backbone_bandwidth_Bps = 1e12;
  c.backbone_latency_s = 1e-3;
  return c;
}

// The analytic link's completion times equal SimGrid's flows' on the same star, within 1e-9 (relative).
void expect_times_of_simgrid(const ClusterSpec& c, const std::vector<TestFlow>& flows) {
  const std::vector<Seconds> expected = simgrid_times(c, flows);
  const std::vector<Seconds> analytic = analytic_times(c, flows);
  ASSERT_EQ(expected.size(), flows.size());
  ASSERT_EQ(analytic.size(), flows.size());
  for (std::size_t i = 0; i < flows.size(); ++i) {
    EXPECT_NEAR(analytic[i], expected[i], 1e-9 * expected[i]) << "flow " << i;
  }
}

TEST(ServerLink, EqualPenaltiesShareEquallyAndFinishInOrder) {
  auto link = FairShareLink::create(10.0, {{100.0, 1.0}});
  ASSERT_TRUE(link.is_ok());
  link->add(0, 0, 10.0, 0.0);
  link->add(1, 0, 30.0, 0.0);
  const auto t = run_link(*link);
  EXPECT_DOUBLE_EQ(t.at(0), 2.0);  // 5 B/s each until 10 B
  EXPECT_DOUBLE_EQ(t.at(1), 4.0);  // then 20 B alone at 10 B/s
}

TEST(ServerLink, SharesAreInverseToThePenalty) {
  auto link = FairShareLink::create(12.0, {{100.0, 1.0}, {100.0, 3.0}});
  ASSERT_TRUE(link.is_ok());
  link->add(0, 0, 9.0, 0.0);  // 9 B/s
  link->add(1, 1, 6.0, 0.0);  // 3 B/s, then 12 B/s once alone
  const auto t = run_link(*link);
  EXPECT_DOUBLE_EQ(t.at(0), 1.0);
  EXPECT_DOUBLE_EQ(t.at(1), 1.25);
}

TEST(ServerLink, ACapBelowTheFairShareBindsAndTheOthersTakeTheRest) {
  auto link = FairShareLink::create(10.0, {{2.0, 1.0}, {100.0, 1.0}});
  ASSERT_TRUE(link.is_ok());
  link->add(0, 0, 4.0, 0.0);   // held at 2 B/s throughout: done at 2 s
  link->add(1, 1, 24.0, 0.0);  // the other 8 B/s
  link->add(2, 1, 8.0, 0.5);   // from 0.5 s flows 1 and 2 share 8 B/s, from 2 s all 10 B/s
  const auto t = run_link(*link);
  EXPECT_DOUBLE_EQ(t.at(0), 2.0);
  EXPECT_DOUBLE_EQ(t.at(2), 2.4);  // 6 B by 2 s, the last 2 B at 5 B/s
  EXPECT_DOUBLE_EQ(t.at(1), 3.6);  // 4 + 6 + 2 B by 2.4 s, the last 12 B alone at 10 B/s
}

TEST(ServerLink, RejectsABadLink) {
  EXPECT_FALSE(FairShareLink::create(0.0, {{1.0, 1.0}}).is_ok());
  EXPECT_FALSE(FairShareLink::create(1.0, {}).is_ok());
  EXPECT_FALSE(FairShareLink::create(1.0, {{1.0, 0.0}}).is_ok());
}

TEST(ServerLink, OnlyAStarWhoseBackboneCannotSaturateQualifies) {
  ClusterSpec c = three_kind_star();
  ASSERT_TRUE(server_link_spec(c, 4194304.0).has_value());
  c.backbone_bandwidth_Bps = 150e6;  // pushes and pulls together may pass it (2 x 100 MB/s)
  EXPECT_FALSE(server_link_spec(c, 4194304.0).has_value());
  c.backbone_bandwidth_Bps = 1e12;
  c.topology = scenarios::Topology::kFatTree;
  EXPECT_FALSE(server_link_spec(c, 4194304.0).has_value());
}

TEST(ServerLink, MatchesSimGridFlowsOnTheSameStar) {
  const ClusterSpec c = three_kind_star();
  // Pushes and pulls of different sizes from different times, up to six at once on each direction: some workers
  // are held by their own link (12.5 MB/s, TCP's window on the 20 ms one), the rest share what is left.
  const std::vector<TestFlow> flows = {
      {0, true, 40e6, 0.0},  {1, true, 25e6, 0.0},  {2, true, 60e6, 0.1},   {3, true, 10e6, 0.25},
      {4, true, 70e6, 0.3},  {5, true, 5e6, 1.0},   {0, false, 30e6, 0.05}, {1, false, 45e6, 0.2},
      {2, false, 20e6, 0.7}, {3, false, 80e6, 0.8}, {5, false, 1e6, 2.0},   {4, false, 15e6, 0.4},
  };
  expect_times_of_simgrid(c, flows);
}

TEST(ServerLink, MatchesSimGridWhenEveryFlowIsHeldByItsCap) {
  ClusterSpec c = three_kind_star();
  c.parameter_server.bandwidth_Bps = 1e9;  // more than all the workers' links together
  const std::vector<TestFlow> flows = {
      {0, true, 4e6, 0.0}, {1, true, 9e6, 0.01}, {2, true, 3e6, 0.0}, {3, false, 7e6, 0.0}, {4, false, 2e6, 0.03}};
  expect_times_of_simgrid(c, flows);
}

// Forty workers' flows at random times (some starting together), one each (as in ASP, a worker's own link carries
// one flow at a time), on six kinds of worker link: several bounds bind at once, one is the server's own bandwidth.
TEST(ServerLink, MatchesSimGridOnRandomFlows) {
  ClusterSpec c = three_kind_star();
  const scenarios::NodeSpec kinds[] = {node(5e6, 1e-3),   node(12.5e6, 5e-3), node(20e6, 2e-3),
                                       node(50e6, 10e-3), node(80e6, 20e-3),  node(200e6, 0.5e-3)};
  c.workers.clear();
  for (std::size_t k = 0; k < 40; ++k) c.workers.push_back(kinds[k % 6]);
  std::uint64_t state = 12345;  // a fixed linear congruential sequence
  auto next = [&state](std::uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % n;
  };
  std::vector<TestFlow> flows;
  for (int i = 0; i < 40; ++i) {
    flows.push_back({static_cast<WorkerId>(i), next(2) == 0, 1e6 * static_cast<double>(1 + next(50)),
                     0.05 * static_cast<double>(next(40))});
  }
  expect_times_of_simgrid(c, flows);
}

// A small ASP scenario whose server link qualifies: unequal workers, one held by its own link, one far away.
scenarios::Scenario small_asp() {
  auto s = testing::four_worker_scenario({2, 4, 6, 16}, "omnilearn");
  s.mode = controller::TrainingMode::kAsp;
  s.cluster.workers[1].bandwidth_Bps = 0.3e9;
  s.cluster.workers[2].latency_s = 2e-3;
  s.cluster.parameter_server.bandwidth_Bps = 1.25e9;
  s.cluster.backbone_bandwidth_Bps = 1e12;
  s.workload.dataset_samples = 128 * 20;
  return s;
}

// Runs `s` on both paths and expects the same updates, staleness and times (to 1e-9).
void expect_same_run_on_both_paths(const scenarios::Scenario& s) {
  SimOptions analytic;
  analytic.asp_flow_max_workers = 0;
  const std::string flow_dir = testing::test_dir("flows"), analytic_dir = testing::test_dir("analytic");
  ASSERT_EQ(testing::run_in_child(s, flow_dir), "");  // 4 workers: flows by default
  ASSERT_EQ(testing::run_in_child(s, analytic_dir, analytic), "");
  EXPECT_NE(testing::read_text(analytic_dir + "/manifest.json").find("asp-server-link-analytic"), std::string::npos);
  EXPECT_NE(testing::read_text(flow_dir + "/manifest.json").find("asp-push-pull"), std::string::npos);
  const auto a = testing::read_csv(flow_dir + "/iterations.csv");
  const auto b = testing::read_csv(analytic_dir + "/iterations.csv");
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), 40u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].at("worker"), b[i].at("worker")) << "row " << i;
    EXPECT_EQ(a[i].at("step"), b[i].at("step")) << "row " << i;
    EXPECT_EQ(a[i].at("staleness"), b[i].at("staleness")) << "row " << i;
    EXPECT_EQ(a[i].at("batch"), b[i].at("batch")) << "row " << i;
    const double ca = std::stod(a[i].at("comm_s")), cb = std::stod(b[i].at("comm_s"));
    EXPECT_NEAR(ca, cb, 1e-9 * ca) << "row " << i;
  }
  const double total = testing::summary_number(flow_dir, "total_time_s");
  EXPECT_NEAR(testing::summary_number(analytic_dir, "total_time_s"), total, 1e-9 * total);
}

TEST(ServerLink, AnAspRunGivesTheSameUpdatesOnBothPaths) { expect_same_run_on_both_paths(small_asp()); }

// Held replies (SSP's bound, the epoch barrier of pull: per-epoch, whose replies between barriers are headers).
TEST(ServerLink, HeldRepliesGiveTheSameUpdatesOnBothPaths) {
  auto s = small_asp();
  s.workload.asp.rule = scenarios::AspRule::kSsp;
  s.workload.asp.staleness_bound = 1;
  s.workload.asp.pull = scenarios::AspPull::kPerEpoch;
  s.workload.epochs = 3;
  expect_same_run_on_both_paths(s);
}

// SimGrid settings the model does not follow (cross-traffic here), a backbone that could saturate, or no more workers
// than asp_flow_max_workers: the pushes and pulls stay SimGrid flows.
TEST(ServerLink, OtherNetworksKeepTheFlows) {
  SimOptions cross;
  cross.asp_flow_max_workers = 0;
  cross.simgrid_args.push_back("--cfg=network/crosstraffic:1");
  const std::string cross_dir = testing::test_dir("crosstraffic");
  ASSERT_EQ(testing::run_in_child(small_asp(), cross_dir, cross), "");
  EXPECT_NE(testing::read_text(cross_dir + "/manifest.json").find("asp-push-pull"), std::string::npos);
  auto narrow = small_asp();
  narrow.cluster.backbone_bandwidth_Bps = 2e9;  // under 2 x the server's 1.25 GB/s
  SimOptions analytic;
  analytic.asp_flow_max_workers = 0;
  const std::string narrow_dir = testing::test_dir("narrow");
  ASSERT_EQ(testing::run_in_child(narrow, narrow_dir, analytic), "");
  EXPECT_NE(testing::read_text(narrow_dir + "/manifest.json").find("asp-push-pull"), std::string::npos);
}

// A worker that goes down loses the iteration it computes but not a push or pull under way; one that slows down
// pushes later. Both paths agree.
TEST(ServerLink, AnAspRunWithChurnGivesTheSameUpdatesOnBothPaths) {
  auto s = small_asp();
  auto phase = [](double at, std::vector<double> fractions) {
    scenarios::AvailabilityPhase p;
    p.at = at;
    p.fractions = std::move(fractions);
    return p;
  };
  s.availability.kind = scenarios::AvailabilitySpec::Kind::kSchedule;
  s.availability.unit = scenarios::ScheduleUnit::kSeconds;
  s.availability.phases = {phase(0, {1, 1, 1, 1}), phase(2, {1, 1, 1, 0}), phase(3.5, {1, 0.5, 1, 0}),
                           phase(5, {1, 0.5, 1, 1})};
  expect_same_run_on_both_paths(s);
}

}  // namespace
}  // namespace omnilearn::sim
