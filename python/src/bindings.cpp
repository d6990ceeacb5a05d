// omnilearn._core: Python bindings of the Controller (controller/) and the scenario loader (policy settings only);
// the run layer's are in run_bindings.cpp. The C++ classes are the one implementation; this file converts arguments
// and errors only.
// Each bound object is used from one Python thread at a time (the C++ classes are not thread-safe).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "binding_support.h"
#include "controller_settings.h"
#include "omnilearn/controller/controller.h"
#include "omnilearn/controller/policy_registry.h"
#include "omnilearn/scenarios/scenario_parser.h"

namespace py = pybind11;

namespace omnilearn::python {
namespace {

WorkerId worker_id(std::int64_t worker, std::size_t count, const char* arg) {
  if (worker < 0 || static_cast<std::size_t>(worker) >= count) {
    throw py::value_error(std::string(arg) + ": expected a worker in [0, " + std::to_string(count) + "), got " +
                          std::to_string(worker));
  }
  return static_cast<WorkerId>(worker);
}

// A Controller with the settings and the scenario it was made from.
struct BoundController {
  std::unique_ptr<controller::Controller> ctl;
  ControllerSettings settings;
  scenarios::Scenario scenario;
};

std::unique_ptr<BoundController> bind(ControllerSettings settings) {
  scenarios::Scenario scenario = take(to_scenario(settings));
  settings.name = scenario.policy.name;  // "omnilearn" in asp mode is "omnilearn-asp", as in a scenario file
  auto ctl = take(make_controller(scenario));
  return std::make_unique<BoundController>(BoundController{std::move(ctl), std::move(settings), std::move(scenario)});
}

py::dict settings_dict(const ControllerSettings& s) {
  py::dict d;
  d["name"] = s.name;
  d["gain"] = s.gain;
  d["fit_window"] = s.fit_window;
  d["min_batch"] = s.min_batch;
  d["max_batch"] = s.max_batch;
  d["dead_band"] = s.dead_band;
  d["ewma_alpha"] = s.ewma_alpha;
  d["decide"] = s.decide;
  d["every_n"] = s.every_n;
  d["imbalance_threshold"] = s.imbalance_threshold;
  d["memory_guard"] = s.memory_guard;
  d["memory_guard_tolerance"] = s.memory_guard_tolerance;
  d["global_batch"] = s.global_batch;
  d["mode"] = s.mode;
  d["capacities"] = s.capacities;
  return d;
}

std::string plan_repr(const controller::Plan& p) {
  std::string batch;
  for (BatchSize b : p.batch) {
    if (!batch.empty()) batch += ", ";
    batch += std::to_string(b);
  }
  return "Plan(step=" + std::to_string(p.step) + ", batch=[" + batch + "], reason='" + controller::to_string(p.reason) +
         "', changed=" + (p.changed ? "True" : "False") + ")";
}

}  // namespace
}  // namespace omnilearn::python

PYBIND11_MODULE(_core, m) {
  using namespace omnilearn;
  using namespace omnilearn::python;
  m.doc() = "OmniLearn's C++ controller and run layer (see the omnilearn package for the Python API).";
  bind_run_layer(m);

  m.def(
      "policy_names", [] { return controller::make_default_registry().names(); },
      "The names of the built-in batch policies (sorted).");

  py::class_<controller::Plan>(m, "Plan", "A batch plan: per-worker batches and gradient weights b_k / sum(b).")
      .def_readonly("step", &controller::Plan::step)
      .def_readonly("time_s", &controller::Plan::time_s)
      .def_readonly("batch", &controller::Plan::batch, "per worker; 0 when not live")
      .def_readonly("weight", &controller::Plan::weight, "lambda_k = b_k / sum(b)")
      .def_readonly("global_batch", &controller::Plan::global_batch)
      .def_readonly("decided", &controller::Plan::decided, "the policy was consulted at this call")
      .def_readonly("changed", &controller::Plan::changed, "batches differ from the plan in force before")
      .def_readonly("imbalance", &controller::Plan::imbalance)
      .def_property_readonly("reason",
                             [](const controller::Plan& p) { return std::string(controller::to_string(p.reason)); })
      .def("__repr__", &plan_repr);

  const ControllerSettings d;
  py::class_<BoundController>(m, "Controller",
                              "The feedback controller: report iteration facts, ask plan_next() at decision points. "
                              "Keyword names are the scenario file's `policy:` keys.")
      .def(py::init([](std::int64_t workers, std::vector<double> capacities, std::string name, BatchSize global_batch,
                       std::string mode, double gain, std::int64_t fit_window, BatchSize min_batch, BatchSize max_batch,
                       double dead_band, double ewma_alpha, std::string decide, std::int64_t every_n,
                       double imbalance_threshold, bool memory_guard, double memory_guard_tolerance) {
             if (capacities.empty()) {
               if (workers < 1) throw py::value_error("workers: give workers >= 1 or a list of capacities");
               capacities.assign(static_cast<std::size_t>(workers), 1.0);
             } else if (workers != 0 && static_cast<std::size_t>(workers) != capacities.size()) {
               throw py::value_error("workers: " + std::to_string(workers) + " workers but " +
                                     std::to_string(capacities.size()) + " capacities");
             }
             ControllerSettings s;
             s.capacities = std::move(capacities), s.name = std::move(name), s.global_batch = global_batch;
             s.mode = std::move(mode), s.gain = gain, s.fit_window = fit_window, s.min_batch = min_batch;
             s.max_batch = max_batch, s.dead_band = dead_band, s.ewma_alpha = ewma_alpha, s.decide = std::move(decide);
             s.every_n = every_n, s.imbalance_threshold = imbalance_threshold, s.memory_guard = memory_guard;
             s.memory_guard_tolerance = memory_guard_tolerance;
             return bind(std::move(s));
           }),
           py::kw_only(), py::arg("workers") = 0, py::arg("capacities") = std::vector<double>{},
           py::arg("name") = d.name, py::arg("global_batch") = d.global_batch, py::arg("mode") = d.mode,
           py::arg("gain") = d.gain, py::arg("fit_window") = d.fit_window, py::arg("min_batch") = d.min_batch,
           py::arg("max_batch") = d.max_batch, py::arg("dead_band") = d.dead_band, py::arg("ewma_alpha") = d.ewma_alpha,
           py::arg("decide") = d.decide, py::arg("every_n") = d.every_n,
           py::arg("imbalance_threshold") = d.imbalance_threshold, py::arg("memory_guard") = d.memory_guard,
           py::arg("memory_guard_tolerance") = d.memory_guard_tolerance)
      .def_static(
          "from_scenario",
          [](const std::string& path, const std::vector<std::string>& overrides) {
            scenarios::Scenario sc = take(scenarios::load_scenario(path, overrides));
            auto ctl = take(make_controller(sc));
            ControllerSettings settings = from_scenario(sc);
            return std::make_unique<BoundController>(
                BoundController{std::move(ctl), std::move(settings), std::move(sc)});
          },
          py::arg("path"), py::arg("overrides") = std::vector<std::string>{},
          "A controller with the policy, global batch, mode and workers (speeds as capacities) of a scenario file; "
          "`overrides` are `key=value` strings as for `omnilearn sim --set`.")
      .def(
          "report_iteration",
          [](BoundController& c, std::int64_t worker, std::int64_t step, double end_s, double compute_s,
             BatchSize batch) {
            raise_if_error(c.ctl->report(controller::IterationDone{worker_id(worker, c.ctl->worker_count(), "worker"),
                                                                   step, end_s, compute_s, batch}));
          },
          py::kw_only(), py::arg("worker"), py::arg("step"), py::arg("end_s"), py::arg("compute_s"), py::arg("batch"),
          "An iteration of `worker` ended at `end_s` after `compute_s` seconds of forward+backward at `batch`.")
      .def(
          "report_availability",
          [](BoundController& c, std::int64_t worker, double time_s, double fraction) {
            raise_if_error(c.ctl->report(
                controller::AvailabilityChange{worker_id(worker, c.ctl->worker_count(), "worker"), time_s, fraction}));
          },
          py::kw_only(), py::arg("worker"), py::arg("time_s"), py::arg("fraction"),
          "The worker's available fraction of its nominal capacity changed (0: down, it leaves the plan).")
      .def(
          "report_membership",
          [](BoundController& c, std::int64_t worker, double time_s, bool joined) {
            raise_if_error(c.ctl->report(
                controller::MembershipChange{worker_id(worker, c.ctl->worker_count(), "worker"), time_s, joined}));
          },
          py::kw_only(), py::arg("worker"), py::arg("time_s"), py::arg("joined"))
      .def(
          "plan_next",
          [](BoundController& c, std::int64_t step, std::int64_t epoch, double now_s) {
            return take(c.ctl->plan_next(controller::DecisionPoint{step, epoch, now_s}));
          },
          py::kw_only(), py::arg("step"), py::arg("epoch") = 0, py::arg("now_s") = 0.0,
          "The plan in force from `step` on (decides when a decision is due; applies the dead-band).")
      .def_property_readonly("current_plan", [](const BoundController& c) { return c.ctl->current_plan(); })
      .def_property_readonly(
          "scenario", [](const BoundController& c) { return c.scenario; },
          "A copy of the scenario this controller was made from (the file's, or one made of the settings).")
      .def_property_readonly("worker_count", [](const BoundController& c) { return c.ctl->worker_count(); })
      .def_property_readonly("policy_name",
                             [](const BoundController& c) { return std::string(c.ctl->policy().name()); })
      .def(
          "is_live",
          [](const BoundController& c, std::int64_t worker) {
            return c.ctl->is_live(worker_id(worker, c.ctl->worker_count(), "worker"));
          },
          py::arg("worker"))
      .def(
          "imbalance", [](const BoundController& c) { return c.ctl->imbalance(); },
          "max|t_k - mean t| / mean t over measured live workers; None unless every live worker is measured.")
      .def(
          "settings", [](const BoundController& c) { return settings_dict(c.settings); },
          "The settings as keyword arguments of Controller (scenario `policy:` keys plus global_batch, mode, "
          "capacities).");
}
