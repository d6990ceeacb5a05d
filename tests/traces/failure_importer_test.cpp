// The occupancy and failure-log importers on the real raw files, checked against an independent re-read.
#include <gtest/gtest.h>

#include "omnilearn/traces/trace_importer.h"
#include "omnilearn/traces/trace_statistics.h"
#include "raw_trace_test_util.h"

namespace omnilearn::traces {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace): test helpers

// Checks that at every row round(nodes * busy/total) nodes are down and that nodes are sticky.
void check_occupancy(const AvailabilityTrace& t, const std::string& path, const std::string& busy_col,
                     const std::string& total_col, std::size_t nodes) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const auto header = split(line, ',');
  const auto col = [&](const std::string& n) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), n) - header.begin());
  };
  const std::size_t bc = col(busy_col);
  const std::size_t tc = col(total_col);
  double base = -1.0;
  long prev = -1;
  long moves = 0;
  while (std::getline(in, line)) {
    const auto f = split(line, ',');
    const double ts = iso_seconds(f[0]);
    if (base < 0) base = ts;
    const long want = std::lround(std::min(1.0, std::stod(f[bc]) / std::stod(f[tc])) * static_cast<double>(nodes));
    long down = 0;
    for (WorkerId w = 0; w < t.worker_count(); ++w) down += t.fraction_at(w, ts - base) == 0.0 ? 1 : 0;
    ASSERT_EQ(down, want) << "at " << f[0];
    moves += prev < 0 ? want : std::labs(want - prev);
    prev = want;
  }
  std::size_t changes = 0;
  for (const WorkerStatistics& s : compute_statistics(t).workers) changes += s.change_count;
  std::size_t initially_down = 0;
  for (WorkerId w = 0; w < t.worker_count(); ++w) initially_down += t.fraction_at(w, 0.0) == 0.0 ? 1 : 0;
  EXPECT_EQ(static_cast<long>(changes + initially_down), moves);  // sticky: no node changes more than needed
}

TEST(TraceImporterTest, PhillyStickyOccupancy) {
  RAW_OR_SKIP(path, "philly-node-sequence/philly_node_sequence.csv");
  auto t = run(ImportFormat::kPhilly, path, 20);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  ASSERT_EQ(t->worker_count(), 20u);
  check_occupancy(*t, path, "active", "total", 20);
}

TEST(TraceImporterTest, HeliosStickyOccupancy) {
  RAW_OR_SKIP(path, "helios-earth-vc/vc6YE/cluster_sequence_vc.csv");
  auto t = run(ImportFormat::kHelios, path, 26);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  check_occupancy(*t, path, "running_gpu_num", "total_gpu_num", 26);
  double mean = 0.0;
  for (const WorkerStatistics& s : compute_statistics(*t).workers) mean += s.mean_fraction / 26.0;
  EXPECT_NEAR(mean, 0.10, 0.03);  // SOURCE.md: gpu_utilization mean 0.90
}

TEST(TraceImporterTest, LanlDownTimeIsTheUnionOfRepairs) {
  RAW_OR_SKIP(path, "lanl-failure-1996-2005/LA-UR-05-7318-failure-data-1996-2005.csv");
  auto t = run(ImportFormat::kLanl, path, 0);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  // Independent read: System is column 0 and nodenumz column 6 (before any quoted field); Prob Started and
  // Prob Fixed (columns 16, 17) also precede the quoted cause fields.
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::map<int, std::vector<std::pair<double, double>>> by_node;
  double base = 1e300;
  while (std::getline(in, line)) {
    const auto f = split(line, ',');
    if (f[0] != "20") continue;
    int mo = 0, d = 0, y = 0, h = 0, mi = 0;
    ASSERT_EQ(std::sscanf(f[16].c_str(), "%d/%d/%d %d:%d", &mo, &d, &y, &h, &mi), 5) << line;
    std::tm tm{};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    const double start = static_cast<double>(timegm(&tm));
    ASSERT_EQ(std::sscanf(f[17].c_str(), "%d/%d/%d %d:%d", &mo, &d, &y, &h, &mi), 5) << line;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    const double fixed = static_cast<double>(timegm(&tm));
    base = std::min(base, start);
    by_node[std::stoi(f[6])].emplace_back(start, fixed);
  }
  EXPECT_EQ(t->worker_count(), by_node.size());
  const TraceStatistics st = compute_statistics(*t);
  std::size_t checked = 0;
  for (auto& [node, iv] : by_node) {
    std::sort(iv.begin(), iv.end());
    double down = 0.0, cur_a = -1, cur_b = -1;
    for (const auto& [a, b] : iv) {
      if (a > cur_b) {
        down += cur_b - cur_a;
        cur_a = a;
        cur_b = b;
      } else {
        cur_b = std::max(cur_b, b);
      }
    }
    down += cur_b - cur_a;
    const auto w = t->find_worker(std::string("node_").append(std::to_string(node)));
    ASSERT_TRUE(w.has_value()) << node;
    EXPECT_NEAR(st.workers[*w].down_s, down, 1e-6) << "node_" << node;
    ++checked;
  }
  EXPECT_GT(checked, 300u);
}

TEST(TraceImporterTest, TitanDownFromFailureToNextInsert) {
  RAW_OR_SKIP(path, "titan-gpu-failures/gc_full.csv");
  auto t = run(ImportFormat::kTitan, path, 5, NodeSelection::kMostActive);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  ASSERT_EQ(t->worker_count(), 5u);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::map<std::string, std::vector<std::vector<std::string>>> by_loc;
  std::map<std::string, int> failures;
  while (std::getline(in, line)) {
    auto f = split(line, ',');
    if (!f[6].empty()) ++failures[f[1]];
    by_loc[f[1]].push_back(std::move(f));
  }
  std::vector<int> counts;
  for (const auto& [loc, n] : failures) counts.push_back(n);
  std::sort(counts.rbegin(), counts.rend());
  const int fifth = counts[4];
  const TraceStatistics st = compute_statistics(*t);
  for (WorkerId w = 0; w < t->worker_count(); ++w) {
    const std::string& loc = t->worker_name(w);
    EXPECT_GE(failures[loc], fifth) << loc;  // among the 5 most failing slots
    auto rows = by_loc[loc];
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a[2] < b[2]; });  // ISO text
    double down = 0.0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i][6].empty()) continue;
      const double until = i + 1 < rows.size() ? iso_seconds(rows[i + 1][2]) : -1.0;
      if (until > iso_seconds(rows[i][3])) down += until - iso_seconds(rows[i][3]);
    }
    if (rows.back()[6].empty()) {
      EXPECT_NEAR(st.workers[w].down_s, down, 1e-3) << loc;
    }
  }
}

TEST(TraceImporterTest, Alibaba2017RepairTimeAfterEachError) {
  RAW_OR_SKIP(path, "alibaba-2017-server-event/server_event.csv");
  ImportOptions o;
  o.format = ImportFormat::kAlibaba2017;
  o.input = path;
  o.max_workers = 0;
  o.repair_time_s = 300.0;
  auto t = import_trace(o);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->worker_count(), 1313u);
  std::ifstream in(path);
  std::string line;
  int errors_1075 = 0;
  while (std::getline(in, line)) {
    const auto f = split(line, ',');
    if (f[1] == "1075" && f[2] == "softerror") ++errors_1075;
  }
  EXPECT_EQ(errors_1075, 12);
  const TraceStatistics st = compute_statistics(*t);
  const WorkerStatistics& m = st.workers[*t->find_worker("machine_1075")];
  EXPECT_EQ(m.down_s, errors_1075 * 300.0);  // ~7300 s apart: repairs never overlap
  EXPECT_EQ(m.change_count, 2u * static_cast<std::size_t>(errors_1075));
  std::size_t failing = 0;
  for (const WorkerStatistics& s : st.workers) failing += s.down_s > 0 ? 1 : 0;
  EXPECT_EQ(failing, 7u);  // SOURCE.md: errors on 7 machines
}

}  // namespace
}  // namespace omnilearn::traces
