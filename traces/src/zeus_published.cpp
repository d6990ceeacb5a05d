#include "omnilearn/traces/zeus_published.h"

#include <optional>
#include <utility>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"
#include "table_lines.h"

namespace omnilearn::traces {
namespace {

using detail::bad;
using detail::for_each_row;
using detail::whole;

// `value` as a finite number below 100 (a saving in percent; negative: a loss), or an error naming the field.
Result<double> saving(const std::string& where, std::string_view field, const std::string& value) {
  const std::optional<double> v = parse_double(value);
  if (!v || !(*v < 100.0)) return bad(where, field, value, "a number below 100 (percent)");
  return *v;
}

}  // namespace

Result<std::vector<ZeusPublishedSaving>> parse_zeus_published(std::string_view text, std::string_view source) {
  std::vector<ZeusPublishedSaving> rows;
  const Status st = for_each_row(text, source, kZeusPublishedHeader, [&](const auto& f, const std::string& where) {
    constexpr std::string_view kNames[] = {"kind", "dataset", "network", "optimizer"};
    for (std::size_t i = 0; i < 4; ++i) {
      if (f[i].empty() || f[i].find('/') != std::string::npos) return bad(where, kNames[i], f[i], "a name without '/'");
    }
    ZeusPublishedSaving r;
    r.kind = f[0];
    r.job.workload = f[1] + "/" + f[2] + "/" + f[3];
    const std::optional<double> target = parse_double(f[4]);
    if (!target) return bad(where, "target_metric", f[4], "a finite number");
    r.job.target_metric = *target;
    auto epochs = whole(where, "max_epochs", f[5], 1);
    if (!epochs.is_ok()) return epochs.status();
    r.job.max_epochs = *epochs;
    auto batch = whole(where, "default_batch", f[6], 1);
    if (!batch.is_ok()) return batch.status();
    r.job.default_batch = *batch;
    constexpr std::string_view kSavings[] = {"batch_saving_pct", "limit_saving_pct", "both_saving_pct"};
    double* const into[] = {&r.batch_saving_pct, &r.limit_saving_pct, &r.both_saving_pct};
    for (std::size_t i = 0; i < 3; ++i) {
      auto s = saving(where, kSavings[i], f[7 + i]);
      if (!s.is_ok()) return s.status();
      *into[i] = *s;
    }
    r.source = f[10];
    if (r.source.empty()) return bad(where, "source", f[10], "the figure or file the savings are from");
    rows.push_back(std::move(r));
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return rows;
}

Result<std::vector<ZeusPublishedSaving>> read_zeus_published(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_zeus_published(*text, path);
}

}  // namespace omnilearn::traces
