#include "omnilearn/sim/simulation.h"

#include <chrono>
#include <csignal>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <simgrid/s4u/Engine.hpp>
#include <xbt/base.h>  // simgrid/version.h uses its macros without including it
#include <simgrid/version.h>

#include "asp_driver.h"
#include "availability_model.h"
#include "bsp_driver.h"
#include "collective_step.h"
#include "omnilearn/run/availability_plan.h"
#include "omnilearn/run/controller_factory.h"
#include "omnilearn/run/energy_meter.h"
#include "omnilearn/run/manifest.h"
#include "omnilearn/run/run_recorder.h"
#include "omnilearn/scenarios/network_spec.h"
#include "omnilearn/sim/iteration_cost_model.h"
#include "platform_builder.h"
#include "platform_energy.h"
#include "run_context.h"
#include "simgrid_settings.h"

namespace omnilearn::sim {
namespace {

// The oracle's knowledge: each worker's true cost now, t_k(b) = (c0 + c1 b) / (speed_k * fraction_k * share_k), with
// share_k its share of a host it shares with more workers than the host has cores (compute_shares).
controller::TrueCostProvider true_costs(const IterationCostModel& cost, const AvailabilityModel& availability,
                                        const SimPlatform& platform) {
  return [&cost, &availability, &platform](const controller::ClusterSnapshot& snapshot) {
    const std::vector<double> shares =
        compute_shares(platform, [&availability](WorkerId k) { return !availability.is_down(k); });
    std::vector<controller::CostFunction> costs;
    costs.reserve(snapshot.workers.size());
    for (WorkerId k = 0; k < snapshot.workers.size(); ++k) {
      const double fraction = availability.fraction(k) * shares[k];
      costs.emplace_back([&cost, k, fraction](BatchSize b) {
        return fraction > 0.0 ? cost.seconds(k, b, fraction) : 1e300;  // a down worker can take no work
      });
    }
    return costs;
  };
}

// manifest.json: everything but the wall-clock block is a function of the scenario and the options.
run::Manifest make_manifest(const scenarios::Scenario& scenario, const SimOptions& options,
                            const std::vector<std::string>& simgrid_args) {
  run::Manifest m("sim", scenario, options.argv);
  m.set("versions", {{"simgrid", std::to_string(SIMGRID_VERSION_MAJOR) + "." + std::to_string(SIMGRID_VERSION_MINOR) +
                                     "." + std::to_string(SIMGRID_VERSION_PATCH)}});
  m.set("simgrid_args", simgrid_args);
  m.set("iteration_rows", options.iteration_rows);
  // Which all-reduce model the run uses: the algorithm, the analytic or flow-level path, the overlap buckets.
  const scenarios::AllreduceSpec& allreduce = scenario.workload.allreduce;
  m.set("collective", {{"algorithm", scenarios::algorithm_name(allreduce.algorithm)},
                       {"topology", scenarios::topology_name(scenario.cluster.topology)},
                       {"path", scenario.mode == controller::TrainingMode::kAsp
                                    ? asp_link_path(scenario, options)
                                    : collective_path(scenario, options.flow_allreduce_max_workers)},
                       {"buckets", bucket_count(allreduce, model_gradient_bytes(scenario.workload.model))}});
  m.set_all(options.manifest_fields);
  return m;
}

// Claims the run folder (options.reuse) and writes manifest.json (its elapsed_s is null until the run is over).
Result<std::unique_ptr<run::RunRecorder>> open_recorder(const scenarios::Scenario& scenario, const SimOptions& options,
                                                        const run::Manifest& manifest) {
  if (options.output_dir.empty()) return Status::invalid_argument("SimOptions.output_dir: required");
  const bool timeline = options.timeline && scenario.outputs.timeline;
  run::RunFolderOptions folder;
  folder.reuse = options.reuse;
  auto writer = run::RunWriter::open(options.output_dir, manifest.text(), timeline, folder);
  if (!writer) return writer.status();
  return std::make_unique<run::RunRecorder>(std::move(writer).value(),
                                            run::RecorderOptions{options.iteration_rows, timeline, options.plan_rows});
}

// Virtual-time training's numerics, made before anything is written, or none for a time-only scenario.
Result<std::unique_ptr<TrainingNumerics>> make_numerics(const scenarios::Scenario& scenario, const SimOptions& options) {
  if (scenario.workload.numerics != scenarios::Numerics::kReal) return std::unique_ptr<TrainingNumerics>{};
  if (!options.numerics) {
    return Status::invalid_argument(
        "workload.numerics: real trains the model for real and needs LibTorch, but this omnilearn was built without "
        "it (configure with OMNILEARN_BUILD_EMULATOR=ON where LibTorch is found: Debian's libtorch-dev); "
        "workload.numerics: time simulates the timing alone");
  }
  auto numerics = options.numerics(scenario);
  if (!numerics) return numerics.status();
  if (!*numerics) return Status::internal("workload.numerics: real: the numerics factory returned nothing");
  return numerics;
}

template <typename Driver>
Result<run::RunSummary> drive(simgrid::s4u::Engine& engine, RunContext& ctx) {
  Driver driver(ctx);
  ctx.recorder.plan(ctx.controller.current_plan(), 0);
  Status listener_status;
  ctx.availability.apply_initial([&](WorkerId k, double fraction, Seconds t) {
    ctx.recorder.availability(k, fraction, t);
    const Status st = ctx.controller.report(controller::AvailabilityChange{k, t, fraction});
    if (!st.is_ok() && listener_status.is_ok()) listener_status = st;
    driver.on_availability(k, fraction);
  });
  // Workers down from the start leave the initial plan before the first step.
  auto plan = ctx.controller.plan_next(controller::DecisionPoint{0, 0, 0.0});
  if (!plan) return plan.status();
  ctx.recorder.plan(*plan, 0);
  ctx.availability.start(ctx.platform.parameter_server);
  driver.start();
  engine.run();
  OMNI_RETURN_IF_ERROR(listener_status);
  OMNI_RETURN_IF_ERROR(driver.status());
  run::RunSummary summary = driver.summary();
  if constexpr (std::is_same_v<Driver, AspDriver>) OMNI_RETURN_IF_ERROR(driver.write_files());
  if (ctx.training != nullptr) {
    ctx.training->finish(summary.iterations, summary.epochs, summary.total_time_s);
    OMNI_RETURN_IF_ERROR(ctx.training->status());
    ctx.training->fill(summary);
  }
  return summary;
}

// The run's energy meter. Other load on the host (workload.model.host_cpu_available) water-fills the workers' CPU
// shares and so stretches their compute: each is charged busy power only on the part of its share it got.
Result<run::EnergyMeter> energy_meter(const scenarios::Scenario& scenario, const IterationCostModel& cost,
                                      const std::vector<run::HostWattage>& hosts) {
  auto made = run::EnergyMeter::for_scenario(scenario, hosts);
  if (!made) return made.status();
  run::EnergyMeter meter = std::move(*made);
  const auto available = scenario.workload.model.host_cpu_available;
  if (!available) return meter;
  std::vector<double> shares;
  for (WorkerId k = 0; k < cost.worker_count(); ++k) {
    if (const auto s = cost.cpu_share(k)) shares.push_back(*s);
  }
  if (shares.size() != cost.worker_count()) return meter;
  const std::vector<double> granted = water_fill(shares, *available);
  for (WorkerId k = 0; k < shares.size(); ++k) meter.set_busy_fraction(k, granted[k] / shares[k]);
  return meter;
}

// Starts SimGrid's engine in `slot` from `argc` and `argv` (`args`, a program name first, which both must outlive the
// engine). SimGrid's engine installs a SIGINT handler that exits at once, leaving the run folder half written; the
// caller's handling (options.stop_requested) stays in force instead. Settings SimGrid refuses are an error naming them.
Status start_engine(std::optional<simgrid::s4u::Engine>& slot, int& argc, std::vector<char*>& argv,
                    const std::vector<std::string>& args) {
  struct sigaction caller_sigint {};
  ::sigaction(SIGINT, nullptr, &caller_sigint);
  try {
    slot.emplace(&argc, argv.data());
  } catch (const std::exception& e) {
    ::sigaction(SIGINT, &caller_sigint, nullptr);
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));  // SimGrid follows an unknown key with the list of every key
    std::string given;
    for (std::size_t i = 1; i < args.size(); ++i) given += (i > 1 ? " " : "") + args[i];
    return Status::invalid_argument("SimGrid refused its settings (" + given + "): " + what);
  }
  ::sigaction(SIGINT, &caller_sigint, nullptr);
  return Status::ok();
}

}  // namespace

Result<run::RunSummary> run_simulation(const scenarios::Scenario& scenario, const SimOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  auto cost = IterationCostModel::create(scenario.workload.model, scenario.cluster.workers);
  if (!cost) return cost.status();
  auto plan = run::AvailabilityPlan::create(scenario);
  if (!plan) return plan.status();
  auto availability = AvailabilityModel::create(*plan);
  if (!availability) return availability.status();
  auto numerics = make_numerics(scenario, options);
  if (!numerics) return numerics.status();

  OMNI_RETURN_IF_ERROR(check_simgrid_args(options.simgrid_args));
  const std::size_t workers = scenario.cluster.workers.size();
  const std::size_t actors = (scenario.mode == controller::TrainingMode::kAsp
                                  ? workers + 1  // and the parameter server
                                  : BspDriver::actor_count(options, workers)) +
                             1;  // and the availability actor
  auto simgrid_args = effective_simgrid_args(options, actors, (*availability)->speed_profiles_repeat());
  if (!simgrid_args) return simgrid_args.status();
  std::vector<std::string> args{"omnilearn-sim"};
  args.insert(args.end(), simgrid_args->begin(), simgrid_args->end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  try {
    std::optional<simgrid::s4u::Engine> engine_slot;
    OMNI_RETURN_IF_ERROR(start_engine(engine_slot, argc, argv, args));
    simgrid::s4u::Engine& engine = *engine_slot;
    const bool compact = !BspDriver::needs_worker_hosts(scenario, options, (*availability)->never_down_count());
    auto platform = build_platform(scenario.cluster, (*availability)->pstate_fractions(), compact);
    if (!platform) return platform.status();
    OMNI_RETURN_IF_ERROR((*availability)->install(*platform));
    // The oracle's costs read the platform: which workers share a host.
    auto controller =
        run::make_controller(run::controller_spec(scenario), true_costs(*cost, **availability, *platform));
    if (!controller) return controller.status();
    const run::Manifest manifest = make_manifest(scenario, options, *simgrid_args);
    auto recorder = open_recorder(scenario, options, manifest);
    if (!recorder) return recorder.status();
    std::optional<LinkEnergy> links;
    if (scenario.energy) {
      auto meter = energy_meter(scenario, *cost, host_wattages(scenario.cluster, *platform));
      if (!meter) return meter.status();
      auto link_energy = LinkEnergy::for_platform(engine);
      if (!link_energy) return link_energy.status();
      if (!link_energy->empty()) {
        links.emplace(std::move(*link_energy));
        // Each evaluation's joules and the energy to target count the links too (links_j at the end).
        meter->set_links([&links](Seconds t) { return links->joules(t); });
      }
      (*recorder)->set_energy_meter(std::move(*meter));
    }
    run::StopRule stop(run::stop_limits(scenario));
    RunContext ctx{scenario, options, *platform, *cost, **availability, *controller, **recorder, stop};
    if (links) ctx.links = &*links;
    std::optional<VirtualTraining> training;
    if (*numerics) ctx.training = &training.emplace(scenario, std::move(*numerics), **recorder, stop);
    auto summary = scenario.mode == controller::TrainingMode::kAsp ? drive<AspDriver>(engine, ctx)
                                                                     : drive<BspDriver>(engine, ctx);
    if (!summary) return summary.status();
    if (options.stop_requested && options.stop_requested()) {
      OMNI_RETURN_IF_ERROR((*recorder)->close());
      return Status::internal(options.output_dir + ": stopped on request; the rows so far are kept, with no "
                              "summary.json");
    }
    summary->policy = scenario.policy.name;
    summary->stop_reason = stop.reason();
    (*recorder)->complete(*summary);
    if (links && summary->energy && summary->energy->reason.empty()) {
      summary->energy->links_j = links->joules(summary->total_time_s);
    }
    OMNI_RETURN_IF_ERROR((*recorder)->finish(*summary));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    OMNI_RETURN_IF_ERROR((*recorder)->rewrite_manifest(manifest.text(elapsed)));
    return summary;
  } catch (const std::exception& e) {
    return Status::internal(std::string("simgrid: ") + e.what());
  }
}

}  // namespace omnilearn::sim
