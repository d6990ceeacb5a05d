// write_hybrid_run: the run folder of a hybrid job (hybrid_run.h).
#include <cstdio>
#include <filesystem>
#include <string>

#include "omnilearn/base/atomic_file.h"
#include "omnilearn/base/format.h"
#include "omnilearn/hybrid/hybrid_run.h"

namespace omnilearn::hybrid {

namespace {

std::string joined(const std::vector<std::int64_t>& v, char sep = ';') {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? std::string(1, sep) : "") + std::to_string(v[i]);
  return s;
}

std::string layers_text(const std::vector<std::vector<std::int64_t>>& layers) {
  std::string s;
  for (std::size_t r = 0; r < layers.size(); ++r) s += (r ? "|" : "") + joined(layers[r]);
  return s;
}

}  // namespace

Status write_hybrid_run(const HybridRunResult& result, const HybridRunSpec& spec, const std::string& dir,
                        const std::string& summary_extra_json) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::io_error(dir + ": cannot create the run folder: " + ec.message());
  std::string steps = "step,start_s,step_s,overhead_s,micro_batches,live_devices\n";
  Seconds sum = 0.0;
  for (const StepRecord& s : result.steps) {
    steps += std::to_string(s.step) + "," + format_g(s.start_s, 9) + "," + format_g(s.step_s, 9) + "," + format_g(s.overhead_s, 9) + "," +
             joined(s.micro_batches) + "," + std::to_string(s.live_devices) + "\n";
    sum += s.step_s;
  }
  OMNI_RETURN_IF_ERROR(write_file_atomically(dir + "/steps.csv", steps));
  std::string plans = "step,level,reason,cost_s,predicted_saving_s,micro_batches,layers_per_stage\n";
  for (const PlanRecord& p : result.plans) {
    plans += std::to_string(p.step) + "," + std::to_string(p.level) + "," + p.reason + "," + format_g(p.cost_s, 9) + "," +
             format_g(p.predicted_saving_s, 9) + "," + joined(p.micro_batches) + "," + layers_text(p.layers) + "\n";
  }
  OMNI_RETURN_IF_ERROR(write_file_atomically(dir + "/plans.csv", plans));
  std::string placement = "from_step,device,kind,node,replica,stage,tp_rank\n";
  for (const PlacementRecord& p : result.placements) {
    const Device& d = spec.cluster.devices[static_cast<std::size_t>(p.device)];
    placement += std::to_string(p.from_step) + "," + std::to_string(p.device) + "," +
                 spec.cluster.kinds[static_cast<std::size_t>(d.kind)].name + "," + std::to_string(d.node) + "," +
                 std::to_string(p.place.replica) + "," + std::to_string(p.place.stage) + "," +
                 std::to_string(p.place.tp_rank) + "\n";
  }
  OMNI_RETURN_IF_ERROR(write_file_atomically(dir + "/placement.csv", placement));
  std::string devices = "device,kind,node,compute_s,bubble_s,comm_s,wait_s,memory_bytes\n";
  for (std::size_t i = 0; i < result.device_totals.size(); ++i) {
    const Device& d = spec.cluster.devices[i];
    const DeviceTime& t = result.device_totals[i];
    const double memory = i < result.memory.size() ? result.memory[i].total() : 0.0;
    devices += std::to_string(i) + "," + spec.cluster.kinds[static_cast<std::size_t>(d.kind)].name + "," +
               std::to_string(d.node) + "," + format_g(t.compute_s, 9) + "," + format_g(t.bubble_s, 9) + "," + format_g(t.comm_s, 9) + "," +
               format_g(t.wait_s, 9) + "," + format_g(memory, 9) + "\n";
  }
  OMNI_RETURN_IF_ERROR(write_file_atomically(dir + "/devices.csv", devices));
  // Chrome trace events, one thread per device, times in microseconds.
  std::string timeline = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  bool first = true;
  for (std::size_t i = 0; i < spec.cluster.devices.size(); ++i) {
    const Device& d = spec.cluster.devices[i];
    timeline += std::string(first ? "" : ",") + "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":" +
                std::to_string(i) + ",\"args\":{\"name\":\"device " + std::to_string(i) + " (" +
                spec.cluster.kinds[static_cast<std::size_t>(d.kind)].name + ", node " + std::to_string(d.node) +
                ")\"}}";
    first = false;
  }
  for (const TimelineSpan& s : result.timeline) {
    timeline += ",{\"ph\":\"X\",\"pid\":0,\"tid\":" + std::to_string(s.device) + ",\"name\":\"" + s.name +
                "\",\"ts\":" + format_g(s.start_s * 1e6, 9) + ",\"dur\":" + format_g((s.end_s - s.start_s) * 1e6, 9) +
                ",\"args\":{\"step\":" + std::to_string(s.step) + "}}";
  }
  timeline += "]}\n";
  OMNI_RETURN_IF_ERROR(write_file_atomically(dir + "/timeline.json", timeline));
  int level_changes[4] = {0, 0, 0, 0};
  for (const PlanRecord& p : result.plans) ++level_changes[p.level];
  const double mean = result.steps.empty() ? 0.0 : sum / static_cast<double>(result.steps.size());
  std::string summary = "{\n  \"policy\": \"" + result.policy + "\",\n  \"steps\": " +
                        std::to_string(result.steps.size()) + ",\n  \"total_time_s\": " + format_g(result.total_s, 9) +
                        ",\n  \"mean_step_s\": " + format_g(mean, 9) + ",\n  \"shape\": {\"dp\": " +
                        std::to_string(result.final_shape.dp) + ", \"pp\": " + std::to_string(result.final_shape.pp) +
                        ", \"tp\": " + std::to_string(result.final_shape.tp) + "},\n  \"schedule\": \"" +
                        schedule_name(spec.schedule.kind) + "\",\n  \"chunks\": " +
                        std::to_string(spec.schedule.chunks) + ",\n  \"micro_batch\": " +
                        std::to_string(spec.micro_batch) + ",\n  \"global_batch\": " +
                        std::to_string(spec.global_batch) + ",\n  \"plan_changes\": {\"micro_batches\": " +
                        std::to_string(level_changes[1]) + ", \"layers\": " + std::to_string(level_changes[2]) +
                        ", \"replans\": " + std::to_string(level_changes[3]) + "},\n  \"scenario\": " +
                        summary_extra_json + "\n}\n";
  return write_file_atomically(dir + "/summary.json", summary);
}

}  // namespace omnilearn::hybrid
