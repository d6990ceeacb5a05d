#include "cli/jobs_testbed_setup.h"

#include "cli/jobs_command.h"
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
                                           const TestbedSettings& settings, const std::string& out) {
  run::JobsRunRequest request;
  request.jobs = file;
  request.out = out;
  request.out_suffix = "-testbed";
  request.overrides = jobs_run_overrides(vm);
  request.shipped_device_tables = false;
  auto setup = run::resolve_jobs_run(request);
  if (!setup) return setup.status();
  return emulator::testbed_jobs_setup(std::move(setup).value(), settings, emulator::host_cpu_count());
}

}  // namespace omnilearn::cli
