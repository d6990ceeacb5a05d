// Helper for the job-file and job-importer tests: a whole JobSpec checked at once, one expectation per field, so
// a failure names the job and the field. Header-only test code.
#pragma once

#include <gtest/gtest.h>

#include "omnilearn/traces/job_file.h"

namespace omnilearn::traces::test {

// Expects every field of `job` to equal `want`'s. Write `want` with designated initializers: a field left out is
// expected at JobSpec's default.
inline void expect_job(const JobSpec& job, const JobSpec& want) {
  SCOPED_TRACE("job '" + want.name + "'");
  EXPECT_EQ(job.name, want.name);
  EXPECT_EQ(job.arrival_s, want.arrival_s);
  EXPECT_EQ(job.model, want.model);
  EXPECT_EQ(job.dataset, want.dataset);
  EXPECT_EQ(job.dataset_samples, want.dataset_samples);
  EXPECT_EQ(job.epochs, want.epochs);
  EXPECT_EQ(job.target, want.target);
  EXPECT_EQ(job.workers, want.workers);
  EXPECT_EQ(job.min_workers, want.min_workers);
  EXPECT_EQ(job.max_workers, want.max_workers);
  EXPECT_EQ(job.global_batch, want.global_batch);
  EXPECT_EQ(job.mode, want.mode);
  EXPECT_EQ(job.batch_policy, want.batch_policy);
  EXPECT_EQ(job.asp_rule, want.asp_rule);
}

}  // namespace omnilearn::traces::test
