// Zeus's training trace: rows read into runs per (workload, target, batch) with never-reached runs kept as such,
// hostile rows refused with file, line and field, and the shipped trace read back against Zeus's raw file.
#include "omnilearn/traces/zeus_train.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"

namespace omnilearn::traces {
namespace {

const std::string kHeader = "dataset,network,batch,optimizer,learning_rate,seed,target_metric,target_epoch\n";

TEST(ZeusTrainTraceTest, RunsAreGroupedByWorkloadTargetAndBatchWithNeverReachedKept) {
  const std::string text = "# a hand-written trace\n" + kHeader +
                           "d,n,8,o,1e-1,2,0.5,7\n"
                           "d,n,8,o,1e-1,1,0.5,6\n"
                           "d,n,8,o,1e-1,1,0.6,\n"
                           "d,n,16,o,2e-1,1,0.5,9\n"
                           "e,n,4,o,1e-3,1,40.0,3\n";
  auto rows = parse_zeus_train_rows(text, "t.csv");
  ASSERT_TRUE(rows.is_ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 5u);
  EXPECT_EQ((*rows)[0].workload, "d/n/o");
  auto t = ZeusTrainTrace::create(std::move(rows).value());
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->workloads(), (std::vector<std::string>{"d/n/o", "e/n/o"}));
  EXPECT_EQ(t->targets("d/n/o"), (std::vector<double>{0.5, 0.6}));
  EXPECT_EQ(t->batches("d/n/o", 0.5), (std::vector<std::int64_t>{8, 16}));
  EXPECT_EQ(t->batches("d/n/o", 0.6), (std::vector<std::int64_t>{8}));
  const std::vector<ZeusRun> runs = t->runs("d/n/o", 0.5, 8);
  ASSERT_EQ(runs.size(), 2u);  // ordered by learning rate, then seed
  EXPECT_EQ(runs[0].seed, 1);
  EXPECT_EQ(runs[0].target_epoch, 6);
  EXPECT_EQ(runs[1].seed, 2);
  EXPECT_EQ(runs[0].learning_rate, 0.1);
  const std::vector<ZeusRun> never = t->runs("d/n/o", 0.6, 8);
  ASSERT_EQ(never.size(), 1u);
  EXPECT_FALSE(never[0].target_epoch.has_value());
  EXPECT_TRUE(t->runs("d/n/o", 0.55, 8).empty());
  EXPECT_TRUE(t->runs("x/y/z", 0.5, 8).empty());
  EXPECT_TRUE(t->targets("x/y/z").empty());
}

TEST(ZeusTrainTraceTest, HostileRowsAreRefusedWithFileLineAndField) {
  const std::string good = "d,n,8,o,1e-1,1,0.5,6\n";
  struct Case {
    std::string rows;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"d,n,0,o,1e-1,1,0.5,6\n", "t.csv:2: batch '0' is not valid; expected a whole number >= 1"},
      {"d,n,8.5,o,1e-1,1,0.5,6\n", "t.csv:2: batch '8.5'"},
      {"d,n,8,o,0,1,0.5,6\n", "t.csv:2: learning_rate '0' is not valid; expected a number > 0"},
      {"d,n,8,o,nan,1,0.5,6\n", "t.csv:2: learning_rate 'nan'"},
      {"d,n,8,o,1e-1,-1,0.5,6\n", "t.csv:2: seed '-1' is not valid; expected a whole number >= 0"},
      {"d,n,8,o,1e-1,1,inf,6\n", "t.csv:2: target_metric 'inf' is not valid; expected a finite number"},
      {"d,n,8,o,1e-1,1,0.5,0\n", "t.csv:2: target_epoch '0' is not valid; expected a whole number >= 1"},
      {"d,n,8,o,1e-1,1,0.5,nan\n", "t.csv:2: target_epoch 'nan'"},
      {"d,n/x,8,o,1e-1,1,0.5,6\n", "t.csv:2: network 'n/x' is not valid; expected a name without '/'"},
      {",n,8,o,1e-1,1,0.5,6\n", "t.csv:2: dataset ''"},
      {"d,n,8,o,1e-1,1,0.5\n", "t.csv:2: row has 7 fields"},
      {good + good,
       "t.csv:3: target_metric '0.5' is not valid; expected one row per workload, batch, learning rate, seed and "
       "target (t.csv:2 has this one)"},
      {"", "no rows"},
  };
  for (const Case& c : cases) {
    auto r = parse_zeus_train_rows(kHeader + c.rows, "t.csv");
    ASSERT_FALSE(r.is_ok()) << c.rows;
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos) << r.status().message();
  }
  // Zeus's raw header (batch_size, run) is not the derived table's.
  auto raw = parse_zeus_train_rows(
      "dataset,network,batch_size,optimizer,learning_rate,run,target_metric,target_epoch\n" + good, "t.csv");
  ASSERT_FALSE(raw.is_ok());
  EXPECT_NE(raw.status().message().find("t.csv:1: header"), std::string::npos) << raw.status().message();
  // Rows built in code are checked by create() too.
  const ZeusRun run{0.1, 1, 6};
  auto twice = ZeusTrainTrace::create({{"w", 8, 0.5, run}, {"w", 8, 0.5, run}});
  ASSERT_FALSE(twice.is_ok());
  EXPECT_NE(twice.status().message().find("given twice"), std::string::npos) << twice.status().message();
  EXPECT_FALSE(ZeusTrainTrace::create({{"w", 8, 0.5, ZeusRun{0.1, 1, 0}}}).is_ok());
  EXPECT_FALSE(ZeusTrainTrace::create({{"", 8, 0.5, run}}).is_ok());
}

const std::string kShipped = std::string(OMNILEARN_DEVICES_DIR) + "/zeus-train.csv";

TEST(ZeusTrainTraceTest, TheShippedTraceReadsBackTheRawFile) {
  auto rows = [] {
    auto text = read_text_file(kShipped);
    EXPECT_TRUE(text.is_ok()) << text.status().message();
    return parse_zeus_train_rows(text.is_ok() ? *text : "", kShipped);
  }();
  ASSERT_TRUE(rows.is_ok()) << rows.status().message();
  EXPECT_EQ(rows->size(), 3759u);
  auto t = read_zeus_train_trace(kShipped);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->workloads().size(), 6u);
  // summary_train.csv: imagenet,resnet50,64,adadelta,1e-1,{1..4},0.65,nan (batch 64 never reaches 65% top-1).
  const std::vector<ZeusRun> never = t->runs("imagenet/resnet50/adadelta", 0.65, 64);
  ASSERT_EQ(never.size(), 4u);
  for (const ZeusRun& r : never) EXPECT_FALSE(r.target_epoch.has_value());

  const std::string raw = std::string(OMNILEARN_TRACES_RAW) + "/zeus-nsdi23/summary_train.csv";
  if (!std::filesystem::exists(raw)) GTEST_SKIP() << "raw trace not present: " << raw;
  auto text = read_text_file(raw);
  ASSERT_TRUE(text.is_ok()) << text.status().message();
  // Every raw row is a run of the shipped trace with the same first epoch at the target (nan: never reached).
  std::size_t n = 0;
  std::size_t start = text->find('\n') + 1;
  while (start < text->size()) {
    std::size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    const std::vector<std::string> f = split_fields(std::string_view(*text).substr(start, end - start));
    start = end + 1;
    if (f.size() != 8) continue;
    ++n;
    const auto batch = static_cast<std::int64_t>(*parse_double(f[2]));
    const double rate = *parse_double(f[4]);
    const auto seed = static_cast<std::int64_t>(*parse_double(f[5]));
    bool found = false;
    for (const ZeusRun& r : t->runs(f[0] + "/" + f[1] + "/" + f[3], *parse_double(f[6]), batch)) {
      if (r.learning_rate != rate || r.seed != seed) continue;
      found = true;
      if (f[7] == "nan") {
        EXPECT_FALSE(r.target_epoch.has_value()) << f[0] << " " << batch << " " << seed << " " << f[6];
      } else {
        EXPECT_EQ(r.target_epoch, static_cast<std::int64_t>(*parse_double(f[7])));
      }
    }
    EXPECT_TRUE(found) << f[0] << " " << batch << " " << seed << " " << f[6];
  }
  EXPECT_EQ(n, rows->size());
}

}  // namespace
}  // namespace omnilearn::traces
