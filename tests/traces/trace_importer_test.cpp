// Each importer runs on the real raw file in ../shared/traces-raw; figures are checked against a simple,
// independent re-read of the same file in the test.
#include "omnilearn/traces/trace_importer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "omnilearn/traces/trace_file.h"
#include "omnilearn/traces/trace_statistics.h"
#include "raw_trace_test_util.h"

namespace omnilearn::traces {
namespace {

using namespace test;  // NOLINT(google-build-using-namespace): test helpers
namespace fs = std::filesystem;

TEST(TraceImporterTest, FormatNamesRoundTrip) {
  for (ImportFormat f : all_import_formats()) EXPECT_EQ(parse_import_format(import_format_name(f)), f);
  EXPECT_FALSE(parse_import_format("nope").has_value());
}

TEST(TraceImporterTest, AzureV1MeanMatchesAnIndependentColumnRead) {
  RAW_OR_SKIP(path, "azure-v1-100vms/azure_v1_avg_cpu_100vms_5min.csv");
  auto t = run(ImportFormat::kAzureV1, path, 0);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  ASSERT_EQ(t->worker_count(), 100u);
  EXPECT_EQ(t->duration(), 8004 * 300.0);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const std::size_t col = 7;
  const std::string name = split(line, ',')[col];
  double sum = 0.0;
  int rows = 0;
  while (std::getline(in, line)) {
    sum += avail(std::stod(split(line, ',')[col]));
    ++rows;
  }
  ASSERT_EQ(rows, 8004);
  const auto w = t->find_worker(name);
  ASSERT_TRUE(w.has_value()) << name;
  EXPECT_NEAR(compute_statistics(*t).workers[*w].mean_fraction, sum / rows, 1e-9);

  // The 3 most active VMs are the 3 with the lowest mean availability in the full import.
  std::vector<std::pair<double, std::string>> by_mean;
  for (const WorkerStatistics& s : compute_statistics(*t).workers) by_mean.emplace_back(s.mean_fraction, s.name);
  std::sort(by_mean.begin(), by_mean.end());
  auto top = run(ImportFormat::kAzureV1, path, 3, NodeSelection::kMostActive);
  ASSERT_TRUE(top.is_ok());
  for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(top->find_worker(by_mean[i].second).has_value()) << i;
}

TEST(TraceImporterTest, BitbrainsEverySampleAndClampAbove100) {
  RAW_OR_SKIP(dir, "bitbrains-rnd/2013-7");
  auto t = run(ImportFormat::kBitbrains, dir, 0);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  ASSERT_EQ(t->worker_count(), 6u);
  EXPECT_EQ(t->worker_name(0), "vm_41");  // numeric file order
  double base = 1e300;
  std::map<std::string, std::vector<std::pair<double, double>>> rows;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path());
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      const auto f = split(line, ';');
      const double ts = std::stod(f[0]);
      base = std::min(base, ts);
      rows[std::string("vm_").append(e.path().stem().string())].emplace_back(ts, std::stod(f[4]));
    }
  }
  double max_pct = 0.0;
  for (const auto& [name, samples] : rows) {
    const auto w = t->find_worker(name);
    ASSERT_TRUE(w.has_value()) << name;
    for (const auto& [ts, pct] : samples) {
      ASSERT_EQ(t->fraction_at(*w, ts - base), avail(pct)) << name << " at " << ts;
      max_pct = std::max(max_pct, pct);
    }
  }
  EXPECT_GT(max_pct, 100.0);  // the pitfall SOURCE.md names is really in the data
  EXPECT_EQ(compute_statistics(*t).workers[*t->find_worker("vm_407")].min_fraction, 0.0);
}

TEST(TraceImporterTest, Alibaba2018IsOneEnvelopeOnEveryNode) {
  RAW_OR_SKIP(path, "alibaba-2018-cluster-avg/machine_usage_days_1_to_8_grouped_300_seconds.csv");
  auto t = run(ImportFormat::kAlibaba2018, path, 4);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  ASSERT_EQ(t->worker_count(), 4u);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  double sum = 0.0;
  int n = 0;
  while (std::getline(in, line)) {
    sum += avail(std::stod(split(line, ',')[0]));
    ++n;
  }
  EXPECT_EQ(n, 2243);
  EXPECT_EQ(t->duration(), n * 300.0);
  const TraceStatistics st = compute_statistics(*t);
  EXPECT_NEAR(st.workers[3].mean_fraction, sum / n, 1e-9);
  EXPECT_NEAR(st.workers[0].mean_fraction, 1.0 - 0.402, 0.005);  // SOURCE.md: mean CPU 40.2 %
  EXPECT_EQ(st.max_heterogeneity, 1.0);
}

TEST(TraceImporterTest, AlibabaGenAiEveryPodSample) {
  RAW_OR_SKIP(path, "alibaba-genai-2026-gpu-util/pod_gpu_duty_cycle_anon.subset16.csv");
  auto t = run(ImportFormat::kAlibabaGenAI, path, 0);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  ASSERT_EQ(t->worker_count(), 16u);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::vector<std::string>> rows;
  double base = 1e300;
  while (std::getline(in, line)) {
    rows.push_back(split(line, ','));
    base = std::min(base, std::stod(rows.back()[1]));
  }
  ASSERT_EQ(rows.size(), 23056u);
  for (const auto& r : rows) {
    const auto w = t->find_worker(std::string("pod_").append(r[2].substr(0, 8)));
    ASSERT_TRUE(w.has_value()) << r[2];
    ASSERT_EQ(t->fraction_at(*w, std::stod(r[1]) - base), avail(std::stod(r[0])));
  }
  EXPECT_NEAR(t->duration(), 1441 * 57.0, 1.0);
}

TEST(TraceImporterTest, AzureNoiseIsValueOverVmMedianClippedTo1) {
  RAW_OR_SKIP(path, "azure-vm-noise-2024/sysbench_cpu_long_westus2_B8ms_events_per_s.csv");
  auto t = run(ImportFormat::kAzureNoise2024, path, 0);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  ASSERT_EQ(t->worker_count(), 3u);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::map<std::string, std::vector<std::pair<double, double>>> by_vm;
  double base = 1e300;
  while (std::getline(in, line)) {
    const auto f = split(line, ',');
    const double ts = iso_seconds(f[2]);
    base = std::min(base, ts);
    by_vm[std::string("vm_").append(f[3])].emplace_back(ts, std::stod(f[0]));
  }
  double min_factor = 1.0;
  for (auto& [name, rows] : by_vm) {
    std::vector<double> v;
    for (const auto& r : rows) v.push_back(r.second);
    std::sort(v.begin(), v.end());
    const double median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    const auto w = t->find_worker(name);
    ASSERT_TRUE(w.has_value());
    std::sort(rows.begin(), rows.end());
    for (std::size_t i = 0; i < rows.size(); i += 7) {  // sampled; equal timestamps would make the last win
      if (i + 1 < rows.size() && rows[i + 1].first - rows[i].first < 0.01) continue;
      const double want = std::min(1.0, rows[i].second / median);
      ASSERT_NEAR(t->fraction_at(*w, std::round((rows[i].first - base) * 1e3) / 1e3), want, 1e-5) << name;
    }
    min_factor = std::min(min_factor, v.front() / median);
  }
  EXPECT_NEAR(min_factor, 0.85, 0.01);  // SOURCE.md: B8ms min 0.85
  double lo = 1.0;
  for (const WorkerStatistics& s : compute_statistics(*t).workers) lo = std::min(lo, s.min_fraction);
  EXPECT_NEAR(lo, min_factor, 1e-5);
}

TEST(TraceImporterTest, WrongFormatNamesTheFirstBadLine) {
  RAW_OR_SKIP(titan, "titan-gpu-failures/gc_full.csv");
  RAW_OR_SKIP(lanl, "lanl-failure-1996-2005/LA-UR-05-7318-failure-data-1996-2005.csv");
  struct Case {
    ImportFormat format;
    std::string input;
    std::string prefix;
  };
  const std::vector<Case> cases{
      {ImportFormat::kAzureV1, titan, titan + ":1: header starts with 'SN'; expected 'time_s,vm_<id>"},
      {ImportFormat::kBitbrains, titan, titan + ":1: header starts with"},
      {ImportFormat::kAlibaba2018, titan, titan + ":1: header has no 'cpu_util_percent' column"},
      {ImportFormat::kAlibabaGenAI, titan, titan + ":1: header has no 'value' column"},
      {ImportFormat::kPhilly, titan, titan + ":1: header 'SN,location"},
      {ImportFormat::kHelios, titan, titan + ":1: header 'SN,location"},
      {ImportFormat::kAzureNoise2024, titan, titan + ":1: header has no 'value' column"},
      {ImportFormat::kLanl, titan, titan + ":1: header 'SN,location"},
      {ImportFormat::kTitan, lanl, lanl + ":1: header 'System,machine type"},
      {ImportFormat::kAlibaba2017, titan, titan + ":1: timestamp 'SN' is not valid; expected seconds"},
  };
  for (const Case& c : cases) {
    auto t = run(c.format, c.input, 4);
    ASSERT_FALSE(t.is_ok()) << import_format_name(c.format);
    EXPECT_EQ(t.status().message().rfind(c.prefix, 0), 0u) << t.status().message();
  }
}

TEST(TraceImporterTest, BadRowNamesItsLine) {
  const fs::path p = fs::temp_directory_path() / "omnilearn_importer_bad.csv";
  { std::ofstream(p) << "time_s,vm_1,vm_2\n0,10,20\n300,10,abc\n"; }
  auto t = run(ImportFormat::kAzureV1, p.string(), 0);
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.status().message(),
            p.string() + ":3: column vm_2 value 'abc' is not a number; expected CPU %");
  EXPECT_EQ(run(ImportFormat::kAzureV1, "/no/such/file.csv", 0).status().code(), StatusCode::kIoError);
  fs::remove(p);
}

// RFC 4180 in every importer: a quoted header or field may span lines (counted for the next line's errors), and a
// quote never closed names the line where its record began.
TEST(TraceImporterTest, QuotedLineBreaksAreReadAndAnOpenQuoteNamesItsLine) {
  const fs::path p = fs::temp_directory_path() / "omnilearn_importer_quoted.csv";
  { std::ofstream(p) << "time_s,vm_1,\"vm\n2\"\r\n0,10,20\n300,\"10\",\"20\n\"\n600,10,abc\n"; }
  auto t = run(ImportFormat::kAzureV1, p.string(), 0);
  ASSERT_FALSE(t.is_ok());  // the header spans lines 1-2 and the second row lines 4-5: the bad row is line 6
  EXPECT_EQ(t.status().message(), p.string() + ":6: column vm\n2 value 'abc' is not a number; expected CPU %");
  { std::ofstream(p) << "time_s,vm_1\n0,10\n300,\"10\n600,10\n"; }
  auto open = run(ImportFormat::kAzureV1, p.string(), 0);
  ASSERT_FALSE(open.is_ok());
  EXPECT_EQ(open.status().message().rfind(p.string() + ":3: a quoted field is never closed", 0), 0u)
      << open.status().message();
  fs::remove(p);
}

TEST(TraceImporterTest, ShippedTracesParseAndStayUnder1MB) {
  const fs::path dir(OMNILEARN_TRACES_DATA);
  std::uintmax_t total = 0;
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".csv") continue;
    total += e.file_size();
    ++files;
    auto t = read_trace_file(e.path().string());
    EXPECT_TRUE(t.is_ok()) << t.status().message();
  }
  EXPECT_GE(files, 4u);
  EXPECT_LT(total, 1024u * 1024u);
}

}  // namespace
}  // namespace omnilearn::traces
