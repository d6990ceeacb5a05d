// The job file (traces/JOBS.md): training jobs that arrive at a shared cluster, one per row. Reading it into
// JobSpecs (errors name file:line and the field), and writing one atomically. Stateless functions: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/input_limits.h"
#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::traces {

enum class JobMode { kBsp, kAsp };
std::string_view job_mode_name(JobMode mode);  // "bsp", "asp"
std::optional<JobMode> parse_job_mode(std::string_view name);

// One job as the file gives it. Names (model, dataset, batch policy) are not checked against the catalogue here:
// the traces module knows none; whoever runs the jobs resolves them and names the job when one is unknown.
struct JobSpec {
  std::string name;                  // unique in the file
  Seconds arrival_s = 0.0;           // when the job is submitted, from the start of the workload
  std::string model;                 // a catalogue name ("resnet18") or a model profile file
  std::string dataset;               // the dataset's name; may be empty
  std::int64_t dataset_samples = 0;  // samples per epoch, > 0
  double epochs = 0.0;               // epochs to train (> 0, may be fractional); 0 = until the target only
  double target = 0.0;               // test accuracy in (0,1] that ends the job; 0 = none
  std::int64_t workers = 1;          // workers requested
  std::int64_t min_workers = 1;      // an elastic job runs on any count in [min_workers, max_workers];
  std::int64_t max_workers = 1;      // a rigid one has min = workers = max
  std::int64_t global_batch = 0;     // samples per step over all workers, >= workers
  JobMode mode = JobMode::kBsp;
  std::string batch_policy = "uniform";  // the job's own batch controller: uniform, omnilearn, ...
  // An ASP job's server rule (the optional asp_rule column): "" for plain ASGD, else a rule name with its parameter
  // after ':' (ssp:2, ringmaster:8, ringmaster:inf, dc-asgd:0.1, staleness-aware). Only its form is checked here.
  std::string asp_rule;

  bool elastic() const { return min_workers < max_workers; }
};

// The header of every job file, in this order.
inline constexpr std::string_view kJobFileHeader =
    "name,arrival_s,model,dataset,dataset_samples,epochs,target,workers,min_workers,max_workers,global_batch,mode,"
    "batch_policy";

// The optional last column: with it, the header is kJobFileHeader + "," + kJobFileAspRuleColumn and every row has one
// more field.
inline constexpr std::string_view kJobFileAspRuleColumn = "asp_rule";

// At most this many jobs in one file (read, imported or generated): the input limit of base/input_limits.h.
inline constexpr std::size_t kMaxJobs = limits::kMaxJobs;

// Parses job-file text. `source` names the text in errors: "source:line: field 'x' is 'y'; expected ...". Never
// throws. Jobs come back in file order (which is arrival order: the format requires it).
Result<std::vector<JobSpec>> parse_job_file(std::string_view text, std::string_view source);
Result<std::vector<JobSpec>> read_job_file(const std::string& path);

// Checks one job as the parser does (for importers and generators); the message names the job and the field.
Status validate_job(const JobSpec& job);

// The canonical text: `# comment` lines, the header, one row per job (numbers in their shortest exact form, empty
// min/max_workers for rigid jobs, empty epochs or target when 0; the asp_rule column only when a job has a rule).
// parse_job_file(format_job_file(j)) equals j.
std::string format_job_file(const std::vector<JobSpec>& jobs, std::string_view comment = {});
// Writes format_job_file atomically (a reader never sees half a file).
Status write_job_file(const std::vector<JobSpec>& jobs, const std::string& path, std::string_view comment = {});

}  // namespace omnilearn::traces
