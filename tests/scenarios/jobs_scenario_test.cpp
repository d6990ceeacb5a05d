#include "omnilearn/scenarios/jobs_scenario.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "omnilearn/scenarios/scenario_kind.h"
#include "omnilearn/scenarios/sweep.h"
#include "temp_dir.h"

namespace omnilearn::scenarios {
namespace {

using testing::TempDir;

TEST(JobsScenario, DefaultsAndTheFileStem) {
  auto s = parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\n", "dir/sub/my-run.yaml");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->name, "my-run");
  EXPECT_EQ(s->seed, 1u);
  EXPECT_EQ(s->workload.source, JobsWorkloadSource::kFile);
  EXPECT_EQ(s->workload.file, "dir/sub/w.csv");  // against the file's folder
  EXPECT_EQ(s->cluster, "gavel");
  EXPECT_EQ(s->scheduler, "fifo");
  EXPECT_DOUBLE_EQ(s->round_s, 60.0);
  EXPECT_EQ(s->placement, "pack");
  EXPECT_TRUE(s->las_thresholds.empty());
  EXPECT_DOUBLE_EQ(s->node_bandwidth_Bps, 1.25e9);
  EXPECT_EQ(s->outputs_dir, "runs");
  EXPECT_EQ(jobs_scenario_json(*s)["scheduler"], "fifo");
}

TEST(JobsScenario, EveryKey) {
  auto s = parse_jobs_scenario(
      "kind: jobs\nname: n\nseed: 7\n"
      "workload:\n  import: {format: philly, input: raw/p.csv, cluster: vc1, min_duration: 60, clip: [0, 86400],"
      " max_jobs: 50}\n  batch_policy: omnilearn\n  mode: asp\n  reference_device: v100\n"
      "job_policy: uniform\ncluster: c/my.yaml\nscheduler: gavel\nround: 6 min\ncheckpoint: 10\nrestore: 20\n"
      "placement: spread\nlas_thresholds: [100, 1000]\nnode_bandwidth: 10 Gbps\nmax_time: 1 h\n"
      "parameters: {mymodel: 1e6}\ndevices: {kinds: k.csv, speeds: s.csv}\noutputs: {dir: out}\n",
      "d/s.yaml");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->name, "n");
  EXPECT_EQ(s->seed, 7u);
  const JobsWorkload& w = s->workload;
  EXPECT_EQ(w.source, JobsWorkloadSource::kImport);
  EXPECT_EQ(w.format, "philly");
  EXPECT_EQ(w.input, "d/raw/p.csv");
  EXPECT_EQ(w.import_cluster, "vc1");
  EXPECT_DOUBLE_EQ(w.min_duration_s, 60.0);
  ASSERT_TRUE(w.clip.has_value());
  EXPECT_DOUBLE_EQ(w.clip->second, 86400.0);
  EXPECT_EQ(w.max_jobs, 50);
  EXPECT_EQ(w.batch_policy, "omnilearn");
  EXPECT_EQ(w.mode, "asp");
  EXPECT_EQ(w.reference_device, "v100");
  EXPECT_EQ(s->job_policy, "uniform");
  EXPECT_EQ(s->cluster, "d/c/my.yaml");
  EXPECT_EQ(s->scheduler, "gavel");
  EXPECT_DOUBLE_EQ(s->round_s, 360.0);
  EXPECT_DOUBLE_EQ(s->checkpoint_s, 10.0);
  EXPECT_DOUBLE_EQ(s->restore_s, 20.0);
  EXPECT_EQ(s->placement, "spread");
  EXPECT_EQ(s->las_thresholds, (std::vector<double>{100, 1000}));
  EXPECT_DOUBLE_EQ(s->node_bandwidth_Bps, 1.25e9);
  EXPECT_DOUBLE_EQ(s->max_time_s, 3600.0);
  EXPECT_DOUBLE_EQ(s->parameters.at("mymodel"), 1e6);
  EXPECT_EQ(s->device_kinds, "d/k.csv");
  EXPECT_EQ(s->device_speeds, "d/s.csv");
  EXPECT_EQ(s->outputs_dir, "out");
}

TEST(JobsScenario, GenerateAndOverrides) {
  auto s = parse_jobs_scenario("kind: jobs\nworkload:\n  generate: {jobs: 160, load: 0.8}\ncluster: gavel\n", "g.yaml",
                               {"workload.generate.jobs=12", "scheduler=las", "seed=4", "cluster=sia"});
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->workload.source, JobsWorkloadSource::kGenerate);
  EXPECT_EQ(s->workload.jobs, 12);
  EXPECT_DOUBLE_EQ(s->workload.load, 0.8);
  EXPECT_EQ(s->scheduler, "las");
  EXPECT_EQ(s->seed, 4u);
  EXPECT_EQ(s->cluster, "sia");  // a preset stays a name
}

TEST(JobsScenario, TheEnergySection) {
  auto off = parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\n", "s.yaml");
  ASSERT_TRUE(off.is_ok()) << off.status().message();
  EXPECT_FALSE(off->energy.has_value());
  EXPECT_FALSE(jobs_scenario_json(*off).contains("energy"));  // a run without it writes the manifest it wrote
  auto s = parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\nenergy: {wait: idle, gpu: {idle: 5}}\n",
                               "s.yaml", {"energy.comm=30"});
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  ASSERT_TRUE(s->energy.has_value());
  EXPECT_EQ(s->energy->wait.mode, PhasePowerMode::kIdle);
  EXPECT_EQ(s->energy->comm.mode, PhasePowerMode::kWatts);
  EXPECT_DOUBLE_EQ(s->energy->comm.watts, 30.0);
  EXPECT_DOUBLE_EQ(s->energy->gpu.idle_w.value(), 5.0);
  EXPECT_EQ(jobs_scenario_json(*s)["energy"]["wait"], "idle");
  // --wait's override alone makes the section.
  auto wait = parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\n", "s.yaml", {"energy.wait=busy"});
  ASSERT_TRUE(wait.is_ok()) << wait.status().message();
  EXPECT_EQ(wait->energy->wait.mode, PhasePowerMode::kBusy);
  for (const char* bad : {"energy: {cpu: {idle: 1}}", "energy: {slow_with_slack: true}", "energy: {wait: warm}"}) {
    auto r = parse_jobs_scenario(std::string("kind: jobs\nworkload: {file: w.csv}\n") + bad + "\n", "s.yaml");
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("s.yaml:3"), std::string::npos) << r.status().message();
  }
}

TEST(JobsScenario, Refusals) {
  struct Case {
    const char* yaml;
    std::vector<std::string> overrides;
    const char* message;
  };
  const Case cases[] = {
      {"workload: {file: w.csv}\n", {}, "s.yaml:1: kind: expected `kind: jobs`"},
      {"kind: training\nworkload: {file: w.csv}\n", {}, "s.yaml:1: kind: expected `kind: jobs`"},
      {"kind: jobs\nworkload: {file: w.csv}\nschedular: las\n", {}, "s.yaml:3: schedular: unknown key"},
      {"kind: jobs\n", {}, "workload: missing"},
      {"kind: jobs\nworkload: {file: w.csv, generate: {jobs: 3}}\n", {}, "s.yaml:2: workload"},
      {"kind: jobs\nworkload: {file: w.csv, mode: asp}\n", {}, "workload.mode: only for a generated or imported"},
      {"kind: jobs\nworkload: {generate: {jobs: 0}}\n", {}, "s.yaml:2: workload.generate.jobs:"},
      {"kind: jobs\nworkload: {import: {format: csv, input: x}}\n", {}, "workload.import.format:"},
      {"kind: jobs\nworkload: {import: {format: pollux}}\n", {}, "workload.import.input: missing"},
      {"kind: jobs\nworkload: {file: w.csv}\nplacement: diagonal\n", {}, "s.yaml:3: placement:"},
      {"kind: jobs\nworkload: {file: w.csv}\n", {"round=0"}, "s.yaml (--set round=0): round:"},
      {"kind: jobs\nworkload: {file: w.csv}\n", {"sheduler=las"}, "sheduler: unknown key"},
      {"kind: jobs\nworkload: {file: w.csv}\nasp_rule: ssp\n", {}, "s.yaml:3: asp_rule: 'ssp': expected ssp:N"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    auto s = parse_jobs_scenario(c.yaml, "s.yaml", c.overrides);
    ASSERT_FALSE(s.is_ok());
    EXPECT_NE(s.status().message().find(c.message), std::string::npos) << s.status().message();
  }
}

TEST(JobsScenario, AspRulesAsAJobFileSpellsThem) {
  auto plain = parse_job_asp_rule("");
  ASSERT_TRUE(plain.is_ok());
  EXPECT_EQ(plain->rule, AspRule::kAsgd);
  auto ssp = parse_job_asp_rule("ssp:3");
  ASSERT_TRUE(ssp.is_ok());
  EXPECT_EQ(ssp->rule, AspRule::kSsp);
  EXPECT_EQ(ssp->staleness_bound, 3);
  auto ring = parse_job_asp_rule("ringmaster:inf");
  ASSERT_TRUE(ring.is_ok());
  EXPECT_EQ(ring->delay_threshold, kNoDelayThreshold);
  EXPECT_TRUE(ring->applies(1000000));
  auto ring8 = parse_job_asp_rule("ringmaster:8");
  ASSERT_TRUE(ring8.is_ok());
  EXPECT_TRUE(ring8->applies(8));
  EXPECT_FALSE(ring8->applies(9));
  auto dc = parse_job_asp_rule("dc-asgd:0.1");
  ASSERT_TRUE(dc.is_ok());
  EXPECT_EQ(dc->rule, AspRule::kDcAsgd);
  EXPECT_DOUBLE_EQ(dc->dc_lambda, 0.1);
  EXPECT_DOUBLE_EQ(parse_job_asp_rule("dc-asgd")->dc_lambda, 0.04);
  EXPECT_EQ(parse_job_asp_rule("staleness-aware")->rule, AspRule::kStalenessAware);
  for (const auto& [text, message] :
       {std::pair{"ssp", "asp_rule 'ssp': expected ssp:N with a whole N in [0, 1000000]"},
        std::pair{"ssp:1.5", "asp_rule 'ssp:1.5': expected ssp:N"},
        std::pair{"ringmaster:-1", "asp_rule 'ringmaster:-1': expected ringmaster:N"},
        std::pair{"rescaled:2", "asp_rule 'rescaled:2': rescaled takes no parameter"},
        std::pair{"dc-asgd:x", "asp_rule 'dc-asgd:x': expected dc-asgd or dc-asgd:LAMBDA"},
        std::pair{"hogwild", "asp_rule 'hogwild': unknown rule; expected one of asgd, staleness-aware"}}) {
    auto bad = parse_job_asp_rule(text);
    ASSERT_FALSE(bad.is_ok()) << text;
    EXPECT_EQ(bad.status().message().rfind(message, 0), 0u) << bad.status().message();
  }
  // The scenario key: every ASP job's rule, in the manifest only when set.
  auto s = parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\nasp_rule: ringmaster:4\n", "s.yaml");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->asp_rule, "ringmaster:4");
  EXPECT_EQ(jobs_scenario_json(*s)["asp_rule"], "ringmaster:4");
  auto none = parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\n", "s.yaml");
  ASSERT_TRUE(none.is_ok());
  EXPECT_FALSE(jobs_scenario_json(*none).contains("asp_rule"));
}

TEST(JobsScenario, KindOfFilesAndOfSweeps) {
  TempDir tmp;
  const std::string jobs = tmp.write("j.yaml", "kind: jobs\nworkload: {file: w.csv}\n");
  const std::string training = tmp.write("t.yaml", "name: t\n");
  EXPECT_EQ(*read_scenario_kind(jobs), ScenarioKind::kJobs);
  EXPECT_EQ(*read_scenario_kind(training), ScenarioKind::kTraining);
  EXPECT_FALSE(read_scenario_kind(tmp.write("b.yaml", "kind: other\n")).is_ok());
  EXPECT_EQ(*read_scenario_kind(tmp.write("ht.yaml", "kind: hybrid-testbed\n")), ScenarioKind::kHybridTestbed);

  auto sweep = load_sweep(tmp.write("sweep-j.yaml", "base: j.yaml\naxes:\n  scheduler: [fifo, las]\n"));
  ASSERT_TRUE(sweep.is_ok()) << sweep.status().message();
  EXPECT_EQ(sweep->kind, ScenarioKind::kJobs);
  const auto points = expand(*sweep);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].kind, ScenarioKind::kJobs);
  EXPECT_TRUE(check_point(*sweep, points[1]).is_ok()) << check_point(*sweep, points[1]).message();

  auto mixed = load_sweep(tmp.write("sweep-m.yaml", "bases: {a: j.yaml, b: t.yaml}\n"));
  ASSERT_FALSE(mixed.is_ok());
  EXPECT_NE(mixed.status().message().find("sweep-m.yaml:1: bases: expected bases of one kind"), std::string::npos)
      << mixed.status().message();
}

// Pollux's measured job model and Tiresias's starvation setting: off by default and absent from the manifest then.
TEST(JobsScenario, PolluxJobModelKeys) {
  auto d = parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\n", "p.yaml");
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  EXPECT_EQ(d->step_model, "ring");
  EXPECT_FALSE(d->statistical_efficiency);
  EXPECT_FALSE(d->las_starvation_s.has_value());
  const auto plain = jobs_scenario_json(*d);
  EXPECT_FALSE(plain.contains("step_model") || plain.contains("statistical_efficiency") ||
               plain.contains("las_starvation"));
  auto s = parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\nstep_model: measured\n"
                               "statistical_efficiency: on\nlas_starvation: off\n",
                               "p.yaml");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(s->step_model, "measured");
  EXPECT_TRUE(s->statistical_efficiency);
  EXPECT_EQ(*s->las_starvation_s, 1e300);
  const auto j = jobs_scenario_json(*s);
  EXPECT_EQ(j["step_model"], "measured");
  EXPECT_EQ(j["statistical_efficiency"], "on");
  auto t = parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\nlas_starvation: 2h\n", "p.yaml");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(*t->las_starvation_s, 7200.0);
  EXPECT_FALSE(parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\nstep_model: ideal\n", "p.yaml").is_ok());
}

// restore_at_first_start: off by default and then absent from the manifest; on from the file or --set; any other
// value refused naming the field and the choices.
TEST(JobsScenario, RestoreAtFirstStart) {
  auto d = parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\n", "p.yaml");
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  EXPECT_FALSE(d->restore_at_first_start);
  EXPECT_FALSE(jobs_scenario_json(*d).contains("restore_at_first_start"));
  auto off = parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\nrestore_at_first_start: off\n", "p.yaml");
  ASSERT_TRUE(off.is_ok()) << off.status().message();
  EXPECT_FALSE(off->restore_at_first_start);
  EXPECT_FALSE(jobs_scenario_json(*off).contains("restore_at_first_start"));
  const char* on_yaml = "kind: jobs\nworkload: {file: w.csv}\nrestore: 30s\nrestore_at_first_start: on\n";
  auto on = parse_jobs_scenario(on_yaml, "p.yaml");
  ASSERT_TRUE(on.is_ok()) << on.status().message();
  EXPECT_TRUE(on->restore_at_first_start);
  EXPECT_EQ(jobs_scenario_json(*on)["restore_at_first_start"], "on");
  auto set = parse_jobs_scenario("kind: jobs\nworkload: {file: w.csv}\n", "p.yaml", {"restore_at_first_start=on"});
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  EXPECT_TRUE(set->restore_at_first_start);
  for (const auto& [yaml, overrides, message] :
       {std::tuple{"kind: jobs\nworkload: {file: w.csv}\nrestore_at_first_start: yes\n", std::vector<std::string>{},
                   "p.yaml:3: restore_at_first_start:"},
        std::tuple{"kind: jobs\nworkload: {file: w.csv}\n", std::vector<std::string>{"restore_at_first_start=2"},
                   "p.yaml (--set restore_at_first_start=2): restore_at_first_start:"}}) {
    SCOPED_TRACE(yaml);
    auto bad = parse_jobs_scenario(yaml, "p.yaml", overrides);
    ASSERT_FALSE(bad.is_ok());
    EXPECT_NE(bad.status().message().find(message), std::string::npos) << bad.status().message();
    EXPECT_NE(bad.status().message().find("one of off | on"), std::string::npos) << bad.status().message();
  }
}

}  // namespace
}  // namespace omnilearn::scenarios
