// Importers for failure logs (LANL, Titan GPUs, Alibaba 2017 server events): nodes up (1) or down (0).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "importers.h"
#include "omnilearn/traces/csv_reader.h"

namespace omnilearn::traces::detail {
namespace {

using Interval = std::pair<Seconds, Seconds>;

// A node's down intervals in absolute time, in the order the node first appears in the source.
struct NodeEvents {
  std::string name;
  std::vector<Interval> down;
  double failures = 0.0;
};

Result<AvailabilityTrace> build(std::vector<NodeEvents> nodes, Seconds base, Seconds end,
                                const ImportOptions& options) {
  std::vector<RawSeries> raw;
  for (NodeEvents& n : nodes) {
    for (Interval& i : n.down) {
      i.first -= base;
      i.second = std::min(i.second, end) - base;
    }
    raw.push_back({std::move(n.name), points_from_down_intervals(std::move(n.down)), n.failures});
  }
  return select_and_build(std::move(raw), options, end - base);
}

}  // namespace

Result<AvailabilityTrace> import_lanl(const ImportOptions& options) {
  auto in = LineReader::open(options.input);
  if (!in.is_ok()) return in.status();
  const auto columns = read_named_columns(*in, {"System", "nodenumz", "Prob Started", "Prob Fixed"},
                                          "the LANL header 'System,machine type,...'", "the LANL failure CSV");
  if (!columns.is_ok()) return columns.status();
  const std::size_t sys = columns->index[0], node = columns->index[1];
  const std::size_t started = columns->index[2], fixed = columns->index[3];
  std::map<long, NodeEvents> by_node;  // numeric node order
  Seconds base = std::numeric_limits<double>::infinity();
  Seconds end = -std::numeric_limits<double>::infinity();
  OMNI_RETURN_IF_ERROR(for_each_record(*in, columns->width, [&](const std::vector<std::string>& f, const std::string&) {
    if (f[sys] != options.lanl_system) return Status::ok();
    const auto n = parse_double(f[node]);
    const auto t0 = parse_us_datetime(f[started]);
    const auto t1 = parse_us_datetime(f[fixed]);
    if (!n || *n < 0.0 || *n != std::floor(*n)) {
      return in->error("nodenumz '" + f[node] + "' is not valid; expected an integer >= 0");
    }
    if (!t0 || !t1) {
      return in->error("Prob Started '" + f[started] + "' or Prob Fixed '" + f[fixed] +
                       "' is not valid; expected M/D/YYYY H:MM");
    }
    NodeEvents& e = by_node[std::lround(*n)];
    if (e.name.empty()) e.name = std::string("node_").append(std::to_string(std::lround(*n)));
    e.failures += 1.0;
    if (*t1 > *t0) e.down.emplace_back(*t0, *t1);  // a zero or negative repair time has no down period
    base = std::min(base, *t0);
    end = std::max({end, *t0, *t1});
    return Status::ok();
  }));
  if (by_node.empty()) {
    return Status::not_found(options.input + ": no rows for System " + options.lanl_system +
                             "; expected a System value present in the file (e.g. 20 or 18)");
  }
  std::vector<NodeEvents> nodes;
  for (auto& [id, e] : by_node) nodes.push_back(std::move(e));
  return build(std::move(nodes), base, end, options);
}

Result<AvailabilityTrace> import_titan(const ImportOptions& options) {
  auto in = LineReader::open(options.input);
  if (!in.is_ok()) return in.status();
  const auto columns =
      read_named_columns(*in, {"location", "insert", "remove", "event"}, "the header 'SN,location,insert,remove,...'",
                         "'SN,location,insert,remove,duration,out,event' (Titan gc_full.csv)");
  if (!columns.is_ok()) return columns.status();
  const std::size_t loc = columns->index[0], ins = columns->index[1], rem = columns->index[2], ev = columns->index[3];
  struct Row {
    Seconds insert;  // -inf when unknown (present before records began)
    Seconds remove;
    bool failure;
  };
  std::vector<std::string> order;
  std::map<std::string, std::vector<Row>> by_loc;
  Seconds base = std::numeric_limits<double>::infinity();
  Seconds end = -std::numeric_limits<double>::infinity();
  OMNI_RETURN_IF_ERROR(for_each_record(*in, columns->width, [&](const std::vector<std::string>& f, const std::string&) {
    const auto t_ins =
        f[ins].empty() ? std::optional<Seconds>(-std::numeric_limits<double>::infinity()) : parse_iso_datetime(f[ins]);
    const auto t_rem = parse_iso_datetime(f[rem]);
    if (!t_ins || !t_rem) {
      return in->error("insert '" + f[ins] + "' or remove '" + f[rem] +
                       "' is not valid; expected YYYY-MM-DD HH:MM:SS (insert may be empty)");
    }
    const std::string& event = f[ev];
    if (!event.empty() && event != "DBE" && event != "OTB") {
      return in->error("event '" + event + "' is not known; expected empty, DBE or OTB");
    }
    if (f[loc].empty()) return in->error("location is empty; expected a Cray slot like c0-0c0s1n2");
    auto [it, fresh] = by_loc.try_emplace(f[loc]);
    if (fresh) order.push_back(f[loc]);
    it->second.push_back({*t_ins, *t_rem, !event.empty()});
    if (std::isfinite(*t_ins)) base = std::min(base, *t_ins);
    base = std::min(base, *t_rem);
    end = std::max({end, *t_rem, *t_ins});
    return Status::ok();
  }));
  if (order.empty()) return in->error("no data rows; expected one row per GPU placement");
  std::vector<NodeEvents> nodes;
  for (const std::string& name : order) {
    std::vector<Row>& rows = by_loc[name];
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.insert < b.insert; });
    NodeEvents e{name, {}, 0.0};
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!rows[i].failure) continue;
      e.failures += 1.0;
      const Seconds back = i + 1 < rows.size() ? rows[i + 1].insert : end;
      if (back > rows[i].remove) e.down.emplace_back(rows[i].remove, back);
    }
    nodes.push_back(std::move(e));
  }
  return build(std::move(nodes), base, end, options);
}

Result<AvailabilityTrace> import_alibaba_2017(const ImportOptions& options) {
  if (!(options.repair_time_s > 0.0)) return Status::invalid_argument("alibaba-2017: repair_time_s must be > 0");
  auto in = LineReader::open(options.input);
  if (!in.is_ok()) return in.status();
  std::vector<std::string> order;
  std::map<std::string, NodeEvents> by_machine;
  std::map<std::string, std::vector<std::pair<Seconds, std::string>>> events;
  Seconds last = 0.0;
  std::string line;
  while (in->next(line)) {
    if (trim(line).empty()) continue;
    const std::vector<std::string> f = split_fields(line);
    if (f.size() != 7) {
      return in->error("row has " + std::to_string(f.size()) +
                       " fields; expected 7 (timestamp,machine_id,event_type,event_detail,cpu,mem,disk; no header)");
    }
    const auto t = parse_double(f[0]);
    if (!t || *t < 0.0) {
      return in->error("timestamp '" + f[0] + "' is not valid; expected seconds >= 0 (server_event.csv has no header)");
    }
    const std::string& type = f[2];
    if (type != "add" && type != "remove" && type != "softerror" && type != "harderror") {
      return in->error("event_type '" + type + "' is not known; expected add, remove, softerror or harderror");
    }
    if (f[1].empty()) return in->error("machine_id is empty; expected an integer id");
    auto [it, fresh] = by_machine.try_emplace(f[1]);
    if (fresh) {
      order.push_back(f[1]);
      it->second.name = "machine_" + f[1];
    }
    events[f[1]].emplace_back(*t, type);
    last = std::max(last, *t);
  }
  OMNI_RETURN_IF_ERROR(in->status());  // a quoted field never closed
  if (order.empty()) return in->error("no data rows; expected server events");
  const Seconds end = std::max(86400.0, last + options.repair_time_s);
  std::vector<NodeEvents> nodes;
  for (const std::string& id : order) {
    NodeEvents e = std::move(by_machine[id]);
    auto& ev = events[id];
    std::stable_sort(ev.begin(), ev.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    bool seen_add = false;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      const auto& [t, type] = ev[i];
      if (type == "add") {
        if (!seen_add && t > 0.0) e.down.emplace_back(0.0, t);  // not in the cluster before it was added
        seen_add = true;
      } else if (type == "remove") {
        Seconds back = end;
        for (std::size_t j = i + 1; j < ev.size(); ++j) {
          if (ev[j].second == "add") {
            back = ev[j].first;
            break;
          }
        }
        e.down.emplace_back(t, back);
      } else {
        e.failures += 1.0;
        e.down.emplace_back(t, t + options.repair_time_s);
      }
    }
    nodes.push_back(std::move(e));
  }
  return build(std::move(nodes), 0.0, end, options);
}

}  // namespace omnilearn::traces::detail
