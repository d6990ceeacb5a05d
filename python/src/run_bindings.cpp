// omnilearn._core's run layer (run/): the scenario a run is made from, its stop rule, manifest, summary and recorder,
// and the run-folder writer. The C++ classes are the one implementation; this file converts arguments and errors
// only. Each bound object is used from one Python thread at a time (the C++ classes are not thread-safe).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "binding_support.h"
#include "omnilearn/scenarios/scenario_json.h"
#include "omnilearn/scenarios/scenario_parser.h"
#include "run_api.h"

namespace py = pybind11;

namespace omnilearn::python {
namespace {

std::vector<std::string> stop_reason_names() {
  std::vector<std::string> names;
  for (std::int64_t code = 0;; ++code) {
    const auto reason = run_api::stop_reason_from_code(code);
    if (!reason) return names;
    names.emplace_back(run_api::to_string(*reason));
  }
}

run_api::StopReason stop_reason_named(const std::string& name) {
  if (const auto reason = run_api::parse_stop_reason(name)) return *reason;
  std::string known;
  for (const std::string& n : stop_reason_names()) {
    if (!known.empty()) known += ", ";
    known += n;
  }
  throw py::value_error("stop_reason: '" + name + "' is none of " + known);
}

std::string reason_name(run_api::StopReason reason) { return std::string(run_api::to_string(reason)); }

// A Python value (anything json.dumps takes) as JSON.
nlohmann::ordered_json to_json(const py::handle& value) {
  const std::string text = py::str(py::module_::import("json").attr("dumps")(value));
  return nlohmann::ordered_json::parse(text);
}

// A RunWriter that is dropped once finished or closed, so that the run folder's lock goes with it.
struct BoundRunWriter {
  std::unique_ptr<run_api::RunWriter> writer;
  std::string dir;
  bool closed = false;

  run_api::RunWriter& get() {
    if (closed) throw std::runtime_error("RunWriter " + dir + ": already finished or closed");
    return *writer;
  }
  // Runs finish() or close(), then releases the writer and its folder lock.
  template <typename F>
  void end(F&& f) {
    const Status status = f(get());
    closed = true;
    writer.reset();
    raise_if_error(status);
  }
};

// A RunRecorder (with a run folder, or none: the totals only) that is dropped once finished or closed, so that the
// run folder's lock goes with it.
struct BoundRunRecorder {
  std::unique_ptr<run_api::RunRecorder> recorder;
  std::optional<std::string> dir;
  bool closed = false;

  run_api::RunRecorder& get() {
    if (closed) throw std::runtime_error("RunRecorder " + dir.value_or("(no folder)") + ": already finished or closed");
    return *recorder;
  }
  template <typename F>
  void end(F&& f) {
    const Status status = f(get());
    closed = true;
    recorder.reset();
    raise_if_error(status);
  }
};

run_api::IterationRecord iteration_record(std::int64_t worker, std::int64_t step, std::int64_t epoch, double start_s,
                                          double compute_s, double comm_s, double wait_s, BatchSize batch,
                                          std::optional<double> loss, std::optional<double> accuracy,
                                          std::optional<std::int64_t> staleness) {
  if (worker < 0) throw py::value_error("worker: must be >= 0, got " + std::to_string(worker));
  run_api::IterationRecord r;
  r.worker = static_cast<WorkerId>(worker), r.step = step, r.epoch = epoch, r.start_s = start_s;
  r.compute_s = compute_s, r.comm_s = comm_s, r.wait_s = wait_s, r.batch = batch;
  r.loss = loss, r.accuracy = accuracy, r.staleness = staleness;
  return r;
}

run_api::RunFolderOptions folder_options(bool replace) {
  run_api::RunFolderOptions reuse;
  if (replace) reuse.reuse = run_api::FolderReuse::kReplace;
  reuse.remedy = "pass replace=True to replace an earlier run's files there, or choose another folder";
  return reuse;
}

}  // namespace

void bind_run_layer(py::module_& m) {
  using scenarios::Scenario;
  m.def("stop_reason_names", &stop_reason_names,
        "Every stop reason's name, in precedence order (a name's index is its code): none, epochs, samples, steps, "
        "time, target, requested.");

  py::class_<Scenario>(m, "Scenario", "A resolved scenario (what a run is made from; manifest.json holds it).")
      .def_static(
          "load",
          [](const std::string& path, const std::vector<std::string>& overrides) {
            return take(scenarios::load_scenario(path, overrides));
          },
          py::arg("path"), py::arg("overrides") = std::vector<std::string>{},
          "Parses a scenario file; `overrides` are `key=value` strings as for `omnilearn sim --set`.")
      .def_readwrite("name", &Scenario::name)
      .def_readwrite("seed", &Scenario::seed)
      .def_property_readonly("worker_count", &Scenario::worker_count)
      .def(
          "set_stop_limits",
          [](Scenario& s, const run_api::StopRule& rule) { run_api::set_stop_limits(s, rule.limits()); },
          py::arg("rule"),
          "Writes the rule's limits into their keys (workload.dataset_samples, epochs, sample_budget, max_iterations, "
          "emulator.time_budget_s, target_accuracy).")
      .def(
          "to_json", [](const Scenario& s) { return scenarios::scenario_to_json(s); },
          "The scenario as manifest.json's `scenario` object (JSON text).");

  py::class_<run_api::StopRule>(m, "StopRule",
                                "When a run stops (the same rule as the simulator's and the testbed's): feed it the "
                                "progress; each call returns the reason it gives ('none' if none).")
      .def(py::init([](std::int64_t dataset_samples, std::int64_t epochs, std::int64_t sample_budget,
                       std::int64_t max_steps, double time_budget_s, double target_accuracy) {
             run_api::StopLimits limits;
             limits.dataset_samples = dataset_samples, limits.epochs = epochs, limits.sample_budget = sample_budget;
             limits.max_steps = max_steps, limits.time_budget_s = time_budget_s;
             limits.target_accuracy = target_accuracy;
             raise_if_error(run_api::check_stop_limits(limits));
             return run_api::StopRule(limits);
           }),
           py::kw_only(), py::arg("dataset_samples"), py::arg("epochs") = 1, py::arg("sample_budget") = 0,
           py::arg("max_steps") = 0, py::arg("time_budget_s") = 0.0, py::arg("target_accuracy") = 0.0,
           "Limits of 0 are none; sample_budget > 0 replaces the epochs.")
      .def_static(
          "from_scenario", [](const Scenario& s) { return run_api::StopRule(run_api::stop_limits(s)); },
          py::arg("scenario"), "The limits of a scenario (workload.epochs, sample_budget, max_iterations, emulator.*).")
      .def(
          "progress",
          [](run_api::StopRule& r, std::int64_t steps, std::int64_t samples) {
            return reason_name(r.progress(steps, samples));
          },
          py::kw_only(), py::arg("steps"), py::arg("samples"),
          "The totals after an applied step: 'steps', 'samples', 'epochs' or 'none'.")
      .def(
          "elapsed", [](run_api::StopRule& r, double training_s) { return reason_name(r.elapsed(training_s)); },
          py::arg("training_s"), "The training time so far: 'time' once it reaches the budget, else 'none'.")
      .def(
          "evaluation", [](run_api::StopRule& r, double accuracy) { return reason_name(r.evaluation(accuracy)); },
          py::arg("accuracy"), "An evaluation's test accuracy: 'target' when it reaches the target, else 'none'.")
      .def(
          "stop", [](run_api::StopRule& r, const std::string& reason) { r.stop(stop_reason_named(reason)); },
          py::arg("reason"), "A reason found elsewhere ('requested', or another process's rule's reason).")
      .def_property_readonly(
          "reason", [](const run_api::StopRule& r) { return reason_name(r.reason()); },
          "Why the run stops ('none' while it runs): the fed reason of highest precedence.")
      .def_property_readonly("stopped", &run_api::StopRule::stopped)
      .def_property_readonly("sample_limit", &run_api::StopRule::sample_limit);

  py::class_<run_api::Manifest>(m, "Manifest",
                                "manifest.json of a run: the back end, the resolved scenario, argv, the seed, the back "
                                "end's own fields, and the wall-clock block.")
      .def(py::init<std::string, const Scenario&, const std::vector<std::string>&>(), py::arg("backend"),
           py::arg("scenario"), py::arg("argv"))
      .def(
          "set",
          [](run_api::Manifest& mf, const std::string& key, const py::object& value) { mf.set(key, to_json(value)); },
          py::arg("key"), py::arg("value"), "A field after those set before (any value json.dumps takes).")
      .def("text", &run_api::Manifest::text, py::arg("elapsed_s") = py::none(),
           "The JSON text; elapsed_s stays null until the run is over.");

  py::class_<run_api::RunSummary>(m, "RunSummary",
                                  "summary.json's fields. Containers are copied in and out: assign them whole.")
      .def(py::init([](std::string policy, std::string mode, std::int64_t workers) {
             run_api::RunSummary s;
             s.policy = std::move(policy), s.mode = std::move(mode), s.workers = workers;
             return s;
           }),
           py::kw_only(), py::arg("policy") = "", py::arg("mode") = "", py::arg("workers") = 0)
      .def_readwrite("policy", &run_api::RunSummary::policy)
      .def_readwrite("mode", &run_api::RunSummary::mode)
      .def_readwrite("workers", &run_api::RunSummary::workers)
      .def_readwrite("iterations", &run_api::RunSummary::iterations)
      .def_readwrite("epochs", &run_api::RunSummary::epochs)
      .def_readwrite("total_time_s", &run_api::RunSummary::total_time_s)
      .def_readwrite("mean_iteration_s", &run_api::RunSummary::mean_iteration_s)
      .def_readwrite("idle_fraction", &run_api::RunSummary::idle_fraction)
      .def_readwrite("epoch_time_s", &run_api::RunSummary::epoch_time_s)
      .def_readwrite("mean_staleness", &run_api::RunSummary::mean_staleness)
      .def_readwrite("max_staleness", &run_api::RunSummary::max_staleness)
      .def_readwrite("time_to_target_s", &run_api::RunSummary::time_to_target_s)
      .def_readwrite("final_accuracy", &run_api::RunSummary::final_accuracy)
      .def_readwrite("decisions", &run_api::RunSummary::decisions)
      .def_readwrite("batch_changes", &run_api::RunSummary::batch_changes)
      .def_property(
          "stop_reason", [](const run_api::RunSummary& s) { return reason_name(s.stop_reason); },
          [](run_api::RunSummary& s, const std::string& name) { s.stop_reason = stop_reason_named(name); })
      .def_readwrite("extra", &run_api::RunSummary::extra)
      .def("to_json", &run_api::summary_json, "summary.json's text.");

  py::class_<BoundRunRecorder>(m, "RunRecorder",
                               "The one sink of a run's records (as the simulator's and the testbed's): writes the run "
                               "folder and keeps the totals summary.json needs. Without a folder it keeps the totals "
                               "only. One thread per run.")
      .def(py::init([](std::optional<std::string> dir, const run_api::Manifest* manifest, bool timeline, bool replace,
                       bool iteration_rows) {
             auto bound = std::make_unique<BoundRunRecorder>();
             std::unique_ptr<run_api::RunWriter> writer;
             if (dir) {
               if (manifest == nullptr) throw py::value_error("manifest: required with a run folder (dir)");
               writer = take(run_api::RunWriter::open(*dir, manifest->text(), timeline, folder_options(replace)));
               bound->dir = writer->dir();
             }
             bound->recorder = std::make_unique<run_api::RunRecorder>(
                 std::move(writer), run_api::RecorderOptions{iteration_rows, timeline});
             return bound;
           }),
           py::arg("dir") = py::none(), py::arg("manifest") = nullptr, py::kw_only(), py::arg("timeline") = true,
           py::arg("replace") = false, py::arg("iteration_rows") = true,
           "Claims `dir` (refused if another run holds it, or if it is not empty unless replace=True) and writes the "
           "manifest; dir None: no folder.")
      .def(
          "iteration",
          [](BoundRunRecorder& r, std::int64_t worker, std::int64_t step, std::int64_t epoch, double start_s,
             double compute_s, double comm_s, double wait_s, BatchSize batch, std::optional<double> loss,
             std::optional<double> accuracy, std::optional<std::int64_t> staleness) {
            r.get().iteration(iteration_record(worker, step, epoch, start_s, compute_s, comm_s, wait_s, batch, loss,
                                               accuracy, staleness));
          },
          py::kw_only(), py::arg("worker"), py::arg("step"), py::arg("epoch"), py::arg("start_s"), py::arg("compute_s"),
          py::arg("comm_s"), py::arg("wait_s"), py::arg("batch"), py::arg("loss") = py::none(),
          py::arg("accuracy") = py::none(), py::arg("staleness") = py::none(),
          "One worker's iteration: its totals, its row and its compute / wait / comm spans.")
      .def(
          "plan", [](BoundRunRecorder& r, const controller::Plan& p, std::int64_t epoch) { r.get().plan(p, epoch); },
          py::arg("plan"), py::kw_only(), py::arg("epoch"),
          "A controller result: recorded when it consulted the policy.")
      .def(
          "availability",
          [](BoundRunRecorder& r, std::int64_t worker, double fraction, double time_s) {
            if (worker < 0) throw py::value_error("worker: must be >= 0, got " + std::to_string(worker));
            r.get().availability(static_cast<WorkerId>(worker), fraction, time_s);
          },
          py::kw_only(), py::arg("worker"), py::arg("fraction"), py::arg("time_s"))
      .def(
          "evaluation",
          [](BoundRunRecorder& r, double time_s, std::int64_t step, std::int64_t epoch, double loss, double accuracy) {
            r.get().evaluation(run_api::EvaluationRecord{time_s, step, epoch, loss, accuracy});
          },
          py::kw_only(), py::arg("time_s"), py::arg("step"), py::arg("epoch"), py::arg("loss"), py::arg("accuracy"))
      .def(
          "complete", [](BoundRunRecorder& r, run_api::RunSummary& s) { r.get().complete(s); }, py::arg("summary"),
          "Fills what every back end computes alike: idle fraction, decisions, batch changes, staleness, final "
          "accuracy.")
      .def(
          "fill_from_records",
          [](BoundRunRecorder& r, run_api::RunSummary& s, double origin_s) { r.get().fill_from_records(s, origin_s); },
          py::arg("summary"), py::arg("origin_s") = 0.0,
          "Fills iterations, epochs, total time (from origin_s), mean step of worker 0 and epoch times from the "
          "records.")
      .def(
          "finish",
          [](BoundRunRecorder& r, const run_api::RunSummary& s) {
            r.end([&](run_api::RunRecorder& rec) { return rec.finish(s); });
          },
          py::arg("summary"),
          "Closes every file, then writes summary.json (its presence marks the run folder complete), and releases the "
          "folder.")
      .def(
          "close",
          [](BoundRunRecorder& r) {
            if (!r.closed) r.end([](run_api::RunRecorder& rec) { return rec.close(); });
          },
          "Closes every file without a summary.json (a run stopped before its end) and releases the folder. A no-op "
          "once closed.")
      .def(
          "rewrite_manifest",
          [](BoundRunRecorder& r, const std::string& manifest_json) {
            raise_if_error(r.get().rewrite_manifest(manifest_json));
          },
          py::arg("manifest_json"))
      .def_property_readonly("dir", [](const BoundRunRecorder& r) { return r.dir; })
      .def_property_readonly("closed", [](const BoundRunRecorder& r) { return r.closed; })
      .def(
          "__enter__", [](BoundRunRecorder& r) -> BoundRunRecorder& { return r; }, py::return_value_policy::reference)
      .def("__exit__", [](BoundRunRecorder& r, const py::object&, const py::object&, const py::object&) {
        if (!r.closed) r.end([](run_api::RunRecorder& rec) { return rec.close(); });
      });

  py::class_<BoundRunWriter>(m, "RunWriter",
                             "Writes a run folder (iterations.csv, plans.csv, summary.json, manifest.json, ...) in the "
                             "schema `omnilearn report` reads. One writer thread per run.")
      .def_static(
          "open",
          [](const std::string& dir, const std::string& manifest_json, bool timeline, bool replace) {
            auto writer = take(run_api::RunWriter::open(dir, manifest_json, timeline, folder_options(replace)));
            std::string opened = writer->dir();
            return std::make_unique<BoundRunWriter>(BoundRunWriter{std::move(writer), std::move(opened)});
          },
          py::arg("dir"), py::arg("manifest_json"), py::kw_only(), py::arg("timeline") = true,
          py::arg("replace") = false,
          "Claims `dir` (refused if another run holds it, or if it is not empty unless replace=True) and writes "
          "manifest.json (a JSON object, as is).")
      .def(
          "add_iteration",
          [](BoundRunWriter& w, std::int64_t worker, std::int64_t step, std::int64_t epoch, double start_s,
             double compute_s, double comm_s, double wait_s, BatchSize batch, std::optional<double> loss,
             std::optional<double> accuracy, std::optional<std::int64_t> staleness) {
            w.get().add(iteration_record(worker, step, epoch, start_s, compute_s, comm_s, wait_s, batch, loss, accuracy,
                                         staleness));
          },
          py::kw_only(), py::arg("worker"), py::arg("step"), py::arg("epoch"), py::arg("start_s"), py::arg("compute_s"),
          py::arg("comm_s"), py::arg("wait_s"), py::arg("batch"), py::arg("loss") = py::none(),
          py::arg("accuracy") = py::none(), py::arg("staleness") = py::none())
      .def(
          "add_plan",
          [](BoundRunWriter& w, const controller::Plan& p, std::int64_t epoch) {
            run_api::PlanRecord r;
            r.step = p.step, r.epoch = epoch, r.time_s = p.time_s, r.reason = controller::to_string(p.reason);
            r.changed = p.changed, r.imbalance = p.imbalance, r.batch = p.batch, r.weight = p.weight;
            w.get().add(r);
          },
          py::arg("plan"), py::kw_only(), py::arg("epoch"), "One row per worker in plans.csv for this decision.")
      .def(
          "add_availability",
          [](BoundRunWriter& w, double time_s, std::int64_t worker, double fraction) {
            if (worker < 0) throw py::value_error("worker: must be >= 0, got " + std::to_string(worker));
            w.get().add(run_api::AvailabilityRecord{time_s, static_cast<WorkerId>(worker), fraction});
          },
          py::kw_only(), py::arg("time_s"), py::arg("worker"), py::arg("fraction"))
      .def(
          "add_evaluation",
          [](BoundRunWriter& w, double time_s, std::int64_t step, std::int64_t epoch, double loss, double accuracy) {
            w.get().add(run_api::EvaluationRecord{time_s, step, epoch, loss, accuracy});
          },
          py::kw_only(), py::arg("time_s"), py::arg("step"), py::arg("epoch"), py::arg("loss"), py::arg("accuracy"))
      .def(
          "span",
          [](BoundRunWriter& w, std::int64_t worker, const std::string& name, double start_s, double duration_s) {
            if (worker < 0) throw py::value_error("worker: must be >= 0, got " + std::to_string(worker));
            w.get().span(static_cast<WorkerId>(worker), name.c_str(), start_s, duration_s);
          },
          py::arg("worker"), py::arg("name"), py::arg("start_s"), py::arg("duration_s"))
      .def(
          "finish",
          [](BoundRunWriter& w, const std::string& policy, const std::string& mode, std::int64_t workers,
             std::int64_t iterations, std::int64_t epochs, double total_time_s, double mean_iteration_s,
             double idle_fraction, std::vector<double> epoch_time_s, std::int64_t decisions, std::int64_t batch_changes,
             std::optional<double> final_accuracy, std::optional<double> time_to_target_s,
             std::map<std::string, double> extra, const std::string& stop_reason) {
            run_api::RunSummary s;
            s.policy = policy, s.mode = mode, s.workers = workers, s.iterations = iterations, s.epochs = epochs;
            s.total_time_s = total_time_s, s.mean_iteration_s = mean_iteration_s, s.idle_fraction = idle_fraction;
            s.epoch_time_s = std::move(epoch_time_s), s.decisions = decisions, s.batch_changes = batch_changes;
            s.final_accuracy = final_accuracy, s.time_to_target_s = time_to_target_s, s.extra = std::move(extra);
            s.stop_reason = stop_reason_named(stop_reason);
            w.end([&](run_api::RunWriter& writer) { return writer.finish(s); });
          },
          py::kw_only(), py::arg("policy"), py::arg("mode"), py::arg("workers"), py::arg("iterations"),
          py::arg("epochs"), py::arg("total_time_s"), py::arg("mean_iteration_s"), py::arg("idle_fraction"),
          py::arg("epoch_time_s") = std::vector<double>{}, py::arg("decisions") = 0, py::arg("batch_changes") = 0,
          py::arg("final_accuracy") = py::none(), py::arg("time_to_target_s") = py::none(),
          py::arg("extra") = std::map<std::string, double>{}, py::arg("stop_reason") = "none",
          "Closes every file, then writes summary.json (its presence marks the run folder complete), and releases the "
          "folder.")
      .def(
          "close",
          [](BoundRunWriter& w) {
            if (!w.closed) w.end([](run_api::RunWriter& writer) { return writer.close(); });
          },
          "Closes every file without a summary.json (a run stopped before its end) and releases the folder. A no-op "
          "once "
          "closed.")
      .def(
          "rewrite_manifest",
          [](BoundRunWriter& w, const std::string& manifest_json) {
            raise_if_error(w.get().rewrite_manifest(manifest_json));
          },
          py::arg("manifest_json"))
      .def_property_readonly("dir", [](const BoundRunWriter& w) { return w.dir; })
      .def_property_readonly("closed", [](const BoundRunWriter& w) { return w.closed; })
      .def(
          "__enter__", [](BoundRunWriter& w) -> BoundRunWriter& { return w; }, py::return_value_policy::reference)
      .def("__exit__", [](BoundRunWriter& w, const py::object&, const py::object&, const py::object&) {
        if (!w.closed) w.end([](run_api::RunWriter& writer) { return writer.close(); });
      });
}

}  // namespace omnilearn::python
