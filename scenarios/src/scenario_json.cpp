#include "omnilearn/scenarios/scenario_json.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "omnilearn/scenarios/network_spec.h"

namespace omnilearn::scenarios {
namespace {

using Json = nlohmann::ordered_json;

const char* to_text(controller::DecisionTrigger t) {
  switch (t) {
    case controller::DecisionTrigger::kEveryNIterations:
      return "every-n";
    case controller::DecisionTrigger::kEveryEpoch:
      return "every-epoch";
    case controller::DecisionTrigger::kImbalance:
      return "imbalance";
  }
  return "?";
}

const char* to_text(GeneratorKind k) {
  switch (k) {
    case GeneratorKind::kMarkov:
      return "markov";
    case GeneratorKind::kRandomWalk:
      return "random-walk";
    case GeneratorKind::kDiurnal:
      return "diurnal";
  }
  return "?";
}

const char* to_text(AvailabilitySpec::Kind k) {
  switch (k) {
    case AvailabilitySpec::Kind::kNone:
      return "none";
    case AvailabilitySpec::Kind::kSchedule:
      return "schedule";
    case AvailabilitySpec::Kind::kTrace:
      return "trace";
    case AvailabilitySpec::Kind::kGenerator:
      return "generator";
  }
  return "?";
}

Json node_json(const NodeSpec& n) {
  return Json{{"name", n.name}, {"speed_flops", n.speed_flops},     {"cores", n.cores},
              {"gpu", n.gpu},   {"bandwidth_Bps", n.bandwidth_Bps}, {"latency_s", n.latency_s}};
}

Json trace_json(const TraceReference& t) {
  return Json{{"path", t.path},
              {"nodes", t.nodes},
              {"time_scale", t.time_scale},
              {"window_start_s", t.window_start_s},
              {"window_end_s", t.window_end_s}};
}

// The cluster with an empty `workers` array: scenario_to_json writes each worker's object into the text itself.
Json cluster_json(const ClusterSpec& c) {
  Json cluster{{"preset", c.preset},
               {"topology", topology_name(c.topology)},
               {"workers", Json::array()},
               {"parameter_server", node_json(c.parameter_server)},
               {"backbone_bandwidth_Bps", c.backbone_bandwidth_Bps},
               {"backbone_latency_s", c.backbone_latency_s}};
  const NetworkSpec& n = c.network;
  switch (c.topology) {
    case Topology::kFatTree:
      cluster["network"] = Json{{"levels", n.levels},
                                {"down", n.down},
                                {"up", n.up},
                                {"link_count", n.link_count},
                                {"bandwidth_Bps", n.bandwidth_Bps},
                                {"latency_s", n.latency_s}};
      break;
    case Topology::kTorus:
      cluster["network"] =
          Json{{"dimensions", n.dimensions}, {"bandwidth_Bps", n.bandwidth_Bps}, {"latency_s", n.latency_s}};
      break;
    case Topology::kDragonfly:
      cluster["network"] = Json{{"groups", n.groups},
                                {"chassis", n.chassis},
                                {"routers", n.routers},
                                {"nodes", n.nodes},
                                {"bandwidth_Bps", n.bandwidth_Bps},
                                {"latency_s", n.latency_s}};
      break;
    case Topology::kPlatformFile:
      cluster["platform"] = Json{
          {"file", c.platform.path}, {"hosts", c.platform.hosts}, {"parameter_server", c.platform.parameter_server}};
      break;
    case Topology::kStar:
      break;
  }
  return cluster;
}

Json model_json(const ModelProfile& m) {
  Json model{{"name", m.name},
             {"parameters", m.parameters},
             {"gradient_bytes", m.gradient_bytes},
             {"flops_per_sample", m.flops_per_sample},
             {"flops_per_iteration", m.flops_per_iteration}};
  if (m.measured_fixed_s) model["measured_fixed_s"] = *m.measured_fixed_s;
  if (m.measured_per_sample_s) model["measured_per_sample_s"] = *m.measured_per_sample_s;
  if (m.host_core_flops) model["host_core_flops"] = *m.host_core_flops;
  if (!m.slowdown_shares.empty()) {
    model["cpu_slowdown"] = Json{{"share", m.slowdown_shares}, {"slowdown", m.slowdown_factors}};
  }
  if (m.allreduce_fixed_s > 0.0) model["allreduce_fixed_s"] = m.allreduce_fixed_s;
  if (m.quota_period_s > 0.0) model["quota_period_s"] = m.quota_period_s;
  if (m.quota_period_s > 0.0) model["quota_holds_comm"] = m.quota_holds_comm;
  if (m.compute_jitter_cv > 0.0) model["compute_jitter_cv"] = m.compute_jitter_cv;
  if (m.host_cpu_available) model["host_cpu_available"] = *m.host_cpu_available;
  if (!m.noise_shares.empty()) model["compute_noise"] = Json{{"share", m.noise_shares}, {"std_s", m.noise_std_s}};
  if (m.compute_jitter_cv > 0.0 || !m.noise_shares.empty()) model["compute_jitter_shared"] = m.compute_jitter_shared;
  return model;
}

Json workload_json(const WorkloadSpec& w) {
  Json workload{{"model", model_json(w.model)},   {"dataset", w.dataset}, {"dataset_samples", w.dataset_samples},
                {"global_batch", w.global_batch}, {"epochs", w.epochs},   {"sample_budget", w.sample_budget}};
  if (w.numerics == Numerics::kReal) workload["numerics"] = "real";  // absent: time only, as before
  if (!w.asp.is_default()) workload["asp"] = Json::parse(nlohmann::json(w.asp).dump());
  if (w.asp.epochs == AspEpochs::kCeil) workload["asp"]["epochs"] = "ceil";  // absent: floor, as before
  if (w.partition.kind != PartitionKind::kIid) workload["partition"] = Json::parse(nlohmann::json(w.partition).dump());
  const AllreduceSpec& ar = w.allreduce;
  workload["allreduce"] =
      Json{{"algorithm", algorithm_name(ar.algorithm)}, {"chunks", ar.chunks},   {"shards", ar.shards},
           {"workers_per_node", ar.workers_per_node},   {"buckets", ar.buckets}, {"bucket_bytes", ar.bucket_bytes}};
  if (ar.buckets > 1 || ar.bucket_bytes > 0.0) workload["model"]["backward_fraction"] = w.model.backward_fraction;
  return workload;
}

Json policy_json(const PolicySpec& p) {
  return Json{{"name", p.name},
              {"min_batch", p.min_batch},
              {"max_batch", p.max_batch},
              {"dead_band", p.dead_band},
              {"ewma_alpha", p.ewma_alpha},
              {"decide", to_text(p.trigger)},
              {"every_n", p.every_n},
              {"imbalance_threshold", p.imbalance_threshold},
              {"gain", p.gain},
              {"fit_window", p.fit_window},
              {"memory_guard", p.memory_guard},
              {"memory_guard_tolerance", p.memory_guard_tolerance}};
}

Json availability_json(const AvailabilitySpec& a) {
  Json availability{{"kind", to_text(a.kind)}};
  if (a.kind == AvailabilitySpec::Kind::kSchedule) {
    Json phases = Json::array();
    for (const auto& ph : a.phases) phases.push_back(Json{{"at", ph.at}, {"fractions", ph.fractions}});
    availability["unit"] = a.unit == ScheduleUnit::kEpochs ? "epochs" : "seconds";
    availability["phases"] = phases;
  } else if (a.kind == AvailabilitySpec::Kind::kTrace) {
    availability["trace"] = trace_json(a.trace);
  } else if (a.kind == AvailabilitySpec::Kind::kGenerator) {
    const GeneratorSpec& g = a.generator;
    availability["generator"] = Json{{"kind", to_text(g.kind)},
                                     {"mtbf_s", g.mtbf_s},
                                     {"mttr_s", g.mttr_s},
                                     {"step_s", g.step_s},
                                     {"low", g.low},
                                     {"high", g.high},
                                     {"period_s", g.period_s},
                                     {"amplitude", g.amplitude},
                                     {"duration_s", g.duration_s}};
  }
  if (a.noise) availability["noise"] = trace_json(*a.noise);
  return availability;
}

Json energy_json(const EnergySpec& e) {
  const auto device = [](const DevicePower& d) {
    Json j = Json::object();
    if (d.idle_w) j["idle"] = *d.idle_w;
    if (d.busy_w) j["busy"] = *d.busy_w;
    if (!d.busy_by_batch.empty()) j["busy_by_batch"] = d.busy_by_batch;
    if (d.off_w) j["off"] = *d.off_w;
    if (!d.source.empty()) j["source"] = d.source;
    return j;
  };
  Json energy{{"wait", phase_power_name(e.wait)},
              {"comm", phase_power_name(e.comm)},
              {"cpu", device(e.cpu)},
              {"gpu", device(e.gpu)},
              {"slow_with_slack", e.slow_with_slack},
              {"min_frequency", e.min_frequency},
              {"power_exponent", e.power_exponent}};
  if (e.objective) {
    const bool within_energy = e.objective->kind == EnergyObjective::Kind::kEnergyWithin;
    energy["objective"] = Json{{within_energy ? "energy_within" : "time_within", e.objective->percent}};
  }
  if (e.slowing_decision != SlowingDecision::kOracle) {  // the default is left out: older manifests stay as they were
    energy["slowing_decision"] = slowing_decision_name(e.slowing_decision);
    energy["switch_cost_s"] = e.switch_cost_s;
  }
  return energy;
}

std::string dump(const Json& j) {
  // Strings are checked as UTF-8 when read; `replace` keeps the dump from throwing on any that were not (a
  // model name from a file name, a scenario built in code).
  return j.dump(2, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

// Appends `text` to `out` with `pad` more spaces after each newline (the dump of a value nested deeper: no string
// in a dump holds a raw newline).
void append_indented(std::string& out, std::string_view text, std::size_t pad) {
  for (std::size_t from = 0; from < text.size();) {
    const std::size_t eol = std::min(text.find('\n', from), text.size());
    out.append(text, from, eol - from);
    if (eol < text.size()) out.append(1, '\n').append(pad, ' ');
    from = eol + 1;
  }
}

// Appends the dump of `workers` as the value of cluster.workers (an array nested two levels down), each object
// dumped on its own: as one JSON tree a million workers took some 1.2 KB each.
void append_workers(std::string& out, const std::vector<NodeSpec>& workers, std::size_t pad) {
  out += "[\n";
  for (std::size_t k = 0; k < workers.size(); ++k) {
    const std::string node = dump(node_json(workers[k]));
    if (k == 0) out.reserve(out.size() + 2 * workers.size() * (node.size() + 8 * (pad + 6)));
    out.append(pad + 6, ' ');
    append_indented(out, node, pad + 6);
    out += k + 1 < workers.size() ? ",\n" : "\n";
  }
  out.append(pad + 4, ' ') += ']';
}

}  // namespace

std::string scenario_to_json(const Scenario& s, int depth) {
  Json root{{"name", s.name},
            {"source_path", s.source_path},
            {"seed", s.seed},
            {"mode", s.mode == controller::TrainingMode::kBsp ? "bsp" : "asp"},
            {"cluster", cluster_json(s.cluster)},
            {"workload", workload_json(s.workload)},
            {"policy", policy_json(s.policy)},
            {"availability", availability_json(s.availability)},
            {"outputs", Json{{"dir", s.outputs.dir}, {"timeline", s.outputs.timeline}}},
            {"emulator", Json::parse(nlohmann::json(s.emulator).dump())},
            {"max_iterations", s.max_iterations}};
  if (s.energy) root["energy"] = energy_json(*s.energy);
  const std::string rest = dump(root);
  const auto pad = static_cast<std::size_t>(2 * std::max(depth, 0));
  // cluster.workers' "[]": the first "workers" key two levels down after the cluster's (preset and topology, before
  // it, are strings).
  constexpr std::string_view kWorkers = "\n    \"workers\": []";
  const std::size_t key = rest.find(kWorkers, rest.find("\n  \"cluster\": {"));
  std::string out;
  if (s.cluster.workers.empty() || key == std::string::npos) {
    append_indented(out, rest, pad);
    return out;
  }
  const std::size_t at = key + kWorkers.size() - 2;
  append_indented(out, std::string_view(rest).substr(0, at), pad);
  append_workers(out, s.cluster.workers, pad);
  append_indented(out, std::string_view(rest).substr(at + 2), pad);
  return out;
}

}  // namespace omnilearn::scenarios
