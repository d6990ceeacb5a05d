// Importers that turn public job workloads (../shared/traces-raw/pollux-osdi21, its SOURCE.md) into job files: the
// Pollux workloads (name,time,application,num_replicas,batch_size) and a job trace in the Philly shape
// (timestamp,duration,num_gpus,gpu_time,cluster). One entry point, import_jobs(); stateless: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/traces/device_speeds.h"
#include "omnilearn/traces/job_file.h"

namespace omnilearn::traces {

// One of Pollux's six applications (Qiao et al., OSDI 2021, Table 1) as a job of ours: the model and dataset under
// the names the speed table uses, samples per epoch, the epochs Pollux trains it for (its simulator's max_epochs),
// and its smallest validated batch, used as the per-worker batch of jobs converted from the Philly trace.
struct PolluxApplication {
  std::string_view name;  // "cifar10", "imagenet", "bert", "deepspeech2", "yolov3", "ncf"
  std::string_view model;
  std::string_view dataset;
  std::int64_t dataset_samples;
  double epochs;
  std::int64_t batch_per_worker;
};
const std::vector<PolluxApplication>& pollux_applications();
const PolluxApplication* find_pollux_application(std::string_view name);

enum class JobImportFormat {
  kPollux,  // pollux: a Pollux workload-N.csv; one job per row, rigid, at its workers and global batch
  kPhilly,  // philly: timestamp,duration,num_gpus,...; each job's duration becomes epochs (philly_job below)
};
std::string_view job_import_format_name(JobImportFormat format);
std::optional<JobImportFormat> parse_job_import_format(std::string_view name);

// What a job converted from a (GPUs, duration) record runs, and how its work is sized.
struct PhillyConversion {
  const DeviceSpeedTable* speeds = nullptr;  // required: durations become epochs through it
  std::string reference_device = "t4";       // the device the durations are taken to be measured on
  std::string batch_policy = "uniform";
  JobMode mode = JobMode::kBsp;
};

// The job a Philly record becomes. Its application follows Pollux's workload generator (workload.py) by GPU time
// (gpus x duration): under 1 h cifar10 or ncf, under 10 h deepspeech2 or bert (`coin` picks the first of each pair
// when < 0.5), under 100 h yolov3, else imagenet. Workers = gpus (rigid), global batch = the application's
// batch_per_worker x gpus, and epochs = the samples those workers would train in `duration_s` at the reference
// device's speed (perfect scaling) / dataset_samples.
Result<JobSpec> philly_job(std::string name, Seconds arrival_s, std::int64_t gpus, Seconds duration_s, double coin,
                           const PhillyConversion& conversion);

struct JobImportOptions {
  JobImportFormat format = JobImportFormat::kPollux;
  std::string input;
  std::string batch_policy = "uniform";  // every imported job's batch policy
  JobMode mode = JobMode::kBsp;
  // Philly only.
  PhillyConversion philly;  // its batch_policy and mode are taken from the fields above
  std::string cluster;      // keep only this virtual cluster ("" = all)
  Seconds min_duration_s = 0.0;  // drop shorter jobs (Pollux's generator drops those under 60 s)
  Seconds clip_from_s = 0.0;     // keep arrivals in [clip_from_s, clip_to_s) from the first submission,
  Seconds clip_to_s = std::numeric_limits<double>::infinity();  // re-based so clip_from_s is 0
  std::size_t max_jobs = 0;  // keep the first max_jobs after the filters (0 = all)
  std::uint64_t seed = 1;    // the coin of philly_job, drawn per job in arrival order
};

// One (GPUs, duration) record of a job trace.
struct JobSize {
  std::int64_t gpus = 1;
  Seconds duration_s = 0.0;
};
// The (GPUs, duration) records of a Philly-shaped file that pass options' cluster and min_duration_s filters, in
// file order: a sample for generate_philly_like.
Result<std::vector<JobSize>> read_philly_sizes(const JobImportOptions& options);

// Imports options.input as options.format says; jobs come back in arrival order (ties in file order). A malformed
// file gives "path:line: what was wrong; expected ...".
Result<std::vector<JobSpec>> import_jobs(const JobImportOptions& options);

}  // namespace omnilearn::traces
