// `omnilearn jobs emulate` end to end: two one-worker LeNet jobs on two half-core devices, the second arriving
// while the first runs (its start-up paused the first). Checks the rounds' decisions, that both jobs trained their
// samples, that the first job's emulated JCT matches its own measured step times (start-up off the clock), and that
// no cgroup or process is left. Needs root (cgroups) and Fashion-MNIST; skips with the reason otherwise.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cgroup_skip.h"
#include "omnilearn/base/subprocess.h"
#include "omnilearn/emulator/cgroup_cleanup.h"
#include "omnilearn/emulator/jobs_comparison.h"
#include "omnilearn/traces/csv_reader.h"
#include "test_scenarios.h"

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::stringstream ss;
  ss << std::ifstream(path).rdbuf();
  return ss.str();
}

// Rows of a CSV file as column -> cell.
std::vector<std::map<std::string, std::string>> rows_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = traces::split_fields(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = traces::split_fields(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(row);
  }
  return rows;
}

// Cgroup folders under the cpu controller's root whose names hold `needle`.
std::vector<std::string> cgroups_holding(const std::string& needle) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/fs/cgroup/cpu", ec)) {
    if (e.path().filename().string().find(needle) != std::string::npos) out.push_back(e.path().string());
  }
  return out;
}

TEST(JobsEmulate, ASecondJobArrivesWhileTheFirstRunsAndStartUpStaysOffTheClock) {
  SKIP_WITHOUT_CGROUPS();
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
    GTEST_SKIP() << "Fashion-MNIST missing: install the Debian package dataset-fashion-mnist";
  }
  const std::string dir = testing::fresh_dir("jobs-emulate");
  std::ofstream(dir + "/kinds.csv") << "device,peak_fp32_tflops,memory_gb,description\nhalf,0.5,1,half a core\n";
  std::ofstream(dir + "/speeds.csv") << "model,dataset,device,batch,samples_per_s,source\n"
                                        "lenet,fashion-mnist,half,32,500,nominal\n";
  std::ofstream(dir + "/cluster.yaml") << "name: two\ngroups:\n  - {device: half, nodes: 2, gpus_per_node: 1}\n";
  // x: about 8 s of training from 0; y arrives at 2 s and starts at the round at 5 s, while x runs.
  std::ofstream(dir + "/jobs.csv")
      << "name,arrival_s,model,dataset,dataset_samples,epochs,target,workers,min_workers,max_workers,global_batch,mode,"
         "batch_policy\n"
         "jtx,0,lenet,fashion-mnist,60000,0.064,,1,1,1,32,bsp,uniform\n"
         "jty,2,lenet,fashion-mnist,60000,0.016,,1,1,1,32,bsp,uniform\n";
  const std::string out = dir + "/out";
  SpawnOptions o;
  o.stdout_file = o.stderr_file = dir + "/emulate.log";
  auto status = Subprocess::run(
      {OMNILEARN_CLI, "jobs", "emulate", dir + "/jobs.csv", "--cluster", dir + "/cluster.yaml", "--kinds",
       dir + "/kinds.csv", "--speeds", dir + "/speeds.csv", "--scheduler", "fifo", "--round", "5", "--out", out},
      o);
  std::printf("%s", read_file(dir + "/emulate.log").c_str());
  ASSERT_TRUE(status.is_ok());
  ASSERT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  const std::string allocations = read_file(out + "/allocations.csv");
  EXPECT_EQ(allocations.rfind("time_s,job,kind,devices\n0,jtx,half,1\n5,jtx,half,1\n5,jty,half,1\n", 0), 0u)
      << allocations;
  const auto jobs = rows_of(out + "/jobs.csv");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].at("start_s"), "0");
  EXPECT_EQ(jobs[1].at("start_s"), "5");
  EXPECT_GE(std::stod(jobs[0].at("samples")), 3840.0);
  EXPECT_GE(std::stod(jobs[1].at("samples")), 960.0);
  ASSERT_FALSE(jobs[0].at("jct_s").empty());
  ASSERT_FALSE(jobs[1].at("jct_s").empty());
  // x's JCT on the emulated clock is its steps at its own median step time (the step y's start-up paused is
  // longer, the rest are not): had the start-up been counted, it would be seconds longer.
  std::vector<double> step_s;
  for (const auto& row : rows_of(out + "/segments/jtx-0/iterations.csv")) {
    step_s.push_back(std::stod(row.at("compute_s")) + std::stod(row.at("comm_s")) + std::stod(row.at("wait_s")));
  }
  ASSERT_GT(step_s.size(), 20u);
  std::vector<double> sorted = step_s;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2), sorted.end());
  const double expected = static_cast<double>(step_s.size()) * sorted[sorted.size() / 2];
  const double jct = std::stod(jobs[0].at("jct_s"));
  EXPECT_NEAR(jct, expected, 0.2 * expected) << "steps " << step_s.size();
  // Nothing left behind: no process of the run, no cgroup of its segments.
  EXPECT_TRUE(cgroups_holding("jtx-0").empty());
  EXPECT_TRUE(cgroups_holding("jty-0").empty());
  auto times = read_run_job_times(out);
  ASSERT_TRUE(times.is_ok()) << times.status().message();
  EXPECT_EQ((*times)[1].allocations, std::vector<std::string>{"1 half"});
}

// A job with a target and no epochs is refused before anything starts (the testbed's jobs train epochs), naming the
// job; no cgroups or data needed.
TEST(JobsEmulate, ATargetAloneIsRefusedNamingTheJob) {
  const std::string dir = testing::fresh_dir("jobs-emulate-target");
  std::ofstream(dir + "/jobs.csv")
      << "name,arrival_s,model,dataset,dataset_samples,epochs,target,workers,min_workers,max_workers,global_batch,mode,"
         "batch_policy\n"
         "aim,0,lenet,fashion-mnist,60000,,0.8,1,1,1,32,bsp,uniform\n";
  SpawnOptions o;
  o.stdout_file = o.stderr_file = dir + "/emulate.log";
  std::ofstream(dir + "/kinds.csv") << "device,peak_fp32_tflops,memory_gb,description\nhalf,0.5,1,half a core\n";
  std::ofstream(dir + "/speeds.csv") << "model,dataset,device,batch,samples_per_s,source\n"
                                        "lenet,fashion-mnist,half,32,500,nominal\n";
  std::ofstream(dir + "/cluster.yaml") << "name: one\ngroups:\n  - {device: half, nodes: 1, gpus_per_node: 1}\n";
  auto status =
      Subprocess::run({OMNILEARN_CLI, "jobs", "emulate", dir + "/jobs.csv", "--cluster", dir + "/cluster.yaml",
                       "--kinds", dir + "/kinds.csv", "--speeds", dir + "/speeds.csv", "--out", dir + "/out"},
                      o);
  ASSERT_TRUE(status.is_ok());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1);
  const std::string log = read_file(dir + "/emulate.log");
  EXPECT_NE(log.find("job 'aim': a target alone (no epochs)"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir + "/out/jobs.csv"));
}

}  // namespace
}  // namespace omnilearn::emulator
