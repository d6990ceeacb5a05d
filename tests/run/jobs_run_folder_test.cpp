// The run folder of several jobs: one jobs.csv schema for both back ends (the simulator's columns, empty cells where a
// back end knows nothing), RFC 4180 quoting, allocations.csv rows, the folder started with its manifest, and a
// jobs scenario resolved once for either back end (resolve_jobs_run).
#include "omnilearn/run/jobs_run_folder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "omnilearn/run/jobs_run_setup.h"

namespace omnilearn::run {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("omnilearn_jobs_run_folder_test_" + name);
  fs::remove_all(dir);
  return dir;
}

JobRow finished_row() {
  JobRow r;
  r.name = "a";
  r.arrival_s = 1.0;
  r.start_s = 2.0;
  r.end_s = 11.5;
  r.steps = 10;
  r.samples = 1280;
  r.restarts = 1;
  r.batch_policy = "omnilearn";
  r.workers = 2;
  r.device_s = {{"v100", 19.0}};
  r.contention = 1.5;
  r.fair_s = 5.0;
  r.rho = 2.1;
  return r;
}

TEST(JobsCsv, TheSimulatorsSchemaWithEmptyCellsWhereNotKnown) {
  JobsTable t;
  t.kinds = {"k80", "v100"};
  t.rows.push_back(finished_row());
  JobRow waiting;
  waiting.name = "b";
  waiting.arrival_s = 3.0;
  waiting.batch_policy = "uniform";
  t.rows.push_back(waiting);
  EXPECT_EQ(jobs_csv(t),
            "job,arrival_s,start_s,end_s,jct_s,queueing_s,steps,samples,restarts,batch_policy,workers,device_s_k80,"
            "device_s_v100,contention,fair_s,rho\n"
            "a,1,2,11.5,10.5,1,10,1280,1,omnilearn,2,0,19,1.5,5,2.1\n"
            "b,3,,,,,0,0,0,uniform,1,0,0,,,\n");
}

TEST(JobsCsv, RuleAndEnergyColumnsWhenAsked) {
  JobsTable t;
  t.kinds = {"v100"};
  t.asp_rules = true;
  t.energy = true;
  JobRow r = finished_row();
  r.asp_rule = "ssp:2";
  r.dropped_pushes = 3;
  r.energy = JobJoules{10.0, 4.0, 3.0, 2.0, 1.0};
  t.rows.push_back(r);
  const std::string csv = jobs_csv(t);
  EXPECT_NE(csv.find(",rho,asp_rule,dropped_pushes,energy_j,compute_j,comm_j,wait_j,idle_j\n"), std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",2.1,ssp:2,3,10,4,3,2,1\n"), std::string::npos) << csv;
}

TEST(JobsCsv, NamesAreQuotedAsRfc4180Says) {
  JobsTable t;
  JobRow r = finished_row();
  r.name = "a,\"b\"";
  t.rows.push_back(r);
  EXPECT_NE(jobs_csv(t).find("\n\"a,\"\"b\"\"\",1,"), std::string::npos) << jobs_csv(t);
  EXPECT_EQ(allocations_csv_row(10, "x,y", "v100", 2), "10,\"x,y\",v100,2\n");
  EXPECT_EQ(allocations_csv_row(0.5, "a", "k80", 1, std::string("b")), "0.5,a,k80,1,b\n");
  EXPECT_EQ(allocations_csv_row(0.5, "a", "k80", 1, std::string()), "0.5,a,k80,1,\n");
  EXPECT_EQ(allocations_csv_header(true), "time_s,job,kind,devices,packed_with\n");
}

TEST(JobsRunWriter, WritesEachFileAndForceRemovesTheirTemporaryFiles) {
  const fs::path dir = fresh_dir("force");
  JobsRunSetup setup;
  setup.scenario.name = "x";
  setup.out_dir = dir.string();
  {
    auto folder = start_jobs_run_folder(setup, /*replace=*/false, {{"argv", {"a"}}}, "9.9");
    ASSERT_TRUE(folder.is_ok()) << folder.status().message();
    const JobsRunWriter out(dir.string());
    ASSERT_TRUE(out.write_jobs(JobsTable{}).is_ok());
    ASSERT_TRUE(out.write_allocations(allocations_csv_header(false)).is_ok());
    ASSERT_TRUE(out.write_summary({{"kind", "jobs"}}).is_ok());
  }
  const std::string manifest = read_file(dir / "manifest.json");
  EXPECT_LT(manifest.find("\"scenario\""), manifest.find("\"argv\""));
  EXPECT_LT(manifest.find("\"argv\""), manifest.find("\"omnilearn_version\": \"9.9\""));
  EXPECT_EQ(read_file(dir / "summary.json"), "{\n  \"kind\": \"jobs\"\n}\n");
  EXPECT_FALSE(fs::exists(dir / "workload.csv"));  // a job file's jobs are not copied
  // A run stopped mid-write leaves a temporary file: --force removes it with the file it was for.
  std::ofstream(dir / ".jobs.csv.tmp") << "half";
  std::ofstream(dir / ".workload.csv.tmp") << "half";
  EXPECT_FALSE(start_jobs_run_folder(setup, /*replace=*/false, {}, "9.9").is_ok());  // not empty
  auto again = start_jobs_run_folder(setup, /*replace=*/true, {}, "9.9");
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  EXPECT_FALSE(fs::exists(dir / ".jobs.csv.tmp"));
  EXPECT_FALSE(fs::exists(dir / ".workload.csv.tmp"));
  EXPECT_FALSE(fs::exists(dir / "jobs.csv"));
  EXPECT_TRUE(fs::exists(dir / "manifest.json"));
}

TEST(ResolveJobsRun, AJobFileWithOverridesForEitherBackEnd) {
  const std::string root = OMNILEARN_SOURCE_DIR;
  JobsRunRequest request;
  request.jobs = root + "/scenarios/testbed/jobs/jobs.yaml";
  request.overrides = {{"job_policy=\"uniform\"", "--job-policy uniform"}, {"placement=\"spread\"", ""}};
  request.out_suffix = "-testbed";
  request.shipped_device_tables = false;
  auto r = resolve_jobs_run(request);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->scenario.placement, "spread");
  ASSERT_FALSE(r->jobs.empty());
  for (const traces::JobSpec& j : r->jobs) EXPECT_EQ(j.batch_policy, "uniform");
  EXPECT_TRUE(r->out_dir.ends_with("/testbed-jobs-testbed")) << r->out_dir;
  EXPECT_TRUE(r->speeds.has_value());
  EXPECT_TRUE(r->workload_note.empty());  // a job file: nothing to copy
  EXPECT_TRUE(r->power.empty());          // no energy asked
  // An override's error names the option it came from.
  request.overrides = {{"round=-1", "--round -1"}};
  auto bad = resolve_jobs_run(request);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("--round -1"), std::string::npos) << bad.status().message();
}

TEST(ResolveJobsRun, TheTestbedNeedsItsOwnDeviceTables) {
  const std::string root = OMNILEARN_SOURCE_DIR;
  JobsRunRequest request;
  request.jobs = root + "/scenarios/testbed/jobs/jobs.csv";  // a job file alone names no device tables
  request.shipped_device_tables = false;
  auto r = resolve_jobs_run(request);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("device kinds and speeds"), std::string::npos) << r.status().message();
}

// With energy, each kind the measured table has takes its busy curve and blocked figure from it, as the hpc preset's
// GPUs of a single run do (Zeus's ShuffleNet-v2 / CIFAR-100 rows at 250 W); a kind it lacks keeps its figures,
// labelled; energy.gpu still replaces every kind's.
TEST(ResolveJobsRun, EnergyReadsTheMeasuredTableForTheKindsItHas) {
  const std::string root = OMNILEARN_SOURCE_DIR;
  JobsRunRequest request;
  request.jobs = root + "/scenarios/jobs/philly-gavel.yaml";
  request.overrides = {{"workload.generate.jobs=4", ""}};
  request.energy = true;
  auto r = resolve_jobs_run(request);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const scenarios::DevicePower& v100 = r->power.at("v100");
  EXPECT_EQ(v100.busy_from,
            "measured table (v100 cifar100/shufflenetv2/adadelta, 250 W; batches 8-4096, flat outside)");
  EXPECT_NEAR(v100.busy_at(1024), 187.7, 0.05);  // the measured row, as the preset's
  EXPECT_NEAR(v100.busy_at(64), 88.7, 0.05);
  ASSERT_TRUE(v100.blocked_w.has_value());
  EXPECT_NEAR(*v100.blocked_w, 34.75, 0.01);  // the V100's lowest measured power (NCF, batch 16384, 150 W)
  EXPECT_EQ(*v100.idle_w, 25.0);              // the kind's own idle figure stays (assumed)
  EXPECT_TRUE(r->power.at("p100").busy_from.starts_with("measured table (p100 cifar100/shufflenetv2/adadelta"));
  const scenarios::DevicePower& k80 = r->power.at("k80");
  EXPECT_TRUE(k80.busy_from.starts_with("assumed law (the V100 curve scaled")) << k80.busy_from;
  EXPECT_FALSE(k80.blocked_w.has_value());
  // energy.gpu.busy replaces the table's curve on every kind.
  request.overrides.push_back({"energy.gpu.busy=100", ""});
  auto fixed = resolve_jobs_run(request);
  ASSERT_TRUE(fixed.is_ok()) << fixed.status().message();
  EXPECT_EQ(fixed->power.at("v100").busy_at(1024), 100.0);
  EXPECT_EQ(fixed->power.at("v100").busy_from, "scenario");
}

}  // namespace
}  // namespace omnilearn::run
