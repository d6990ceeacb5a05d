// The job file (traces/JOBS.md): values read back from a hand-written file, every bad field refused with its
// file:line, and the writer's text read back to the same jobs.
#include "omnilearn/traces/job_file.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "job_spec_test_util.h"

namespace omnilearn::traces {
namespace {

constexpr const char* kHeader =
    "name,arrival_s,model,dataset,dataset_samples,epochs,target,workers,min_workers,max_workers,global_batch,mode,"
    "batch_policy\n";

TEST(JobFileTest, ReadsEveryFieldOfAHandWrittenFile) {
  const std::string text = std::string("# two jobs\n\n") + kHeader +
                           "a, 0, resnet18, cifar10, 50000, 2, , 4, , , 512, bsp, uniform\r\n"
                           "\"b,1\",12.5,profiles/hl1.yaml,,1000,,0.9,4,2,8,64,asp,omnilearn\n";
  auto jobs = parse_job_file(text, "j.csv");
  ASSERT_TRUE(jobs.is_ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 2u);
  test::expect_job((*jobs)[0], {.name = "a",
                                .arrival_s = 0.0,
                                .model = "resnet18",
                                .dataset = "cifar10",
                                .dataset_samples = 50000,
                                .epochs = 2.0,
                                .target = 0.0,
                                .workers = 4,
                                .min_workers = 4,
                                .max_workers = 4,
                                .global_batch = 512,
                                .mode = JobMode::kBsp,
                                .batch_policy = "uniform",
                                .asp_rule = ""});
  EXPECT_FALSE((*jobs)[0].elastic());
  test::expect_job((*jobs)[1], {.name = "b,1",
                                .arrival_s = 12.5,
                                .model = "profiles/hl1.yaml",
                                .dataset = "",
                                .dataset_samples = 1000,
                                .epochs = 0.0,
                                .target = 0.9,
                                .workers = 4,
                                .min_workers = 2,
                                .max_workers = 8,
                                .global_batch = 64,
                                .mode = JobMode::kAsp,
                                .batch_policy = "omnilearn",
                                .asp_rule = ""});
  EXPECT_TRUE((*jobs)[1].elastic());

  // The canonical text reads back to the same jobs, and formats to the same text.
  const std::string canonical = format_job_file(*jobs, "round trip");
  auto again = parse_job_file(canonical, "c.csv");
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  EXPECT_EQ(format_job_file(*again, "round trip"), canonical);
  EXPECT_EQ((*again)[1].name, "b,1");
  EXPECT_EQ((*again)[1].max_workers, 8);
}

struct BadRow {
  const char* row;
  const char* expected;  // the message after "j.csv:3: "
};

// Each row breaks one field of a valid row ("x,1,resnet18,cifar10,100,1,,2,,,8,bsp,uniform").
const BadRow kBadRows[] = {
    {",1,resnet18,cifar10,100,1,,2,,,8,bsp,uniform", "name '' is not valid"},
    {"x,-1,resnet18,cifar10,100,1,,2,,,8,bsp,uniform", "arrival_s '-1' is not valid"},
    {"x,soon,resnet18,cifar10,100,1,,2,,,8,bsp,uniform", "arrival_s 'soon' is not valid"},
    {"x,1,,cifar10,100,1,,2,,,8,bsp,uniform", "model '' is not valid"},
    {"x,1,resnet18,#c,100,1,,2,,,8,bsp,uniform", "dataset '#c' is not valid"},
    {"x,1,resnet18,cifar10,0,1,,2,,,8,bsp,uniform", "dataset_samples '0' is not valid"},
    {"x,1,resnet18,cifar10,10.5,1,,2,,,8,bsp,uniform", "dataset_samples '10.5' is not valid"},
    {"x,1,resnet18,cifar10,100,0,,2,,,8,bsp,uniform", "epochs '0' is not valid"},
    {"x,1,resnet18,cifar10,100,1,1.5,2,,,8,bsp,uniform", "target '1.5' is not valid"},
    {"x,1,resnet18,cifar10,100,,,2,,,8,bsp,uniform", "epochs and target are both empty"},
    {"x,1,resnet18,cifar10,100,1,,0,,,8,bsp,uniform", "workers '0' is not valid"},
    {"x,1,resnet18,cifar10,100,1,,2,3,,8,bsp,uniform", "min_workers '3' is not valid"},
    {"x,1,resnet18,cifar10,100,1,,2,,1,8,bsp,uniform", "max_workers '1' is not valid"},
    {"x,1,resnet18,cifar10,100,1,,2,,,1,bsp,uniform", "global_batch '1' is not valid"},
    {"x,1,resnet18,cifar10,100,1,,2,,,8,ssp,uniform", "mode 'ssp' is not valid; expected bsp or asp"},
    {"x,1,resnet18,cifar10,100,1,,2,,,8,bsp,a b", "batch_policy 'a b' is not valid"},
    {"x,1,resnet18,cifar10,100,1,,2,,,8,bsp", "row has 12 fields; expected 13"},
    {"first,1,resnet18,cifar10,100,1,,2,,,8,bsp,uniform", "name 'first' is used by an earlier job"},
    {"x,0.5,resnet18,cifar10,100,1,,2,,,8,bsp,uniform", "arrival_s 0.5 is before the previous job's 1 (line 2)"},
    // Hostile numbers: each field has a stated range, so a run stays finite in time and memory.
    {"x,1e300,resnet18,cifar10,100,1,,2,,,8,bsp,uniform",
     "arrival_s '1e300' is not valid; expected a number of "
     "seconds in [0, 1e9]"},
    {"x,1,resnet18,cifar10,100,1e308,,2,,,8,bsp,uniform",
     "epochs '1e308' is not valid; expected a number of "
     "epochs in (0, 1e6]"},
    {"x,1,resnet18,cifar10,1e13,1,,2,,,8,bsp,uniform", "dataset_samples '1e13' is not valid"},
    {"x,1,resnet18,cifar10,100,1,,2000000,,,2000000,bsp,uniform", "workers '2000000' is not valid"},
    {"x,1,resnet18,cifar10,100,1,,2,,1e7,8,bsp,uniform", "max_workers '1e7' is not valid"},
    {"x,1,resnet18,cifar10,100,1,,2,,,1e10,bsp,uniform", "global_batch '1e10' is not valid"},
    {"x,1,resnet18,cifar10,1e12,1e5,,2,,,8,bsp,uniform",
     "epochs 1e5 x dataset_samples 1e12 / global_batch 8 is "
     "1.25e+16 steps; expected at most 1000000000"},
    {"x,1,resnet18,cifar10,100,inf,,2,,,8,bsp,uniform", "epochs 'inf' is not valid"},
    {"x,nan,resnet18,cifar10,100,1,,2,,,8,bsp,uniform", "arrival_s 'nan' is not valid"},
    {"\"x,1,resnet18,cifar10,100,1,,2,,,8,bsp,uniform", "a quoted field is never closed"},
};

TEST(JobFileTest, RefusesEveryBadFieldWithFileAndLine) {
  for (const BadRow& bad : kBadRows) {
    const std::string text = std::string(kHeader) + "first,1,resnet18,cifar10,100,1,,2,,,8,bsp,uniform\n" + bad.row + "\n";
    auto jobs = parse_job_file(text, "j.csv");
    ASSERT_FALSE(jobs.is_ok()) << bad.row;
    const std::string want = std::string("j.csv:3: ") + bad.expected;
    EXPECT_EQ(jobs.status().message().rfind(want, 0), 0u) << bad.row << "\n got: " << jobs.status().message();
  }
}

// RFC 4180: a quoted field may hold a line break, and the record is read whole (a name must still be one line), with
// the lines after it counted right; a comment's quote opens nothing.
TEST(JobFileTest, AQuotedLineBreakIsReadAsPartOfItsField) {
  const std::string rows =
      "y,2,resnet18,cifar10,100,1,,2,,,8,bsp,uniform\n"
      "# a \"comment with an open quote\n"
      "\"z\n2\",1,resnet18,cifar10,100,1,,2,,,8,bsp,\"uni\nform\"\n";
  auto jobs = parse_job_file(std::string(kHeader) + rows, "j.csv");
  ASSERT_FALSE(jobs.is_ok());
  EXPECT_EQ(jobs.status().message().rfind("j.csv:4: name 'z\n2' is not valid; expected a non-empty job name on one "
                                          "line",
                                          0),
            0u)
      << jobs.status().message();
  auto dataset = parse_job_file(std::string(kHeader) + "\"y\",2,resnet18,\"ci\nfar\",100,1,,2,,,8,bsp,uniform\n" +
                                    "z,1,resnet18,cifar10,100,1,,2,,,8,bsp,uniform\n",
                                "j.csv");
  ASSERT_FALSE(dataset.is_ok());
  EXPECT_EQ(dataset.status().message().rfind("j.csv:2: dataset 'ci\nfar' is not valid", 0), 0u)
      << dataset.status().message();
  auto order = parse_job_file(std::string(kHeader) + "\"y\",2,resnet18,\"cifar\",100,\"1\n\",,2,,,8,bsp,uniform\n" +
                                  "z,1,resnet18,cifar10,100,1,,2,,,8,bsp,uniform\n",
                              "j.csv");
  ASSERT_FALSE(order.is_ok());  // y's record spans lines 2-3, so z is on line 4
  EXPECT_EQ(order.status().message().rfind("j.csv:4: arrival_s 1 is before the previous job's 2 (line 2)", 0), 0u)
      << order.status().message();
}

TEST(JobFileTest, RefusesAWrongHeaderAndAFileWithoutJobs) {
  auto wrong = parse_job_file("# c\nname,arrival,model\n", "j.csv");
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_EQ(wrong.status().message().rfind("j.csv:2: header 'name,arrival,model' is wrong; expected 'name,", 0), 0u)
      << wrong.status().message();
  auto empty = parse_job_file(std::string("# c\n") + kHeader, "j.csv");
  ASSERT_FALSE(empty.is_ok());
  EXPECT_EQ(empty.status().message().rfind("j.csv:2: no jobs", 0), 0u) << empty.status().message();
  EXPECT_FALSE(read_job_file("/nonexistent/j.csv").is_ok());
}

TEST(JobFileTest, TheAspRuleColumnIsOptional) {
  const std::string header = std::string(kHeader).insert(std::string(kHeader).size() - 1, ",asp_rule");
  const std::string text = header +
                           "a,0,resnet18,cifar10,100,1,,2,,,8,asp,uniform,ringmaster:inf\n"
                           "b,1,resnet18,cifar10,100,1,,2,,,8,asp,uniform,\n"
                           "c,2,resnet18,cifar10,100,1,,2,,,8,bsp,uniform,\n";
  auto jobs = parse_job_file(text, "j.csv");
  ASSERT_TRUE(jobs.is_ok()) << jobs.status().message();
  EXPECT_EQ((*jobs)[0].asp_rule, "ringmaster:inf");
  EXPECT_EQ((*jobs)[1].asp_rule, "");
  // Written back with the column while a job has a rule, and without it (the 13 columns) when none does.
  const std::string canonical = format_job_file(*jobs);
  EXPECT_EQ(canonical, text);
  (*jobs)[0].asp_rule.clear();
  EXPECT_EQ(format_job_file(*jobs).substr(0, std::string(kHeader).size()), kHeader);
  // A rule on a bsp job, a malformed one, a row missing the column.
  for (const auto& [row, expected] :
       {std::pair{"x,3,resnet18,cifar10,100,1,,2,,,8,bsp,uniform,ssp:2", "asp_rule 'ssp:2' is not valid; expected "
                                                                         "nothing for a bsp job"},
        std::pair{"x,3,resnet18,cifar10,100,1,,2,,,8,asp,uniform,SSP 2", "asp_rule 'SSP 2' is not valid"},
        std::pair{"x,3,resnet18,cifar10,100,1,,2,,,8,asp,uniform", "row has 13 fields; expected 14"}}) {
    auto bad = parse_job_file(text + row + "\n", "j.csv");
    ASSERT_FALSE(bad.is_ok()) << row;
    EXPECT_EQ(bad.status().message().rfind(std::string("j.csv:5: ") + expected, 0), 0u) << bad.status().message();
  }
}

TEST(JobFileTest, ValidateJobNamesTheJobAndTheField) {
  JobSpec j;
  j.name = "j";
  j.model = "resnet18";
  j.dataset_samples = 10;
  j.epochs = 1;
  j.workers = 2;
  j.min_workers = 2;
  j.max_workers = 2;
  j.global_batch = 8;
  EXPECT_TRUE(validate_job(j).is_ok()) << validate_job(j).message();
  j.batch_policy = "";
  EXPECT_EQ(validate_job(j).message().rfind("job 'j': batch_policy '' is not valid", 0), 0u) << validate_job(j).message();
  j.batch_policy = "uniform";
  j.min_workers = 3;
  EXPECT_FALSE(validate_job(j).is_ok());
}

}  // namespace
}  // namespace omnilearn::traces
