#include "cli/jobs_testbed_setup.h"

#include "cli/jobs_command.h"
#include "cli/jobs_workload.h"
#include "omnilearn/emulator/emulator_config.h"

namespace omnilearn::cli {

namespace po = boost::program_options;

namespace {
// The options a stage repeats: (name, takes several values).
constexpr std::pair<const char*, bool> kScenarioOptions[] = {
    {"cluster", false},       {"scheduler", false}, {"round", false},  {"placement", false}, {"job-policy", false},
    {"las-thresholds", true}, {"kinds", false},     {"speeds", false}, {"set", true},        {"seed", false}};
}  // namespace

void add_testbed_jobs_options(po::options_description& desc, TestbedSettings& settings) {
  desc.add_options()("cluster", po::value<std::string>(), "device cluster YAML [the scenario's]")(
      "scheduler", po::value<std::string>(), "fifo | las | gavel | balanced-mix [the scenario's]")(
      "round", po::value<std::string>(), "round length, s (emulated) [the scenario's]")(
      "placement", po::value<std::string>(), "pack | spread [pack]")(
      "job-policy", po::value<std::string>(), "every job's batch policy, instead of the workload's")(
      "las-thresholds", po::value<std::vector<std::string>>()->multitoken(),
      "las, balanced-mix: attained service (worker-seconds) between the queues")(
      "kinds", po::value<std::string>(), "device kinds table: peak_fp32_tflops sets each kind's CPU share")(
      "speeds", po::value<std::string>(), "device speeds table: what the scheduler assumes of each kind")(
      "set", po::value<std::vector<std::string>>()->composing(), "override a scenario key (repeatable)")(
      "seed", po::value<std::string>(), "the scenario's seed (each job's workers are seeded from it) [1]")(
      "cores-per-tflops", po::value(&settings.cores_per_tflops)->default_value(settings.cores_per_tflops),
      "host cores of a device per peak TFLOPS of its kind")(
      "sample-cost", po::value(&settings.sample_cost_s)->default_value(settings.sample_cost_s),
      "CPU seconds a sample costs a worker at a full core (emulator.sample_cost_s)");
}

std::vector<std::string> scenario_words(const po::variables_map& vm) {
  std::vector<std::string> words;
  for (const auto& [name, many] : kScenarioOptions) {
    if (!vm.count(name) || vm[name].defaulted()) continue;
    if (many) {
      for (const std::string& v : vm[name].as<std::vector<std::string>>())
        words.insert(words.end(), {std::string("--") + name, v});
    } else {
      words.insert(words.end(), {std::string("--") + name, vm[name].as<std::string>()});
    }
  }
  return words;
}

Result<TestbedJobsSetup> load_testbed_jobs(const std::string& file, const po::variables_map& vm,
                                           const TestbedSettings& settings) {
  auto scenario = load_jobs_run_scenario(file, vm);
  if (!scenario) return scenario.status();
  TestbedJobsSetup t;
  t.scenario = std::move(scenario).value();
  const scenarios::JobsScenario& s = t.scenario;
  if (s.checkpoint_s != 0.0 || s.restore_s != 0.0 || s.packing) {
    return Status::invalid_argument(file +
                                    ": checkpoint, restore and packing are the simulator's; on the testbed a "
                                    "job's restart is its real workers' (kept off the clock)");
  }
  if (s.device_kinds.empty() || s.device_speeds.empty()) {
    return Status::invalid_argument(file +
                                    ": the testbed's device kinds and speeds (devices.kinds, devices.speeds or "
                                    "--kinds, --speeds; scenarios/testbed/jobs/ ships a pair)");
  }
  auto speeds = traces::read_device_speed_table(s.device_kinds, s.device_speeds);
  if (!speeds) return speeds.status();
  t.speeds = std::move(speeds).value();
  auto cluster = load_named_device_cluster(s.cluster);
  if (!cluster) return cluster.status();
  t.cluster = std::move(cluster).value();
  OMNI_RETURN_IF_ERROR(scenarios::check_device_kinds(t.cluster, *t.speeds));
  for (const traces::DeviceKind& k : t.speeds->kinds())
    t.kind_cores[k.name] = k.peak_fp32_tflops * settings.cores_per_tflops;
  for (const scenarios::DeviceGroup& g : t.cluster.groups) {
    t.cluster_cores += static_cast<double>(g.nodes * g.gpus_per_node) * t.kind_cores.at(g.device);
  }
  const int cpus = emulator::host_cpu_count();
  if (t.cluster_cores > static_cast<double>(cpus)) {
    return Status::invalid_argument(s.cluster + ": its devices need " + std::to_string(t.cluster_cores) +
                                    " host cores; this host has " + std::to_string(cpus) +
                                    " (lower --cores-per-tflops)");
  }
  auto workload = scenario_workload(s, t.cluster, *t.speeds);
  if (!workload) return workload.status();
  t.jobs = std::move(workload->jobs);
  if (!s.job_policy.empty()) {
    for (traces::JobSpec& j : t.jobs) j.batch_policy = s.job_policy;
  }
  return t;
}

}  // namespace omnilearn::cli
