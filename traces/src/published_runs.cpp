#include "omnilearn/traces/published_runs.h"

#include <utility>

#include "omnilearn/traces/csv_reader.h"
#include "omnilearn/traces/text_file.h"
#include "table_lines.h"

namespace omnilearn::traces {
namespace {

using detail::bad;
using detail::for_each_row;
using detail::non_negative;
using detail::whole;

// `value` as a number > 0, or an error naming the field.
Result<double> positive(const std::string& where, std::string_view field, const std::string& value) {
  auto v = non_negative(where, field, value);
  if (!v.is_ok()) return v.status();
  if (*v <= 0.0) return bad(where, field, value, "a number > 0");
  return *v;
}

}  // namespace

Result<std::vector<PublishedRun>> parse_megatron_published(std::string_view text, std::string_view source) {
  std::vector<PublishedRun> rows;
  const Status st = for_each_row(text, source, kPublishedRunsHeader, [&](const auto& f, const std::string& where) {
    PublishedRun r;
    r.source = f[0];
    r.model = f[1];
    if (r.source.empty()) return bad(where, "source", f[0], "the table or page the row is from");
    if (r.model.empty()) return bad(where, "model", f[1], "a model name");
    // hidden, layers, heads, seq, vocab, tp, pp, dp, gpus (columns 2..10), and global_batch (12).
    constexpr std::string_view kWhole[] = {"hidden", "layers", "heads", "seq", "vocab", "tp", "pp", "dp", "gpus"};
    std::int64_t v[9] = {};
    for (std::size_t i = 0; i < 9; ++i) {
      auto w = whole(where, kWhole[i], f[2 + i], 1);
      if (!w.is_ok()) return w.status();
      v[i] = *w;
    }
    r.hidden = v[0];
    r.layers = v[1];
    r.heads = v[2];
    r.seq = v[3];
    r.vocab = v[4];
    r.tp = v[5];
    r.pp = v[6];
    r.dp = v[7];
    r.gpus = v[8];
    if (r.gpus != r.tp * r.pp * r.dp) return bad(where, "gpus", f[10], "tp x pp x dp");
    if (r.hidden % r.heads != 0 || r.hidden % r.tp != 0) {
      return bad(where, "hidden", f[2], "a multiple of heads and of tp");
    }
    if (r.layers % r.pp != 0) return bad(where, "layers", f[3], "a multiple of pp");
    if (!f[11].empty()) {
      auto mb = whole(where, "micro_batch", f[11], 1);
      if (!mb.is_ok()) return mb.status();
      r.micro_batch = *mb;
    }
    auto gb = whole(where, "global_batch", f[12], 1);
    if (!gb.is_ok()) return gb.status();
    r.global_batch = *gb;
    if (r.global_batch % (r.micro_batch.value_or(1) * r.dp) != 0) {
      return bad(where, "global_batch", f[12], "a multiple of dp (and of micro_batch x dp when it is given)");
    }
    if (f[13] == "full") {
      r.recompute = Recompute::kFull;
    } else if (f[13] == "selective") {
      r.recompute = Recompute::kSelective;
    } else {
      return bad(where, "recompute", f[13], "full or selective");
    }
    auto iteration = positive(where, "iteration_s", f[14]);
    if (!iteration.is_ok()) return iteration.status();
    r.iteration_s = *iteration;
    if (!f[15].empty()) {
      auto mfu = positive(where, "mfu", f[15]);
      if (!mfu.is_ok() || *mfu > 1.0) return bad(where, "mfu", f[15], "a fraction in (0, 1], or nothing");
      r.mfu = *mfu;
    }
    r.device = f[16];
    if (r.device.empty()) return bad(where, "device", f[16], "a device kind");
    auto peak = positive(where, "peak_flops", f[17]);
    if (!peak.is_ok()) return peak.status();
    r.peak_flops = *peak;
    r.note = f[18];
    rows.push_back(std::move(r));
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return rows;
}

Result<std::vector<PublishedRun>> read_megatron_published(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_megatron_published(*text, path);
}

}  // namespace omnilearn::traces
