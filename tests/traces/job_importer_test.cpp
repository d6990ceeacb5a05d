// The job importers on small excerpts written here (not the raw files), and the Philly-like generator: the same
// seed gives the same jobs, and the arrivals have the mean gap the load asks for.
#include "omnilearn/traces/job_importer.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "job_spec_test_util.h"
#include "omnilearn/traces/job_generators.h"

namespace omnilearn::traces {
namespace {

namespace fs = std::filesystem;

// Writes `text` to a fresh file under the test's temporary folder and returns its path.
std::string write_temp(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("omnilearn-jobs-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

// Every Pollux application's model on t4 at 100 samples/s whatever the batch (so epochs are easy to compute), and
// on v100 at 200 samples/s.
DeviceSpeedTable flat_table() {
  std::vector<SpeedPoint> points;
  for (const PolluxApplication& a : pollux_applications()) {
    for (std::int64_t b : {1, 100000}) {
      points.push_back({std::string(a.model), std::string(a.dataset), "t4", b, 100.0, "test"});
      points.push_back({std::string(a.model), std::string(a.dataset), "v100", b, 200.0, "test"});
    }
  }
  auto t = DeviceSpeedTable::create({{"t4", 8.1, 16, ""}, {"v100", 15.7, 16, ""}}, std::move(points));
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return std::move(t).value();
}

TEST(JobImporterTest, PolluxWorkloadRowsBecomeRigidJobsInArrivalOrder) {
  const std::string path = write_temp("workload-1.csv",
                                      "name,time,application,num_replicas,batch_size\n"
                                      "cifar10-0,107,cifar10,6,2048\n"
                                      "deepspeech2-1,110,deepspeech2,6,320\n"
                                      "ncf-2,105,ncf,1,32768\n");
  JobImportOptions o;
  o.format = JobImportFormat::kPollux;
  o.input = path;
  o.batch_policy = "omnilearn";
  auto jobs = import_jobs(o);
  ASSERT_TRUE(jobs.is_ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].name, "ncf-2");  // sorted by arrival
  test::expect_job((*jobs)[1], {.name = "cifar10-0",
                                .arrival_s = 107.0,
                                .model = "resnet18",
                                .dataset = "cifar10",
                                .dataset_samples = 50000,
                                .epochs = 100.0,
                                .workers = 6,
                                .min_workers = 6,
                                .max_workers = 6,
                                .global_batch = 2048,
                                .batch_policy = "omnilearn",
                                .asp_rule = ""});
  EXPECT_EQ((*jobs)[2].model, "deepspeech2");
  EXPECT_EQ((*jobs)[2].epochs, 80.0);

  const std::string bad = write_temp("bad.csv",
                                     "name,time,application,num_replicas,batch_size\n"
                                     "a,1,cifar10,2,64\n"
                                     "b,2,mnist,2,64\n");
  o.input = bad;
  auto refused = import_jobs(o);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().message().rfind(bad + ":3: application 'mnist' is not known; expected one of: cifar10", 0),
            0u)
      << refused.status().message();
  o.input = write_temp("bad2.csv", "name,time,application,num_replicas,batch_size\na,1,cifar10,0,64\n");
  refused = import_jobs(o);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find(":2: num_replicas '0' is not valid"), std::string::npos)
      << refused.status().message();
  // A count beyond any cluster is refused before it is converted to an integer.
  o.input = write_temp("bad3.csv", "name,time,application,num_replicas,batch_size\na,1,cifar10,1e300,1e301\n");
  refused = import_jobs(o);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find(":2: num_replicas '1e300' is not valid"), std::string::npos)
      << refused.status().message();
}

TEST(JobImporterTest, PhillyRecordsBecomeJobsSizedByTheReferenceSpeed) {
  // Out of order, as the real trace is; one record of another virtual cluster; one short job.
  const std::string path = write_temp("philly.csv",
                                      "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                      "2017-10-09 07:01:55,1000.0,1,1000.0,vc1\n"
                                      "2017-10-09 07:00:00,7200.0,2,14400.0,vc1\n"
                                      "2017-10-09 07:00:30,30.0,1,30.0,vc1\n"
                                      "2017-10-09 06:00:00,100.0,8,800.0,vc2\n"
                                      "2017-10-09 09:00:00,360000.0,4,1440000.0,vc1\n");
  const DeviceSpeedTable speeds = flat_table();
  JobImportOptions o;
  o.format = JobImportFormat::kPhilly;
  o.input = path;
  o.cluster = "vc1";
  o.min_duration_s = 60.0;
  o.philly.speeds = &speeds;
  o.philly.reference_device = "t4";
  auto jobs = import_jobs(o);
  ASSERT_TRUE(jobs.is_ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 3u);
  // 07:00:00, 2 GPUs x 2 h = 4 GPU-hours: deepspeech2 or bert; 100 samples/s x 2 workers x 7200 s of work.
  const JobSpec& first = (*jobs)[0];
  EXPECT_EQ(first.arrival_s, 0.0);
  EXPECT_EQ(first.workers, 2);
  EXPECT_TRUE(first.model == "deepspeech2" || first.model == "bert") << first.model;
  const PolluxApplication& app = *find_pollux_application(first.model);
  EXPECT_DOUBLE_EQ(first.epochs, 7200.0 * 100.0 * 2 / static_cast<double>(app.dataset_samples));
  EXPECT_EQ(first.global_batch, 2 * app.batch_per_worker);
  EXPECT_EQ(first.name, first.model + "-0");
  // 07:01:55 (115 s later), 1 GPU x 1000 s: cifar10 or ncf.
  EXPECT_EQ((*jobs)[1].arrival_s, 115.0);
  EXPECT_TRUE((*jobs)[1].model == "resnet18" || (*jobs)[1].model == "ncf") << (*jobs)[1].model;
  // 4 GPUs x 100 h = 400 GPU-hours: imagenet (resnet50).
  EXPECT_EQ((*jobs)[2].arrival_s, 7200.0);
  EXPECT_EQ((*jobs)[2].model, "resnet50");
  EXPECT_DOUBLE_EQ((*jobs)[2].epochs, 360000.0 * 100.0 * 4 / 1281167.0);

  // The same jobs at twice the reference speed carry twice the work; the clip window re-bases arrivals.
  o.philly.reference_device = "v100";
  o.clip_from_s = 100.0;
  auto clipped = import_jobs(o);
  ASSERT_TRUE(clipped.is_ok()) << clipped.status().message();
  ASSERT_EQ(clipped->size(), 2u);
  EXPECT_EQ((*clipped)[0].arrival_s, 15.0);
  EXPECT_DOUBLE_EQ((*clipped)[1].epochs, 2 * (*jobs)[2].epochs);

  o.input = write_temp("bad-philly.csv", "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09,1,1,1,vc1\n");
  auto refused = import_jobs(o);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("bad-philly.csv:2: timestamp '2017-10-09' is not valid"),
            std::string::npos)
      << refused.status().message();
  // A record whose work overflows to an infinite number of epochs, and a clip window that is empty or negative.
  o.input = write_temp("huge-philly.csv",
                       "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:00:00,1e307,1000,1,vc1\n");
  o.clip_from_s = 0.0;
  refused = import_jobs(o);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("huge-philly.csv:2: philly job: job 'resnet50': epochs 'inf'"),
            std::string::npos)
      << refused.status().message();
  o.input = path;
  for (const auto& [from, to] : {std::pair{100.0, 100.0}, std::pair{-5.0, 100.0}}) {
    o.clip_from_s = from;
    o.clip_to_s = to;
    refused = import_jobs(o);
    ASSERT_FALSE(refused.is_ok());
    EXPECT_NE(refused.status().message().find("clip window"), std::string::npos) << refused.status().message();
  }
  o.philly.speeds = nullptr;
  EXPECT_FALSE(import_jobs(o).is_ok());
}

TEST(JobGeneratorTest, SameSeedSameJobsAndAnotherSeedOthers) {
  const DeviceSpeedTable speeds = flat_table();
  PhillyLikeOptions o;
  o.jobs = 50;
  o.seed = 7;
  o.conversion.speeds = &speeds;
  auto a = generate_philly_like(o);
  auto b = generate_philly_like(o);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(format_job_file(a->jobs), format_job_file(b->jobs));
  o.seed = 8;
  auto c = generate_philly_like(o);
  ASSERT_TRUE(c.is_ok());
  EXPECT_NE(format_job_file(a->jobs), format_job_file(c->jobs));
  for (const JobSpec& j : a->jobs) EXPECT_TRUE(validate_job(j).is_ok()) << validate_job(j).message();
}

TEST(JobGeneratorTest, MeanGapMatchesTheLoadWithinFourStandardErrors) {
  const DeviceSpeedTable speeds = flat_table();
  PhillyLikeOptions o;
  o.jobs = 4000;
  o.load = 0.8;
  o.cluster_gpus = 64;
  o.seed = 3;
  o.conversion.speeds = &speeds;
  std::printf("seed %llu\n", static_cast<unsigned long long>(o.seed));
  auto g = generate_philly_like(o);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const double mean_gap = 1.0 / g->arrival_rate_per_s;
  EXPECT_DOUBLE_EQ(g->arrival_rate_per_s, 0.8 * 64 / mean_gpu_seconds(philly_size_distribution()));
  // The sample mean of n exponential gaps has standard error mean / sqrt(n).
  const double observed = g->jobs.back().arrival_s / static_cast<double>(o.jobs);
  EXPECT_NEAR(observed, mean_gap, 4.0 * mean_gap / std::sqrt(static_cast<double>(o.jobs)));
  // Most Philly jobs use one GPU (94.7% in the distribution).
  std::size_t one = 0;
  for (const JobSpec& j : g->jobs) one += j.workers == 1 ? 1 : 0;
  const double p = 70447.0 / 74409.0;
  EXPECT_NEAR(static_cast<double>(one) / o.jobs, p, 4.0 * std::sqrt(p * (1 - p) / o.jobs));

  // Drawn from given records instead: the rate follows their mean GPU-seconds.
  o.sizes = {{1, 100.0}, {4, 50.0}};
  auto from = generate_philly_like(o);
  ASSERT_TRUE(from.is_ok());
  EXPECT_DOUBLE_EQ(from->mean_gpu_seconds, 150.0);
  EXPECT_DOUBLE_EQ(from->arrival_rate_per_s, 0.8 * 64 / 150.0);
  for (const JobSpec& j : from->jobs) EXPECT_TRUE(j.workers == 1 || j.workers == 4);
  o.load = 0.0;
  EXPECT_FALSE(generate_philly_like(o).is_ok());
}

TEST(JobGeneratorTest, MeanOfALogLinearClassIsExact) {
  // One class of 2 GPUs, durations from 100 to 100e between p = 0 and 1: mean (100e - 100) / ln(e).
  const std::vector<SizeClass> dist{{2, 1.0, {{0.0, 100.0}, {1.0, 100.0 * std::exp(1.0)}}}};
  EXPECT_NEAR(mean_gpu_seconds(dist), 2 * (100.0 * std::exp(1.0) - 100.0), 1e-9);
}

}  // namespace
}  // namespace omnilearn::traces
