// The testbed's side of `omnilearn validate` (emulator/validation.h): what it reads off a testbed run folder, the
// simulator profile it writes, and the host-load meter.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "omnilearn/emulator/validation.h"
#include "omnilearn/scenarios/model_profile_file.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  TempDir() : path(fs::temp_directory_path() / ("omnilearn-validate-profile-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string read(const fs::path& p) {
  std::stringstream ss;
  ss << std::ifstream(p).rdbuf();
  return ss.str();
}

// Two workers at 0.5 and 0.25 of a core (scenario speeds 1e9 and 0.5e9), 30 steps. The last worker to reach each
// all-reduce waits 4 ms in it, except in the first 10 steps (start-up) and around the evaluation after step 19.
// With `shared`, worker 0's compute alternates like worker 1's (10/30 ms), perfectly correlated, and the manifest
// says that the launcher could not split the threads (as on cgroup v2) although throttle=compute was asked for.
fs::path write_run(const fs::path& dir, bool shared = false) {
  write(dir / "manifest.json",
        std::string(R"({"backend": "emulate", "cpu_shares": [0.5, 0.25], )") +
            (shared ? R"("throttle": "process", )" : R"("throttle": "compute", )") + R"(
            "scenario": {"cluster": {"workers": [{"speed_flops": 1e9}, {"speed_flops": 5e8}]},
                         "emulator": {"cpu_period_s": 0.02, "throttle": "compute"}}})");
  write(dir / "summary.json", R"({"iterations": 30})");
  std::string rows = "worker,step,epoch,start_s,compute_s,comm_s,wait_s,batch,loss,accuracy,staleness\n";
  for (int step = 0; step < 30; ++step) {
    const double exchange = step < 10 || step == 19 || step == 20 ? 1.0 : 0.004;
    const std::string compute0 = shared && step % 2 == 1 ? "0.030," : "0.010,";
    rows += "0," + std::to_string(step) + ",0,0," + compute0 + std::to_string(exchange) + ",0.010,40,,,\n";
    rows += "1," + std::to_string(step) + ",0,0," + (step % 2 == 0 ? "0.010," : "0.030,") + std::to_string(exchange) +
            ",0,24,,,\n";
  }
  write(dir / "iterations.csv", rows);
  write(dir / "evaluations.csv", "time_s,step,epoch,loss,accuracy\n1.5,19,0,0.6,0.8\n");
  return dir;
}

TEST(Validation, ReadsTheTestbedFacts) {
  TempDir tmp;
  auto facts = read_testbed(write_run(tmp.path / "run"));
  ASSERT_TRUE(facts.is_ok()) << facts.status().message();
  EXPECT_DOUBLE_EQ(facts->host_core_flops, 2e9);
  EXPECT_EQ(facts->cpu_shares, (std::vector<double>{0.5, 0.25}));
  EXPECT_DOUBLE_EQ(facts->quota_period_s, 0.02);
  EXPECT_FALSE(facts->quota_holds_comm);  // throttle=compute
  EXPECT_EQ(facts->iterations, 30);
  EXPECT_NEAR(facts->exchange_s, 0.004, 1e-9);  // start-up and the evaluation's steps left out
  // Worker 0 never varies; worker 1 alternates 10 and 30 ms over steps 10..29 but 19 and 20: 18 steps, CV 0.5145.
  EXPECT_NEAR(facts->compute_cv, (0.0 + 0.01 * std::sqrt(18.0 / 17.0) / 0.02) / 2.0, 1e-6);
  EXPECT_NEAR(facts->compute_shared, 0.0, 1e-9);  // worker 0 never varies: no correlation
  ASSERT_EQ(facts->compute_std_s.size(), 2u);
  EXPECT_NEAR(facts->compute_std_s[0], 0.0, 1e-12);
  EXPECT_NEAR(facts->compute_std_s[1], 0.01 * std::sqrt(18.0 / 17.0), 1e-9);
  auto together = read_testbed(write_run(tmp.path / "shared", /*shared=*/true));
  ASSERT_TRUE(together.is_ok());
  EXPECT_NEAR(together->compute_shared, 1.0, 1e-9);
  EXPECT_TRUE(together->quota_holds_comm);  // what the launcher did wins over what was asked
  EXPECT_NEAR(together->compute_cv, 0.01 * std::sqrt(18.0 / 17.0) / 0.02, 1e-6);
}

TEST(Validation, ComputeNoiseIsAveragedPerShare) {
  TestbedFacts facts;
  facts.cpu_shares = {0.5, 0.125, 0.5, 1.0};
  facts.compute_std_s = {0.004, 0.012, 0.006, 0.0};  // a worker that never varied adds no point
  SimProfileTerms terms;
  set_compute_noise(facts, terms);
  EXPECT_EQ(terms.noise_shares, (std::vector<double>{0.125, 0.5}));
  ASSERT_EQ(terms.noise_std_s.size(), 2u);
  EXPECT_DOUBLE_EQ(terms.noise_std_s[0], 0.012);
  EXPECT_DOUBLE_EQ(terms.noise_std_s[1], 0.005);
}

TEST(Validation, AnIncompleteRunFolderIsNamed) {
  TempDir tmp;
  const fs::path run = write_run(tmp.path / "run");
  fs::remove(run / "summary.json");
  auto facts = read_testbed(run);
  ASSERT_FALSE(facts.is_ok());
  EXPECT_NE(facts.status().message().find("not a complete testbed run folder"), std::string::npos);
  EXPECT_NE(facts.status().message().find(run.string()), std::string::npos);
}

TEST(Validation, WritesTheTestbedTermsIntoTheProfile) {
  TempDir tmp;
  auto facts = read_testbed(write_run(tmp.path / "run"));
  ASSERT_TRUE(facts.is_ok());
  write(tmp.path / "cal/profile.yaml",
        "# calibrated\nname: lenet-calibrated\nparameters: 61706\nflops_per_sample: 2.5e6\nflops_per_iteration: 0\n"
        "measured_fixed_s: 0.002\nmeasured_per_sample_s: 0.0002\n");
  write(tmp.path / "cal/fidelity.csv",
        "target_share,achieved_share,throughput_samples_s,relative_throughput,slowdown\n0.5,0.49,1000,0.5,2\n"
        "1,0.95,2000,1,1\n");
  const fs::path out = tmp.path / "sim-profile.yaml";
  SimProfileTerms terms;
  terms.allreduce_fixed_s = facts->exchange_s;
  terms.compute_jitter_cv = 0.25;
  terms.compute_jitter_shared = 0.4;
  terms.available_cores = 1.8;
  set_compute_noise(*facts, terms);  // worker 0 (share 0.5) never varies: only share 0.25 has noise
  auto written = write_sim_profile(tmp.path / "cal", *facts, terms, out);
  ASSERT_TRUE(written.is_ok()) << written.status().message();
  const std::string text = read(out);
  EXPECT_NE(text.find("host_core_flops: 2e+09"), std::string::npos) << text;
  EXPECT_NE(text.find("cpu_slowdown: {share: [0.5, 1], slowdown: [2.041, 1]}"), std::string::npos) << text;
  EXPECT_NE(text.find("quota_period_s: 0.02"), std::string::npos) << text;
  EXPECT_NE(text.find("quota_holds_comm: false"), std::string::npos) << text;
  EXPECT_NE(text.find("allreduce_fixed_s: 0.004"), std::string::npos) << text;
  EXPECT_NE(text.find("host_cpu_available: 1.8"), std::string::npos) << text;
  EXPECT_NE(text.find("compute_jitter_cv: 0.25"), std::string::npos) << text;
  EXPECT_NE(text.find("compute_jitter_shared: 0.4"), std::string::npos) << text;
  EXPECT_NE(text.find("compute_noise: {share: [0.25], std_s: [0.01029]}"), std::string::npos) << text;
  EXPECT_NE(text.find("name: lenet-calibrated\n"), std::string::npos) << text;
  EXPECT_NE(text.find("measured_per_sample_s: 0.0002\n"), std::string::npos) << text;
  EXPECT_FALSE(write_sim_profile(tmp.path / "none", *facts, SimProfileTerms{}, out).is_ok());
  // The file is the profile returned, and the simulator's parser reads it back.
  auto back = scenarios::load_model_profile(out.string());
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->host_core_flops, written->host_core_flops);
  EXPECT_EQ(back->slowdown_factors, (std::vector<double>{2.041, 1.0}));
  EXPECT_EQ(back->noise_std_s, (std::vector<double>{0.01029}));
  EXPECT_EQ(back->host_cpu_available, 1.8);
  EXPECT_FALSE(back->quota_holds_comm);
}

// The continuous reading: the loop's step time at the share over the law at the share batch (here 8.4 ms at 32).
TEST(Validation, TheContinuousSlowdownComesFromTheLoopsThroughput) {
  TempDir tmp;
  write(tmp.path / "cal/profile.yaml",
        "name: c\nparameters: 10\nflops_per_sample: 5\nmeasured_fixed_s: 0.002\nmeasured_per_sample_s: 0.0002\n");
  write(tmp.path / "cal/fidelity.csv",
        "target_share,achieved_share,throughput_samples_s,relative_throughput,slowdown\n0.5,0.49,1000,0.26,3.8\n"
        "1,0.95,2000,1,1\n");
  TestbedFacts facts;
  facts.host_core_flops = 1e9;
  facts.cpu_shares = {1.0};
  SimProfileTerms terms;
  terms.continuous_slowdown = true;
  auto p = sim_profile(tmp.path / "cal" / "profile.yaml", facts, terms);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->slowdown_shares, (std::vector<double>{0.5, 1.0}));
  EXPECT_EQ(p->slowdown_factors, (std::vector<double>{3.81, 1.905}));  // 32 / 1000 / 0.0084, 32 / 2000 / 0.0084
  EXPECT_FALSE(p->host_cpu_available.has_value());
  EXPECT_EQ(p->compute_jitter_shared, 0.0);  // no jitter: nothing shared
}

TEST(Validation, ABrokenTableIsNamedWithItsLine) {
  TempDir tmp;
  const fs::path run = write_run(tmp.path / "run");
  write(run / "iterations.csv", "worker,step,epoch,start_s,compute_s,comm_s,wait_s,batch\n0,12,0,0,fast,0,0,8\n");
  auto facts = read_testbed(run);
  ASSERT_FALSE(facts.is_ok());
  EXPECT_NE(facts.status().message().find((run / "iterations.csv").string() + ":2: compute_s"), std::string::npos)
      << facts.status().message();
  write(run / "iterations.csv", "worker,step,compute_s\n");
  facts = read_testbed(run);
  ASSERT_FALSE(facts.is_ok());
  EXPECT_NE(facts.status().message().find("iterations.csv: no column 'comm_s'"), std::string::npos) << facts.status().message();
  write(tmp.path / "cal/profile.yaml", "name: c\nparameters: 10\nflops_per_sample: 5\n");
  auto p = sim_profile(tmp.path / "cal", TestbedFacts{}, SimProfileTerms{});
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("needs measured_fixed_s"), std::string::npos) << p.status().message();
}

// Without a manifest naming the run's cgroup there is nothing to measure.
TEST(Validation, TheHostLoadNeedsTheRunsCgroup) {
  TempDir tmp;
  HostLoadMeter meter(tmp.path / "run");
  meter.sample();
  EXPECT_FALSE(meter.load().has_value());
  write(tmp.path / "run/manifest.json", R"({"cgroup_folder": "omnilearn-no-such-group"})");
  meter.sample();
  meter.sample();
  EXPECT_FALSE(meter.load().has_value());
}

}  // namespace
}  // namespace omnilearn::emulator
