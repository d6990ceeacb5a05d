// omnilearn-python-reference: replays a script of controller events (and, when built with the testbed, sampler
// steps) through the C++ classes and prints every result, so the Python tests can compare the bindings and the pure
// Python sampler with the C++ implementation on the same inputs. Reads the script from stdin, one command a line:
//   controller key=value ...          (ControllerSettings keys; capacities=1,2,3)
//   iteration WORKER STEP END_S COMPUTE_S BATCH
//   availability WORKER TIME_S FRACTION
//   membership WORKER TIME_S JOINED(0|1)
//   plan STEP EPOCH NOW_S             -> prints: plan STEP REASON CHANGED DECIDED GLOBAL b0,b1,.. w0,w1,..
//   sampler SAMPLES SEED              (needs the testbed's GlobalSampler)
//   next b0,b1,...                    -> prints: step EPOCH STEP_IN_EPOCH LAST b0,.. then one line per worker: i,i,..
// Exits 2 with a message on a malformed line or a failed call.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "controller_settings.h"
#ifdef OMNILEARN_REFERENCE_HAS_SAMPLER
#include "omnilearn/emulator/global_sampler.h"
#endif

namespace {

using omnilearn::BatchSize;

[[noreturn]] void die(const std::string& msg) {
  std::cerr << "omnilearn-python-reference: " << msg << "\n";
  std::exit(2);
}

template <typename T>
std::vector<T> parse_list(const std::string& text) {
  std::vector<T> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::stringstream v(item);
    T x{};
    if (!(v >> x)) die("bad list item '" + item + "'");
    out.push_back(x);
  }
  return out;
}

template <typename T>
std::string join(const std::vector<T>& values) {
  std::string out;
  char buf[64];
  for (const T& v : values) {
    if constexpr (std::is_floating_point_v<T>) {
      std::snprintf(buf, sizeof buf, "%.17g", v);
    } else {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    }
    out += (out.empty() ? "" : ",") + std::string(buf);
  }
  return out;
}

omnilearn::python::ControllerSettings parse_settings(std::istringstream& in) {
  omnilearn::python::ControllerSettings s;
  std::string kv;
  while (in >> kv) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) die("expected key=value, got '" + kv + "'");
    const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (key == "name")
      s.name = value;
    else if (key == "gain")
      s.gain = std::stod(value);
    else if (key == "fit_window")
      s.fit_window = std::stoll(value);
    else if (key == "min_batch")
      s.min_batch = std::stoll(value);
    else if (key == "max_batch")
      s.max_batch = std::stoll(value);
    else if (key == "dead_band")
      s.dead_band = std::stod(value);
    else if (key == "ewma_alpha")
      s.ewma_alpha = std::stod(value);
    else if (key == "decide")
      s.decide = value;
    else if (key == "every_n")
      s.every_n = std::stoll(value);
    else if (key == "imbalance_threshold")
      s.imbalance_threshold = std::stod(value);
    else if (key == "memory_guard")
      s.memory_guard = value == "1" || value == "true" || value == "True";
    else if (key == "memory_guard_tolerance")
      s.memory_guard_tolerance = std::stod(value);
    else if (key == "global_batch")
      s.global_batch = std::stoll(value);
    else if (key == "mode")
      s.mode = value;
    else if (key == "capacities")
      s.capacities = parse_list<double>(value);
    else
      die("unknown setting '" + key + "'");
  }
  return s;
}

#ifdef OMNILEARN_REFERENCE_HAS_SAMPLER
// `sampler SAMPLES SEED` or `next b0,b1,...`: the testbed's GlobalSampler, printing each step's assignment.
void sampler_command(const std::string& cmd, std::istringstream& in, const std::string& where,
                     std::optional<omnilearn::emulator::GlobalSampler>& sampler) {
  using namespace omnilearn;
  if (cmd == "sampler") {
    std::int64_t samples = 0;
    std::uint64_t seed = 0;
    if (!(in >> samples >> seed)) die(where + "expected: sampler SAMPLES SEED");
    sampler.emplace(samples, seed);
    return;
  }
  std::string list;
  if (!sampler || !(in >> list)) die(where + "expected a sampler, then: next b0,b1,...");
  const std::vector<BatchSize> batch = parse_list<BatchSize>(list);
  const emulator::StepAssignment a = sampler->next(batch);
  std::cout << "step " << a.epoch << ' ' << a.step_in_epoch << ' ' << (a.last_in_epoch ? 1 : 0) << ' ' << join(a.batch)
            << '\n';
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const auto idx = sampler->indices(a, k);
    std::cout << "indices " << join(std::vector<std::int64_t>(idx.begin(), idx.end())) << '\n';
  }
}
#endif

// `iteration`, `availability`, `membership` or `plan`: one event to the controller, or one decision printed.
omnilearn::Status controller_command(const std::string& cmd, std::istringstream& in, const std::string& where,
                                     omnilearn::controller::Controller& ctl) {
  using namespace omnilearn;
  if (cmd == "iteration") {
    std::int64_t worker = 0, step = 0;
    double end_s = 0, compute_s = 0;
    BatchSize batch = 0;
    if (!(in >> worker >> step >> end_s >> compute_s >> batch)) die(where + "bad iteration line");
    return ctl.report(controller::IterationDone{static_cast<WorkerId>(worker), step, end_s, compute_s, batch});
  }
  if (cmd == "availability") {
    std::int64_t worker = 0;
    double time_s = 0, fraction = 0;
    if (!(in >> worker >> time_s >> fraction)) die(where + "bad availability line");
    return ctl.report(controller::AvailabilityChange{static_cast<WorkerId>(worker), time_s, fraction});
  }
  if (cmd == "membership") {
    std::int64_t worker = 0;
    double time_s = 0;
    int joined = 0;
    if (!(in >> worker >> time_s >> joined)) die(where + "bad membership line");
    return ctl.report(controller::MembershipChange{static_cast<WorkerId>(worker), time_s, joined != 0});
  }
  if (cmd != "plan") die(where + "unknown command '" + cmd + "'");
  std::int64_t step = 0, epoch = 0;
  double now_s = 0;
  if (!(in >> step >> epoch >> now_s)) die(where + "bad plan line");
  auto plan = ctl.plan_next(controller::DecisionPoint{step, epoch, now_s});
  if (!plan) die(where + plan.status().message());
  std::cout << "plan " << plan->step << ' ' << controller::to_string(plan->reason) << ' ' << (plan->changed ? 1 : 0)
            << ' ' << (plan->decided ? 1 : 0) << ' ' << plan->global_batch << ' ' << join(plan->batch) << ' '
            << join(plan->weight) << '\n';
  return Status::ok();
}

}  // namespace

int main() {
  using namespace omnilearn;
  std::unique_ptr<controller::Controller> ctl;
#ifdef OMNILEARN_REFERENCE_HAS_SAMPLER
  std::optional<emulator::GlobalSampler> sampler;
#endif
  std::string line;
  int line_no = 0;
  while (std::getline(std::cin, line)) {
    ++line_no;
    std::istringstream in(line);
    std::string cmd;
    if (!(in >> cmd) || cmd[0] == '#') continue;
    const std::string where = "line " + std::to_string(line_no) + ": ";
    if (cmd == "controller") {
      auto sc = python::to_scenario(parse_settings(in));
      if (!sc) die(where + sc.status().message());
      auto made = python::make_controller(*sc);
      if (!made) die(where + made.status().message());
      ctl = std::move(made).value();
      continue;
    }
    if (cmd == "sampler" || cmd == "next") {
#ifdef OMNILEARN_REFERENCE_HAS_SAMPLER
      sampler_command(cmd, in, where, sampler);
      continue;
#else
      die(where + "built without the testbed's GlobalSampler (OMNILEARN_BUILD_EMULATOR=OFF)");
#endif
    }
    if (!ctl) die(where + "a 'controller' line must come first");
    const Status status = controller_command(cmd, in, where, *ctl);
    if (!status.is_ok()) die(where + status.message());
  }
  return 0;
}
