#include "omnilearn/emulator/worker_protocol.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "omnilearn/base/format.h"

namespace omnilearn::emulator {
namespace {

template <typename T>
std::string join(const std::vector<T>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out.push_back(',');
    if constexpr (std::is_floating_point_v<T>) out.append(format_g(values[i])); else out.append(std::to_string(values[i]));
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos) return out;
    start = p + 1;
  }
}

bool to_double(std::string_view s, double& out) {
  const std::string str(s);
  char* end = nullptr;
  out = std::strtod(str.c_str(), &end);
  return !str.empty() && end == str.c_str() + str.size();
}

template <typename T>
bool to_int(std::string_view s, T& out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string opt(const std::optional<double>& v) { return v ? format_g(*v) : std::string("-"); }

struct Fields {
  std::vector<std::string_view> f;
  std::size_t i = 1;
  bool ok = true;
  double d() { double v = 0; ok = ok && i < f.size() && to_double(f[i++], v); return v; }
  std::int64_t n() { std::int64_t v = 0; ok = ok && i < f.size() && to_int(f[i++], v); return v; }
  std::optional<double> od() {
    if (i < f.size() && f[i] == "-") { ++i; return std::nullopt; }
    return d();
  }
  std::string_view s() { if (i >= f.size()) { ok = false; return {}; } return f[i++]; }
};

}  // namespace

std::string encode(const WorkerMessage& message) {
  std::string out;
  if (const auto* r = std::get_if<run::IterationRecord>(&message)) {
    out = std::string("I\t").append(std::to_string(r->worker)).append("\t").append(std::to_string(r->step)).append("\t")
              .append(std::to_string(r->epoch)).append("\t").append(format_g(r->start_s)).append("\t").append(format_g(r->compute_s))
              .append("\t").append(format_g(r->comm_s)).append("\t").append(format_g(r->wait_s)).append("\t")
              .append(std::to_string(r->batch)).append("\t").append(opt(r->loss)).append("\t").append(opt(r->accuracy))
              .append("\t").append(r->staleness ? std::to_string(*r->staleness) : std::string("-"));
  } else if (const auto* p = std::get_if<run::PlanRecord>(&message)) {
    out = std::string("P\t").append(std::to_string(p->step)).append("\t").append(std::to_string(p->epoch)).append("\t")
              .append(format_g(p->time_s)).append("\t").append(p->reason).append("\t").append(p->changed ? "1" : "0")
              .append("\t").append(format_g(p->imbalance)).append("\t").append(join(p->batch)).append("\t").append(join(p->weight));
  } else if (const auto* e = std::get_if<run::EvaluationRecord>(&message)) {
    out = std::string("E\t").append(format_g(e->time_s)).append("\t").append(std::to_string(e->step)).append("\t")
              .append(std::to_string(e->epoch)).append("\t").append(format_g(e->loss)).append("\t").append(format_g(e->accuracy));
  } else if (const auto* x = std::get_if<ExtraRecord>(&message)) {
    out = std::string("X\t").append(x->key).append("\t").append(format_g(x->value));
  } else if (const auto* d = std::get_if<DoneRecord>(&message)) {
    out = std::string("D\t").append(run::to_string(d->reason));
  } else if (const auto* a = std::get_if<AvailabilityNotice>(&message)) {
    out = std::string("A\t").append(std::to_string(a->worker)).append("\t").append(format_g(a->time_s)).append("\t")
              .append(format_g(a->fraction));
  }
  out.push_back('\n');
  return out;
}

Result<WorkerMessage> decode(std::string_view line) {
  Fields in{split(line, '\t')};
  const std::string_view tag = in.f[0];
  auto bad = [&]() { return Status::parse_error(std::string("worker message '").append(tag).append("': malformed line \"")
                                                    .append(line.substr(0, 200)).append("\"")); };
  if (tag == "I") {
    run::IterationRecord r;
    r.worker = static_cast<WorkerId>(in.n());
    r.step = in.n(); r.epoch = in.n();
    r.start_s = in.d(); r.compute_s = in.d(); r.comm_s = in.d(); r.wait_s = in.d();
    r.batch = in.n();
    r.loss = in.od(); r.accuracy = in.od();
    if (in.i < in.f.size() && in.f[in.i] != "-") r.staleness = in.n(); else ++in.i;
    if (!in.ok || in.i != in.f.size()) return bad();
    return WorkerMessage(r);
  }
  if (tag == "P") {
    run::PlanRecord p;
    p.step = in.n(); p.epoch = in.n(); p.time_s = in.d();
    p.reason = std::string(in.s());
    p.changed = in.n() != 0;
    p.imbalance = in.d();
    const std::string_view batches = in.s();
    const std::string_view weights = in.s();
    if (!in.ok || in.i != in.f.size()) return bad();
    for (std::string_view b : split(batches, ',')) { BatchSize v = 0; if (!to_int(b, v)) return bad(); p.batch.push_back(v); }
    for (std::string_view w : split(weights, ',')) { double v = 0; if (!to_double(w, v)) return bad(); p.weight.push_back(v); }
    return WorkerMessage(p);
  }
  if (tag == "E") {
    run::EvaluationRecord e;
    e.time_s = in.d(); e.step = in.n(); e.epoch = in.n(); e.loss = in.d(); e.accuracy = in.d();
    if (!in.ok || in.i != in.f.size()) return bad();
    return WorkerMessage(e);
  }
  if (tag == "X") {
    ExtraRecord x;
    x.key = std::string(in.s());
    x.value = in.d();
    if (!in.ok || in.i != in.f.size()) return bad();
    return WorkerMessage(x);
  }
  if (tag == "D") {
    const std::optional<run::StopReason> reason = run::parse_stop_reason(in.s());
    if (!reason || !in.ok || in.i != in.f.size()) return bad();
    return WorkerMessage(DoneRecord{*reason});
  }
  if (tag == "A") {
    AvailabilityNotice a;
    a.worker = static_cast<WorkerId>(in.n()); a.time_s = in.d(); a.fraction = in.d();
    if (!in.ok || in.i != in.f.size()) return bad();
    return WorkerMessage(a);
  }
  return Status::parse_error(std::string("worker message: unknown tag \"").append(tag.substr(0, 20)).append("\""));
}

}  // namespace omnilearn::emulator
