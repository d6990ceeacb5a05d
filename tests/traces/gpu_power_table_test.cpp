// Measured GPU tables: measured points read back exactly, limits and batches between measured ones interpolated by the
// documented rules (checked by hand), points outside refused naming the measured range, hostile rows refused with
// file, line and field; the shipped Zeus table read back, and its accuracy as a model by leave-one-out
// (docs/energy.md, "Measured GPU tables (Zeus)"): the numbers printed here are the ones the docs quote.
#include "omnilearn/traces/gpu_power_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "omnilearn/traces/text_file.h"

namespace omnilearn::traces {
namespace {

// Workload d/n/o on kind k: batches 10 and 40 at limits 100 and 200 W, batch 80 at 200 W only.
constexpr const char* kTable =
    "# a hand-written table\n"
    "kind,dataset,network,optimizer,batch,power_limit_w,time_per_epoch_s,average_power_w,energy_per_epoch_j\n"
    "k,d,n,o,10,100,200,90,18000\n"
    "k,d,n,o,10,200,100,170,17000\n"
    "k,d,n,o,40,100,100,100,10000\n"
    "k,d,n,o,40,200,50,180,9000\n"
    "k,d,n,o,80,200,40,190,7600\n";

GpuPowerTable table(GpuInterpolation interpolation = {}) {
  auto rows = parse_gpu_power_rows(kTable, "p.csv");
  EXPECT_TRUE(rows.is_ok()) << rows.status().message();
  auto t = GpuPowerTable::create(rows.is_ok() ? std::move(rows).value() : std::vector<GpuPowerRow>{}, interpolation);
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return std::move(t).value();
}

TEST(GpuPowerTableTest, MeasuredPointsReadBackExactlyAndAreListed) {
  const GpuPowerTable t = table();
  auto f = t.figure("k", "d/n/o", 40, 200.0);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(f->time_per_epoch_s, 50.0);
  EXPECT_EQ(f->average_power_w, 180.0);
  EXPECT_EQ(f->energy_per_epoch_j, 9000.0);
  EXPECT_EQ(f->source, GpuFigureSource::kMeasured);
  EXPECT_EQ(t.kinds(), std::vector<std::string>{"k"});
  EXPECT_EQ(t.workloads("k"), std::vector<std::string>{"d/n/o"});
  EXPECT_EQ(t.batches("k", "d/n/o"), (std::vector<std::int64_t>{10, 40, 80}));
  EXPECT_EQ(t.power_limits("k", "d/n/o", 10), (std::vector<std::int64_t>{100, 200}));
  EXPECT_EQ(t.power_limits("k", "d/n/o", 80), std::vector<std::int64_t>{200});
  EXPECT_TRUE(t.workloads("x").empty());
  EXPECT_TRUE(t.power_limits("k", "d/n/o", 20).empty());
}

TEST(GpuPowerTableTest, LimitsAndBatchesBetweenMeasuredOnesAreInterpolatedByTheRules) {
  const GpuPowerTable t = table();
  // Along the limit at batch 10, halfway: the rate 1/200 -> 1/100 per s gives 1/133.3 s; the power 90 -> 170.
  auto l = t.figure("k", "d/n/o", 10, 150.0);
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_DOUBLE_EQ(l->time_per_epoch_s, 400.0 / 3.0);
  EXPECT_DOUBLE_EQ(l->average_power_w, 130.0);
  EXPECT_DOUBLE_EQ(l->energy_per_epoch_j, 130.0 * 400.0 / 3.0);
  EXPECT_EQ(l->source, GpuFigureSource::kInterpolated);
  // Along the batch at 100 W, batch 20: time linear in 1/batch, (1/20 - 1/10) / (1/40 - 1/10) = 2/3 of the way
  // from 200 to 100 s; power linear in log batch, log 2 / log 4 = 1/2 of the way from 90 to 100 W.
  auto b = t.figure("k", "d/n/o", 20, 100.0);
  ASSERT_TRUE(b.is_ok()) << b.status().message();
  EXPECT_DOUBLE_EQ(b->time_per_epoch_s, 400.0 / 3.0);
  EXPECT_DOUBLE_EQ(b->average_power_w, 95.0);
  // Both: batch 10 at 150 W is (133.3 s, 130 W), batch 40 at 150 W (66.7 s, 140 W); batch 20 between them.
  auto both = t.figure("k", "d/n/o", 20, 150.0);
  ASSERT_TRUE(both.is_ok()) << both.status().message();
  EXPECT_DOUBLE_EQ(both->time_per_epoch_s, 400.0 / 3.0 + 2.0 / 3.0 * (200.0 / 3.0 - 400.0 / 3.0));
  EXPECT_DOUBLE_EQ(both->average_power_w, 135.0);
  EXPECT_DOUBLE_EQ(both->energy_per_epoch_j, both->time_per_epoch_s * both->average_power_w);
  // Batch 60 at 200 W, measured at both neighbours: 2/3 of the way from 50 to 40 s; log(1.5)/log(2) from 180 W.
  auto b60 = t.figure("k", "d/n/o", 60, 200.0);
  ASSERT_TRUE(b60.is_ok()) << b60.status().message();
  EXPECT_DOUBLE_EQ(b60->time_per_epoch_s, 50.0 - 20.0 / 3.0);
  EXPECT_DOUBLE_EQ(b60->average_power_w, 180.0 + 10.0 * std::log(1.5) / std::log(2.0));
  // Other rules: everything linear.
  const InterpolationRule linear{InterpolationScale::kLinear, InterpolationScale::kLinear};
  const GpuPowerTable plain = table(GpuInterpolation{linear, linear, linear, linear});
  auto p = plain.figure("k", "d/n/o", 20, 150.0);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  // At 150 W: batch 10 (150 s, 130 W), batch 40 (75 s, 140 W); batch 20 a third of the way.
  EXPECT_DOUBLE_EQ(p->time_per_epoch_s, 125.0);
  EXPECT_DOUBLE_EQ(p->average_power_w, 130.0 + 10.0 / 3.0);
}

TEST(GpuPowerTableTest, PointsOutsideTheMeasuredRangesAreRefusedNamingTheRange) {
  const GpuPowerTable t = table();
  const auto message = [&](const std::string& kind, const std::string& workload, std::int64_t batch, double limit) {
    auto f = t.figure(kind, workload, batch, limit);
    EXPECT_FALSE(f.is_ok()) << kind << " " << workload << " " << batch << " " << limit;
    return f.is_ok() ? std::string() : f.status().message();
  };
  const std::string below = message("k", "d/n/o", 10, 99.0);
  EXPECT_NE(below.find("power limit 99 W"), std::string::npos) << below;
  EXPECT_NE(below.find("at batch 10 lies outside the measured limits (100, 200 W)"), std::string::npos) << below;
  EXPECT_NE(message("k", "d/n/o", 40, 200.5).find("power limit 200.5 W"), std::string::npos);
  // Batch 60 lies between 40 and 80, but 80 is measured at 200 W only.
  const std::string partial = message("k", "d/n/o", 60, 150.0);
  EXPECT_NE(partial.find("at batch 80 lies outside the measured limits (200 W)"), std::string::npos) << partial;
  const std::string small = message("k", "d/n/o", 5, 150.0);
  EXPECT_NE(small.find("batch 5 of workload 'd/n/o' on 'k' lies outside the measured batches (10, 40, 80)"),
            std::string::npos)
      << small;
  EXPECT_NE(message("k", "d/n/o", 81, 200.0).find("(10, 40, 80)"), std::string::npos);
  EXPECT_NE(message("k", "d/n/o", -1, 200.0).find("batch -1"), std::string::npos);
  EXPECT_NE(message("x", "d/n/o", 10, 150.0).find("measured kinds: k"), std::string::npos);
  EXPECT_NE(message("k", "d/n", 10, 150.0).find("workloads on 'k': d/n/o"), std::string::npos);
  EXPECT_NE(message("k", "d/n/o", 10, std::nan("")).find("expected a number > 0"), std::string::npos);
  EXPECT_NE(message("k", "d/n/o", 10, 1e300).find("outside the measured limits"), std::string::npos);
}

TEST(GpuPowerTableTest, HostileRowsAreRefusedWithFileLineAndField) {
  const std::string header =
      "kind,dataset,network,optimizer,batch,power_limit_w,time_per_epoch_s,average_power_w,energy_per_epoch_j\n";
  const std::string good = "k,d,n,o,10,100,200,90,18000\n";
  struct Case {
    std::string rows;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"k,d,n,o,10,100,nan,90,18000\n", "p.csv:2: time_per_epoch_s 'nan' is not valid; expected a number > 0"},
      {"k,d,n,o,10,100,200,-90,18000\n", "p.csv:2: average_power_w '-90' is not valid"},
      {"k,d,n,o,10,100,200,inf,18000\n", "p.csv:2: average_power_w 'inf'"},
      {"k,d,n,o,10,100,0,90,0\n", "p.csv:2: time_per_epoch_s '0'"},
      {"k,d,n,o,10,100,200,90,17999\n",
       "p.csv:2: energy_per_epoch_j '17999' is not valid; expected time_per_epoch_s x"},
      {"k,d,n,o,10.5,100,200,90,18000\n", "p.csv:2: batch '10.5' is not valid; expected a whole number >= 1"},
      {"k,d,n,o,0,100,200,90,18000\n", "p.csv:2: batch '0'"},
      {"k,d,n,o,10,-100,200,90,18000\n", "p.csv:2: power_limit_w '-100'"},
      {"k,d,n,o,10,100,200,90\n", "p.csv:2: row has 8 fields"},
      {",d,n,o,10,100,200,90,18000\n", "p.csv:2: kind '' is not valid"},
      {"k,d/x,n,o,10,100,200,90,18000\n", "p.csv:2: dataset 'd/x' is not valid; expected a name without '/'"},
      {good + "# a comment\n" + good,
       "p.csv:4: power_limit_w '100' is not valid; expected one row per kind, workload, batch and power limit (p.csv:2 "
       "has this one)"},
      {"", "no rows"},
      {"k,d,n,o,10,100,200,NaN,18000\n", "p.csv:2: average_power_w 'NaN' is not valid; expected a number > 0"},
      {"k,d,n,o,10,100,200,90,-18000\n", "p.csv:2: energy_per_epoch_j '-18000' is not valid"},
      {"k,d,n,o,10,100,200,90,18000,1\n", "p.csv:2: row has 10 fields; expected 9"},
      // Non-monotone limits: a limit that steps back within a batch, or a batch that steps back.
      {good + "k,d,n,o,10,50,300,45,13500\n",
       "p.csv:3: power_limit_w '50' is not valid; expected the rows of workload 'd/n/o' on 'k' in increasing batch, "
       "then increasing power limit (p.csv:2 has batch 10 at 100 W)"},
      {good + "k,d,n,o,40,100,100,100,10000\n" + "k,d,n,o,20,200,100,170,17000\n",
       "p.csv:4: batch '20' is not valid; expected the rows of workload 'd/n/o' on 'k' in increasing batch"},
  };
  for (const Case& c : cases) {
    auto r = parse_gpu_power_rows(header + c.rows, "p.csv");
    ASSERT_FALSE(r.is_ok()) << c.rows;
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos) << r.status().message();
  }
  // Missing columns: a header without one, and the full header over rows without one.
  for (const std::string missing : {"kind,dataset,network,batch\n",
                                    "kind,dataset,network,optimizer,batch,power_limit_w,time_per_epoch_s,"
                                    "average_power_w\n"}) {
    auto wrong = parse_gpu_power_rows("# a comment\n" + missing + good, "p.csv");
    ASSERT_FALSE(wrong.is_ok());
    EXPECT_NE(wrong.status().message().find("p.csv:2: header"), std::string::npos) << wrong.status().message();
  }
  // Rows built in code are checked by create() too.
  const GpuFigure f{200.0, 90.0, 18000.0, GpuFigureSource::kMeasured};
  auto twice = GpuPowerTable::create({{"k", "w", 10, 100, f}, {"k", "w", 10, 100, f}});
  ASSERT_FALSE(twice.is_ok());
  EXPECT_NE(twice.status().message().find("given twice"), std::string::npos) << twice.status().message();
  const GpuFigure nan_power{200.0, std::nan(""), 18000.0, GpuFigureSource::kMeasured};
  EXPECT_FALSE(GpuPowerTable::create({{"k", "w", 10, 100, nan_power}}).is_ok());
  const GpuFigure inf_energy{200.0, 90.0, HUGE_VAL, GpuFigureSource::kMeasured};
  EXPECT_FALSE(GpuPowerTable::create({{"k", "w", 10, 100, inf_energy}}).is_ok());
}

TEST(GpuPowerTableTest, RowsInOrderAreReadWhateverTheirPower) {
  const std::string header =
      "kind,dataset,network,optimizer,batch,power_limit_w,time_per_epoch_s,average_power_w,energy_per_epoch_j\n";
  // Power that falls as the limit rises (measurement noise), a power above its limit, and another workload's rows
  // between one workload's: all read.
  auto rows = parse_gpu_power_rows(header +
                                       "k,d,n,o,10,100,200,90,18000\n"
                                       "k,d,n,o2,5,100,100,110,11000\n"
                                       "k,d,n,o,10,200,100,80,8000\n"
                                       "k,d,n,o,40,100,100,100,10000\n",
                                   "p.csv");
  ASSERT_TRUE(rows.is_ok()) << rows.status().message();
  EXPECT_EQ(rows->size(), 4u);
}

TEST(GpuPowerTableTest, AFileOutOfOrderIsRefusedNamingItsPathAndLine) {
  const std::string path = ::testing::TempDir() + "/gpu-power-out-of-order.csv";
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(
      "kind,dataset,network,optimizer,batch,power_limit_w,time_per_epoch_s,average_power_w,energy_per_epoch_j\n"
      "k,d,n,o,10,200,100,170,17000\n"
      "k,d,n,o,10,100,200,90,18000\n",
      f);
  std::fclose(f);
  auto t = read_gpu_power_table(path);
  std::remove(path.c_str());
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find(path + ":3: power_limit_w '100' is not valid"), std::string::npos)
      << t.status().message();
}

const std::string kShipped = std::string(OMNILEARN_DEVICES_DIR) + "/zeus-power.csv";

TEST(GpuPowerTableTest, TheShippedZeusTableReadsBackTheRawFiles) {
  auto t = read_gpu_power_table(kShipped);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->kinds(), (std::vector<std::string>{"a40", "p100", "rtx6000", "v100"}));
  EXPECT_EQ(t->workloads("v100").size(), 7u);  // ShuffleNet-v2 on CIFAR-100 with Adadelta and with Adam
  EXPECT_EQ(t->batches("v100", "imagenet/resnet50/adadelta"),
            (std::vector<std::int64_t>{8, 16, 32, 64, 128, 192, 256, 360}));
  // summary_power_v100.csv: cifar100,shufflenetv2,1024,adadelta,100,11.276666666666666,86.86460850784009.
  auto f = t->figure("v100", "cifar100/shufflenetv2/adadelta", 1024, 100.0);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(f->time_per_epoch_s, 11.276666666666666);
  EXPECT_EQ(f->average_power_w, 86.86460850784009);
  EXPECT_EQ(f->source, GpuFigureSource::kMeasured);
  // The RTX 6000 measured NCF at batch 4 only at 250 and 260 W.
  EXPECT_EQ(t->power_limits("rtx6000", "movielens-1m/ncf/adam", 4), (std::vector<std::int64_t>{250, 260}));
  EXPECT_FALSE(t->figure("rtx6000", "movielens-1m/ncf/adam", 4, 200.0).is_ok());
}

// ---- Accuracy as a model: leave one out over the shipped table ----

// |predicted / measured - 1| of the rows predicted, and the rows that could not be (outside the rest's range).
struct Errors {
  std::vector<double> time;
  std::vector<double> power;
  int edge = 0;
  void add(const Errors& o) {
    time.insert(time.end(), o.time.begin(), o.time.end());
    power.insert(power.end(), o.power.begin(), o.power.end());
    edge += o.edge;
  }
};

// The nearest-rank q-quantile (the smallest value with at least q of the values at or below it).
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

std::string summary(const std::vector<double>& v) {
  char line[96];
  std::snprintf(line, sizeof line, "n %4zu  median %5.2f%%  p90 %5.2f%%  worst %6.2f%%", v.size(),
                100 * quantile(v, 0.5), 100 * quantile(v, 0.9),
                v.empty() ? 0.0 : 100 * *std::max_element(v.begin(), v.end()));
  return line;
}

using Group = std::vector<GpuPowerRow>;  // the rows of one (kind, workload)

std::map<std::string, std::vector<Group>> groups_by_kind(const std::vector<GpuPowerRow>& rows) {
  std::map<std::pair<std::string, std::string>, Group> by_key;
  for (const GpuPowerRow& r : rows) by_key[{r.kind, r.workload}].push_back(r);
  std::map<std::string, std::vector<Group>> out;
  for (auto& [key, group] : by_key) out[key.first].push_back(std::move(group));
  return out;
}

// Predicts each row `held` names from a table of the group's other rows: `held(r, s)` says whether row s is left out
// when predicting row r. A refusal for range (invalid_argument) counts as an edge row; anything else fails the test.
template <class Held>
Errors predict(const Group& group, const GpuInterpolation& interpolation, Held held) {
  Errors e;
  for (const GpuPowerRow& r : group) {
    std::vector<GpuPowerRow> rest;
    for (const GpuPowerRow& s : group) {
      if (!held(r, s)) rest.push_back(s);
    }
    auto t = GpuPowerTable::create(std::move(rest), interpolation);
    EXPECT_TRUE(t.is_ok()) << t.status().message();
    if (!t.is_ok()) continue;
    auto f = t->figure(r.kind, r.workload, r.batch, static_cast<double>(r.power_limit_w));
    if (!f.is_ok()) {
      EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument) << f.status().message();
      ++e.edge;
      continue;
    }
    EXPECT_EQ(f->source, GpuFigureSource::kInterpolated);
    e.time.push_back(std::abs(f->time_per_epoch_s / r.figure.time_per_epoch_s - 1.0));
    e.power.push_back(std::abs(f->average_power_w / r.figure.average_power_w - 1.0));
  }
  return e;
}

// One row left out (its batch keeps its other limits: this tests the limit axis), or a whole batch left out (every
// row at the batch predicted from the neighbouring batches: the batch axis, over twice the measured spacing).
bool same_row(const GpuPowerRow& r, const GpuPowerRow& s) {
  return r.batch == s.batch && r.power_limit_w == s.power_limit_w;
}
bool same_batch(const GpuPowerRow& r, const GpuPowerRow& s) { return r.batch == s.batch; }

using Heldout = bool (*)(const GpuPowerRow&, const GpuPowerRow&);

// Per kind and overall, printed under `title`; returns the overall errors.
Errors leave_out(const std::map<std::string, std::vector<Group>>& kinds, const GpuInterpolation& interpolation,
                 Heldout held, const std::string& title, bool per_kind) {
  Errors all;
  std::printf("%s\n", title.c_str());
  for (const auto& [kind, groups] : kinds) {
    Errors k;
    for (const Group& g : groups) k.add(predict(g, interpolation, held));
    if (per_kind) {
      std::printf("  %-8s time  %s\n  %-8s power %s  edge %d\n", kind.c_str(), summary(k.time).c_str(), "",
                  summary(k.power).c_str(), k.edge);
    }
    all.add(k);
  }
  std::printf("  %-8s time  %s\n  %-8s power %s  edge %d\n", "all", summary(all.time).c_str(), "",
              summary(all.power).c_str(), all.edge);
  return all;
}

void expect_goal(const Errors& e, const std::string& what) {
  EXPECT_LE(quantile(e.time, 0.5), 0.03) << what << " time median";
  EXPECT_LE(quantile(e.time, 0.9), 0.10) << what << " time p90";
  EXPECT_LE(quantile(e.power, 0.5), 0.03) << what << " power median";
  EXPECT_LE(quantile(e.power, 0.9), 0.10) << what << " power p90";
}

TEST(GpuPowerTableAccuracy, LeaveOneOutMeetsTheGoalOverall) {
  auto text = read_text_file(kShipped);
  ASSERT_TRUE(text.is_ok()) << text.status().message();
  auto rows = parse_gpu_power_rows(*text, kShipped);
  ASSERT_TRUE(rows.is_ok()) << rows.status().message();
  const auto kinds = groups_by_kind(*rows);
  const GpuInterpolation chosen;
  // The goal: median <= 3% and 90th percentile <= 10% for power and for time, over every kind and workload.
  expect_goal(leave_out(kinds, chosen, same_row, "one row out (limit axis), chosen rules:", true), "one row out");
  expect_goal(leave_out(kinds, chosen, same_batch, "one batch out (batch axis), chosen rules:", true), "one batch out");

  // The alternatives tried, one rule changed at a time (overall only).
  using S = InterpolationScale;
  struct Alternative {
    const char* name;
    InterpolationRule GpuInterpolation::*rule;
    InterpolationRule value;
    Heldout held;
  };
  const Alternative alternatives[] = {
      {"time linear in limit", &GpuInterpolation::time_in_limit, {S::kLinear, S::kLinear}, same_row},
      {"time linear in 1/limit", &GpuInterpolation::time_in_limit, {S::kLinear, S::kReciprocal}, same_row},
      {"log time linear in log limit", &GpuInterpolation::time_in_limit, {S::kLog, S::kLog}, same_row},
      {"power linear in 1/limit", &GpuInterpolation::power_in_limit, {S::kLinear, S::kReciprocal}, same_row},
      {"time linear in batch", &GpuInterpolation::time_in_batch, {S::kLinear, S::kLinear}, same_batch},
      {"time linear in log batch", &GpuInterpolation::time_in_batch, {S::kLinear, S::kLog}, same_batch},
      {"rate linear in batch", &GpuInterpolation::time_in_batch, {S::kReciprocal, S::kLinear}, same_batch},
      {"rate linear in log batch", &GpuInterpolation::time_in_batch, {S::kReciprocal, S::kLog}, same_batch},
      {"power linear in batch", &GpuInterpolation::power_in_batch, {S::kLinear, S::kLinear}, same_batch},
      {"power linear in 1/batch", &GpuInterpolation::power_in_batch, {S::kLinear, S::kReciprocal}, same_batch},
  };
  for (const Alternative& a : alternatives) {
    GpuInterpolation other;
    other.*a.rule = a.value;
    leave_out(kinds, other, a.held,
              std::string(a.held == same_row ? "one row out" : "one batch out") + ", " + a.name + ":", false);
  }
}

}  // namespace
}  // namespace omnilearn::traces
