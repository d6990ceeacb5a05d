#include "omnilearn/traces/zeus_train.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"
#include "table_lines.h"

namespace omnilearn::traces {
namespace {

using detail::bad;
using detail::for_each_row;
using detail::whole;

bool before(const ZeusRun& a, const ZeusRun& b) {
  return a.learning_rate < b.learning_rate || (a.learning_rate == b.learning_rate && a.seed < b.seed);
}

bool same_run(const ZeusRun& a, const ZeusRun& b) { return a.learning_rate == b.learning_rate && a.seed == b.seed; }

}  // namespace

Result<std::vector<ZeusTrainRow>> parse_zeus_train_rows(std::string_view text, std::string_view source) {
  std::vector<ZeusTrainRow> rows;
  // (workload, batch, learning rate, seed, target) -> "source:line"
  std::map<std::tuple<std::string, std::int64_t, double, std::int64_t, double>, std::string> seen;
  const Status st = for_each_row(text, source, kZeusTrainHeader, [&](const auto& f, const std::string& where) {
    // dataset, network (columns 0, 1) and optimizer (3) make the workload's name.
    constexpr std::size_t kName[] = {0, 1, 3};
    constexpr std::string_view kNames[] = {"dataset", "network", "optimizer"};
    for (std::size_t i = 0; i < 3; ++i) {
      const std::string& v = f[kName[i]];
      if (v.empty() || v.find('/') != std::string::npos) return bad(where, kNames[i], v, "a name without '/'");
    }
    ZeusTrainRow r;
    r.workload = f[0] + "/" + f[1] + "/" + f[3];
    auto batch = whole(where, "batch", f[2], 1);
    if (!batch.is_ok()) return batch.status();
    r.batch = *batch;
    const std::optional<double> rate = parse_double(f[4]);
    if (!rate || !(*rate > 0.0)) return bad(where, "learning_rate", f[4], "a number > 0");
    r.run.learning_rate = *rate;
    auto seed = whole(where, "seed", f[5], 0);
    if (!seed.is_ok()) return seed.status();
    r.run.seed = *seed;
    const std::optional<double> target = parse_double(f[6]);
    if (!target) return bad(where, "target_metric", f[6], "a finite number");
    r.target_metric = *target;
    if (!f[7].empty()) {
      auto epoch = whole(where, "target_epoch", f[7], 1);
      if (!epoch.is_ok()) return epoch.status();
      r.run.target_epoch = *epoch;
    }
    const auto [it, first] =
        seen.emplace(std::tuple{r.workload, r.batch, r.run.learning_rate, r.run.seed, r.target_metric}, where);
    if (!first) {
      return bad(where, "target_metric", f[6],
                 "one row per workload, batch, learning rate, seed and target (" + it->second + " has this one)");
    }
    rows.push_back(std::move(r));
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return rows;
}

Result<ZeusTrainTrace> ZeusTrainTrace::create(std::vector<ZeusTrainRow> rows) {
  ZeusTrainTrace t;
  for (ZeusTrainRow& r : rows) {
    const ZeusRun& run = r.run;
    if (r.workload.empty() || r.batch < 1 || !std::isfinite(run.learning_rate) || !(run.learning_rate > 0.0) ||
        run.seed < 0 || !std::isfinite(r.target_metric) || (run.target_epoch && *run.target_epoch < 1)) {
      return Status::invalid_argument("training run of workload '" + r.workload + "' at batch " +
                                      std::to_string(r.batch) + ", seed " + std::to_string(run.seed) +
                                      ": expected a workload, batch >= 1, a finite learning rate > 0, seed >= 0, a "
                                      "finite target and target_epoch >= 1 where given");
    }
    std::vector<ZeusRun>& runs = t.runs_[{r.workload, r.target_metric, r.batch}];
    const auto at = std::lower_bound(runs.begin(), runs.end(), run, before);
    if (at != runs.end() && same_run(*at, run)) {
      return Status::invalid_argument("training run of workload '" + r.workload + "' at batch " +
                                      std::to_string(r.batch) + ", learning rate " + std::to_string(run.learning_rate) +
                                      ", seed " + std::to_string(run.seed) + " toward target " +
                                      std::to_string(r.target_metric) + " is given twice; expected one row each");
    }
    runs.insert(at, run);
  }
  return t;
}

std::vector<std::string> ZeusTrainTrace::workloads() const {
  std::vector<std::string> out;
  for (const auto& [key, runs] : runs_) {
    if (out.empty() || out.back() != std::get<0>(key)) out.push_back(std::get<0>(key));  // ordered by workload first
  }
  return out;
}

std::vector<double> ZeusTrainTrace::targets(const std::string& workload) const {
  std::vector<double> out;
  for (const auto& [key, runs] : runs_) {
    if (std::get<0>(key) == workload && (out.empty() || out.back() != std::get<1>(key)))
      out.push_back(std::get<1>(key));
  }
  return out;
}

std::vector<std::int64_t> ZeusTrainTrace::batches(const std::string& workload, double target_metric) const {
  std::vector<std::int64_t> out;
  for (const auto& [key, runs] : runs_) {
    if (std::get<0>(key) == workload && std::get<1>(key) == target_metric) out.push_back(std::get<2>(key));
  }
  return out;
}

std::vector<ZeusRun> ZeusTrainTrace::runs(const std::string& workload, double target_metric, std::int64_t batch) const {
  const auto it = runs_.find({workload, target_metric, batch});
  return it == runs_.end() ? std::vector<ZeusRun>{} : it->second;
}

Result<ZeusTrainTrace> read_zeus_train_trace(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.is_ok()) return text.status();
  auto rows = parse_zeus_train_rows(*text, path);
  if (!rows.is_ok()) return rows.status();
  auto trace = ZeusTrainTrace::create(std::move(rows).value());
  if (!trace.is_ok()) return trace.status().with_context(path);
  return trace;
}

}  // namespace omnilearn::traces
