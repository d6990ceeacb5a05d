#include "omnilearn/traces/sailor_plans.h"

#include <cmath>
#include <optional>
#include <set>
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

// `value` as a finite number (of either sign), or an error naming the field.
Result<double> finite(const std::string& where, std::string_view field, const std::string& value) {
  const std::optional<double> v = parse_double(value);
  if (!v) return bad(where, field, value, "a number");
  return *v;
}

// "a-b;c-d" as pp runs covering 0..n-1 in order, or an error naming the field.
Result<std::vector<LayerRange>> layer_ranges(const std::string& where, const std::string& value, std::int64_t pp) {
  const auto refuse = [&] {
    return bad(where, "layers_per_stage", value,
               std::to_string(pp) + " runs first-last (inclusive) joined by ';', covering layers 0..n-1 in order");
  };
  std::vector<LayerRange> out;
  std::int64_t next = 0;
  for (const std::string& run : split_fields(value, ';')) {
    const std::size_t dash = run.find('-');
    if (dash == std::string::npos) return refuse();
    auto first = whole(where, "layers_per_stage", run.substr(0, dash), 0);
    auto last = whole(where, "layers_per_stage", run.substr(dash + 1), 0);
    if (!first.is_ok() || !last.is_ok() || *first != next || *last < *first) return refuse();
    out.push_back(LayerRange{*first, *last});
    next = *last + 1;
  }
  if (static_cast<std::int64_t>(out.size()) != pp) return refuse();
  return out;
}

// The three tables' readers share the file handling.
template <class Parse>
auto read_table(const std::string& path, Parse parse) -> decltype(parse(std::string_view(), std::string_view())) {
  auto text = read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse(*text, path);
}

}  // namespace

std::string_view scope_name(NetworkScope scope) { return scope == NetworkScope::kIntra ? "intra" : "inter"; }

Result<NetworkScope> parse_network_scope(std::string_view name) {
  if (name == "intra") return NetworkScope::kIntra;
  if (name == "inter") return NetworkScope::kInter;
  return Status::invalid_argument("network scope '" + std::string(name) + "': expected intra or inter");
}

Result<std::vector<SailorPlan>> parse_sailor_plans(std::string_view text, std::string_view source) {
  std::vector<SailorPlan> rows;
  const Status st = for_each_row(text, source, kSailorPlansHeader, [&](const auto& f, const std::string& where) {
    SailorPlan p;
    p.model = f[0];
    p.file = f[1];
    p.kind = f[4];
    if (p.model.empty()) return bad(where, "model", f[0], "a model name");
    if (p.file.empty()) return bad(where, "file", f[1], "the raw file's path");
    if (p.kind.empty()) return bad(where, "kind", f[4], "a GPU kind");
    // The whole numbers >= 1: columns 2..9, kind (4) aside.
    const struct {
      std::string_view field;
      std::size_t column;
      std::int64_t* to;
    } counts[] = {{"nodes", 2, &p.nodes},
                  {"gpus", 3, &p.gpus},
                  {"pp", 5, &p.pp},
                  {"tp", 6, &p.tp},
                  {"dp", 7, &p.dp},
                  {"micro_batch", 8, &p.micro_batch},
                  {"global_batch", 9, &p.global_batch}};
    for (const auto& c : counts) {
      auto w = whole(where, c.field, f[c.column], 1);
      if (!w.is_ok()) return w.status();
      *c.to = *w;
    }
    if (p.gpus != p.pp * p.tp * p.dp) return bad(where, "gpus", f[3], "pp x tp x dp");
    if (p.global_batch % (p.micro_batch * p.dp) != 0) {
      return bad(where, "global_batch", f[9], "a multiple of micro_batch x dp");
    }
    auto stages = layer_ranges(where, f[10], p.pp);
    if (!stages.is_ok()) return stages.status();
    p.stages = std::move(stages).value();
    auto iteration = non_negative(where, "measured_iteration_s", f[11]);
    if (!iteration.is_ok()) return iteration.status();
    auto red_grads = non_negative(where, "measured_red_grads_s", f[12]);
    if (!red_grads.is_ok()) return red_grads.status();
    auto mem = whole(where, "measured_max_mem_bytes", f[13], 0);
    if (!mem.is_ok()) return mem.status();
    p.measured_iteration_s = *iteration;
    p.measured_red_grads_s = *red_grads;
    p.measured_max_mem_bytes = static_cast<double>(*mem);
    p.note = f[14];
    rows.push_back(std::move(p));
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return rows;
}

Result<std::vector<SailorKind>> parse_sailor_kinds(std::string_view text, std::string_view source) {
  std::vector<SailorKind> rows;
  std::set<std::string> seen;
  const Status st = for_each_row(text, source, kSailorKindsHeader, [&](const auto& f, const std::string& where) {
    if (f[0].empty()) return bad(where, "kind", f[0], "a GPU kind");
    if (!seen.insert(f[0]).second) return bad(where, "kind", f[0], "one row per kind");
    auto per_node = whole(where, "gpus_per_node", f[1], 1);
    if (!per_node.is_ok()) return per_node.status();
    auto memory = whole(where, "memory_bytes", f[2], 1);
    if (!memory.is_ok()) return memory.status();
    rows.push_back(SailorKind{f[0], *per_node, static_cast<double>(*memory)});
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return rows;
}

Result<std::vector<SailorLink>> parse_sailor_network(std::string_view text, std::string_view source) {
  std::vector<SailorLink> rows;
  const Status st = for_each_row(text, source, kSailorNetworkHeader, [&](const auto& f, const std::string& where) {
    if (f[0].empty()) return bad(where, "kind", f[0], "a GPU kind");
    auto scope = parse_network_scope(f[1]);
    if (!scope.is_ok()) return bad(where, "scope", f[1], "intra or inter");
    auto gpus = whole(where, "gpus", f[2], 1);
    if (!gpus.is_ok()) return gpus.status();
    constexpr std::string_view kCoefficients[] = {"c2", "c1", "c0"};
    double c[3] = {};
    for (std::size_t i = 0; i < 3; ++i) {
      auto v = finite(where, kCoefficients[i], f[3 + i]);
      if (!v.is_ok()) return v.status();
      c[i] = *v;
    }
    auto peak = non_negative(where, "max_bandwidth_bytes_per_s", f[6]);
    if (!peak.is_ok()) return peak.status();
    if (*peak <= 0.0) return bad(where, "max_bandwidth_bytes_per_s", f[6], "a number > 0");
    rows.push_back(SailorLink{f[0], *scope, *gpus, c[0], c[1], c[2], *peak});
    return Status::ok();
  });
  if (!st.is_ok()) return st;
  return rows;
}

Result<double> sailor_bandwidth_bytes_per_s(const SailorLink& link, double message_bytes) {
  if (!(message_bytes > 0.0) || !std::isfinite(message_bytes)) {
    return Status::invalid_argument("message of " + std::to_string(message_bytes) +
                                    " bytes: expected a positive finite size");
  }
  const double x = std::log2(message_bytes / 1e6);
  const double gb_per_s = (link.c2 * x + link.c1) * x + link.c0;
  if (!(gb_per_s > 0.0)) {
    return Status::invalid_argument("Sailor's " + std::string(scope_name(link.scope)) + " fit for " +
                                    std::to_string(link.gpus) + " GPUs of '" + link.kind + "' gives " +
                                    std::to_string(gb_per_s) + " GB/s at " + std::to_string(message_bytes) +
                                    " bytes; expected a message where it is positive (fitted on 2^16..2^30 bytes)");
  }
  return gb_per_s * 1e9;
}

Result<SailorNetwork> SailorNetwork::create(std::vector<SailorLink> links) {
  SailorNetwork n;
  for (SailorLink& l : links) {
    const std::string what =
        "link of '" + l.kind + "' (" + std::string(scope_name(l.scope)) + ", " + std::to_string(l.gpus) + " GPUs)";
    if (l.kind.empty() || l.gpus < 1 || !std::isfinite(l.c2) || !std::isfinite(l.c1) || !std::isfinite(l.c0) ||
        !(l.max_bandwidth_bytes_per_s > 0.0) || !std::isfinite(l.max_bandwidth_bytes_per_s)) {
      return Status::invalid_argument(what + ": expected a kind, gpus >= 1, finite coefficients and a peak > 0");
    }
    auto key = std::make_tuple(l.kind, l.scope, l.gpus);
    if (!n.links_.emplace(std::move(key), std::move(l)).second) {
      return Status::invalid_argument(what + " is given twice; expected one row each");
    }
  }
  return n;
}

Result<SailorLink> SailorNetwork::link(const std::string& kind, NetworkScope scope, std::int64_t group_size) const {
  const auto it = links_.find({kind, scope, group_size});
  if (it != links_.end()) return it->second;
  std::string measured;
  for (const auto& [key, l] : links_) {
    if (std::get<0>(key) == kind && std::get<1>(key) == scope) {
      measured += (measured.empty() ? "" : ", ") + std::to_string(l.gpus);
    }
  }
  if (measured.empty()) {
    std::string known;
    for (const std::string& k : kinds()) known += (known.empty() ? "" : ", ") + k;
    return Status::not_found("no " + std::string(scope_name(scope)) + " link of GPU kind '" + kind +
                             "' (known kinds: " + known + ")");
  }
  return Status::not_found("no " + std::string(scope_name(scope)) + " link of " + std::to_string(group_size) +
                           " GPUs of '" + kind + "' (measured: " + measured + ")");
}

Result<double> SailorNetwork::bandwidth_bytes_per_s(const std::string& kind, NetworkScope scope,
                                                    std::int64_t group_size, double message_bytes) const {
  auto l = link(kind, scope, group_size);
  if (!l.is_ok()) return l.status();
  return sailor_bandwidth_bytes_per_s(*l, message_bytes);
}

std::vector<std::string> SailorNetwork::kinds() const {
  std::set<std::string> out;
  for (const auto& [key, l] : links_) out.insert(std::get<0>(key));
  return {out.begin(), out.end()};
}

Result<std::vector<SailorPlan>> read_sailor_plans(const std::string& path) {
  return read_table(path, parse_sailor_plans);
}

Result<std::vector<SailorKind>> read_sailor_kinds(const std::string& path) {
  return read_table(path, parse_sailor_kinds);
}

Result<SailorNetwork> read_sailor_network(const std::string& path) {
  auto links = read_table(path, parse_sailor_network);
  if (!links.is_ok()) return links.status();
  auto network = SailorNetwork::create(std::move(links).value());
  if (!network.is_ok()) return network.status().with_context(path);
  return network;
}

}  // namespace omnilearn::traces
