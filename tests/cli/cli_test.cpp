// The omnilearn binary end to end: bad input gives a non-zero exit and a message naming the file and field,
// every subcommand's --help shows an example, and a simulation is byte-for-byte reproducible.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "cli_test_support.h"

namespace omnilearn::cli::testing {
namespace {

struct BadInputCase {
  std::string name;
  std::string file;  // written into the temp folder when `text` is not empty
  std::string text;
  std::vector<std::string> extra_args;
  std::vector<std::string> expected;  // each must occur in stderr
  std::string line_regex;             // when not empty, stderr must match it (file:line: field)
};

std::vector<BadInputCase> bad_input_cases() {
  return {
      {"MalformedYaml",
       "malformed.yaml",
       "name: x\nworkload: [\n  bad\n",
       {},
       {"malformed YAML"},
       R"(malformed\.yaml:[0-9]+: )"},
      {"WrongType",
       "wrong_type.yaml",
       quick_yaml("global_batch: 64", "global_batch: lots"),
       {},
       {"workload.global_batch", "lots"},
       R"(wrong_type\.yaml:14: workload\.global_batch: )"},
      {"UnknownPolicy",
       "quick.yaml",
       quick_yaml(),
       {"--set", "policy.name=fastest"},
       {"quick.yaml", "policy.name", "unknown policy 'fastest'", "--set policy.name=fastest"},
       ""},
      {"NegativeSpeed",
       "negative_speed.yaml",
       quick_yaml("core_speed: 2e10", "core_speed: -2e10"),
       {},
       {"cluster.nodes[0].core_speed", "-2e10"},
       R"(negative_speed\.yaml:7: cluster\.nodes\[0\]\.core_speed: )"},
      {"MissingTraceFile",
       "missing_trace.yaml",
       quick_yaml("availability:\n  schedule:\n    unit: seconds\n    phases:\n      - {at: 0, fractions: [1.0, 1.0]}\n"
                  "      - {at: 0.5s, cores: [4, 1]}\n",
                  "availability:\n  trace: {path: no_such_trace.csv, nodes: [fast, slow]}\n"),
       {},
       {"missing_trace.yaml", "availability.trace.path", "no_such_trace.csv", "not found"},
       ""},
      {"UnknownSetKey",
       "quick.yaml",
       quick_yaml(),
       {"--set", "policy.bogus=3"},
       {"quick.yaml", "policy.bogus", "unknown key"},
       ""},
      {"MissingScenarioFile", "no_such_scenario.yaml", "", {}, {"no_such_scenario.yaml", "cannot open"}, ""},
  };
}

class BadInputTest : public ::testing::TestWithParam<BadInputCase> {};

TEST_P(BadInputTest, FailsWithAMessageNamingTheFileAndField) {
  const BadInputCase& c = GetParam();
  TempDir dir;
  if (!c.text.empty()) dir.write(c.file, c.text);
  std::vector<std::string> args{"sim", dir.at(c.file), "--quiet", "--out", dir.at("run")};
  args.insert(args.end(), c.extra_args.begin(), c.extra_args.end());
  const RunResult r = run_omnilearn(args, dir.path());
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.err.find("omnilearn sim: "), 0u) << r.err;
  for (const std::string& e : c.expected)
    EXPECT_NE(r.err.find(e), std::string::npos) << "want '" << e << "' in: " << r.err;
  if (!c.line_regex.empty()) {
    EXPECT_TRUE(std::regex_search(r.err, std::regex(c.line_regex))) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.at("run/summary.json")));
}

INSTANTIATE_TEST_SUITE_P(Cli, BadInputTest, ::testing::ValuesIn(bad_input_cases()),
                         [](const ::testing::TestParamInfo<BadInputCase>& p) { return p.param.name; });

TEST(CliSweepErrors, MissingSweepFileAndUnknownSweepKeyAreNamed) {
  TempDir dir;
  RunResult r = run_omnilearn({"sweep", dir.at("no_such_sweep.yaml"), "--quiet"}, dir.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no_such_sweep.yaml"), std::string::npos) << r.err;
  dir.write("quick.yaml", quick_yaml());
  dir.write("bad_sweep.yaml", "base: quick.yaml\naxis:\n  policy.name: [uniform]\n");
  r = run_omnilearn({"sweep", dir.at("bad_sweep.yaml"), "--quiet", "--out", dir.at("out")}, dir.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(bad_sweep\.yaml:2: .*axis)"))) << r.err;
}

TEST(CliSweepErrors, ExclusiveModesAndBadJobsAreUsageErrors) {
  TempDir dir;
  dir.write("quick.yaml", quick_yaml());
  dir.write("s.yaml", "base: quick.yaml\naxes:\n  policy.name: [uniform]\n");
  RunResult r = run_omnilearn({"sweep", dir.at("s.yaml"), "--gather", "--emit-slurm", dir.at("x.sh")}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exclude each other"), std::string::npos) << r.err;
  r = run_omnilearn({"sweep", dir.at("s.yaml"), "--jobs", "0"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--jobs >= 1"), std::string::npos) << r.err;
}

// `omnilearn validate` refuses a bad --jitter or --repeats before it calibrates or runs anything.
TEST(CliValidateErrors, BadJitterAndRepeatsAreUsageErrors) {
  TempDir dir;
  dir.write("quick.yaml", quick_yaml());
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--jitter", "bogus"},
                                              std::vector<std::string>{"--repeats", "0"}}) {
    std::vector<std::string> args{"validate", dir.at("quick.yaml"), "--out", dir.at("out")};
    args.insert(args.end(), bad.begin(), bad.end());
    const RunResult r = run_omnilearn(args, dir.path());
    if (r.err.find("unknown command") != std::string::npos) GTEST_SKIP() << "built without the emulator";
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(bad[0] + ": expected"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir.at("out/calibration"))) << "it calibrated before checking " << bad[0];
  }
}

// Every subcommand (and each `trace` subcommand) answers --help with exit 0 and at least one example.
TEST(CliHelp, EverySubcommandShowsAnExample) {
  TempDir dir;
  const std::vector<std::vector<std::string>> commands{{"--help"},
                                                       {"demo", "--help"},
                                                       {"sim", "--help"},
                                                       {"sweep", "--help"},
                                                       {"emulate", "--help"},
                                                       {"calibrate", "--help"},
                                                       {"validate", "--help"},
                                                       {"trace", "import", "--help"},
                                                       {"trace", "synth", "--help"},
                                                       {"trace", "stats", "--help"},
                                                       {"report", "--help"}};
  for (const auto& command : commands) {
    const RunResult r = run_omnilearn(command, dir.path());
    if (r.err.find("unknown command") != std::string::npos &&
        (command[0] == "emulate" || command[0] == "calibrate" || command[0] == "validate")) {
      continue;  // built without the emulator
    }
    const std::string shown = command[0] + (command.size() > 2 ? " " + command[1] : "");
    EXPECT_EQ(r.exit_code, 0) << shown << ": " << r.err;
    EXPECT_NE(r.out.find("example"), std::string::npos) << shown << " --help shows no example:\n" << r.out;
  }
  const RunResult trace = run_omnilearn({"trace", "--help"}, dir.path());
  EXPECT_EQ(trace.exit_code, 0) << trace.err;
}

TEST(CliSim, SameSeedGivesByteIdenticalRunFolders) {
  TempDir dir;
  const std::string scenario = source_path("scenarios/examples/quick.yaml");
  for (const char* run : {"a", "b"}) {
    const RunResult r = run_omnilearn({"sim", scenario, "--quiet", "--seed", "7", "--out", dir.at(run)}, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  for (const char* file : {"iterations.csv", "plans.csv", "summary.json"}) {
    const std::string a = read_file(dir.path() / "a" / file);
    EXPECT_FALSE(a.empty()) << file;
    EXPECT_EQ(a, read_file(dir.path() / "b" / file)) << file << " differs between two runs with seed 7";
  }
}

// A SimGrid platform file alone as the cluster: the shipped four-hosts.yaml runs its file's four hosts as workers of
// their names; asking for more workers than the file has hosts names the --set that asked.
TEST(CliSim, APlatformFileAloneRunsOnItsHosts) {
  TempDir dir;
  const std::string scenario = source_path("scenarios/network/four-hosts.yaml");
  const RunResult r = run_omnilearn({"sim", scenario, "--quiet", "--out", dir.at("run")}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string manifest = read_file(dir.path() / "run" / "manifest.json");
  for (const char* host : {"\"alpha\"", "\"bravo\"", "\"charlie\"", "\"delta\""}) {
    EXPECT_NE(manifest.find(std::string("\"name\": ") + host), std::string::npos) << host;
  }
  EXPECT_NE(read_file(dir.path() / "run" / "iterations.csv").find("\n3,"), std::string::npos);  // worker 3 ran

  const RunResult more =
      run_omnilearn({"sim", scenario, "--quiet", "--set", "cluster.workers=5", "--out", dir.at("more")}, dir.path());
  EXPECT_NE(more.exit_code, 0);
  EXPECT_NE(more.err.find("four-hosts.yaml (--set cluster.workers=5): cluster.workers: expected at most 4 workers, "
                          "got 5: '"),
            std::string::npos)
      << more.err;
  EXPECT_FALSE(fs::exists(dir.at("more/summary.json")));
}

// The same scenario and seed give the same bytes whatever the memory allocator does: SimGrid breaks ties between
// events due at one date (speed profiles of several hosts, among them) by their addresses, so without the drivers'
// own tie order two machines (or two allocator settings) could order simultaneous pushes differently. glibc's
// tunables move the heap's layout here; each ASP run below changed its bytes under them before that order existed.
TEST(CliSim, RunFoldersDoNotDependOnTheHeapLayout) {
  TempDir dir;
  const std::string scenario = source_path("scenarios/edge/asp-256-fmnist-markov.yaml");
  const std::vector<std::string> layouts = {"", "glibc.malloc.tcache_count=0",
                                            "glibc.malloc.tcache_count=0:glibc.malloc.mmap_threshold=4096"};
  struct Case {
    std::string name;
    std::vector<std::string> sets;
  };
  const std::string walk = "availability.generator={kind: random-walk, step: 1s, low: 0.3, high: 1.0, duration: 60s}";
  std::vector<Case> cases = {
      {"markov-flows-256", {"workload.dataset_samples=20000"}},
      {"walk-flows-16", {walk, "cluster.workers=16", "workload.global_batch=256"}},
      {"walk-link-600", {walk, "cluster.workers=600", "workload.global_batch=9600", "workload.dataset_samples=20000"}},
  };
  // Partial levels and downs under SSP (replies held, down notices): 16 workers, each changing at whole seconds.
  std::string trace = "time_s,worker,fraction\n";
  const char* levels[] = {"0", "0.5", "1", "0.7"};
  unsigned state = 7;
  for (int t = 0; t < 60; ++t) {
    for (int w = 0; w < 16; ++w) {
      state = state * 1103515245u + 12345u;
      if (t == 0 || (state >> 16) % 10 < 3) trace += std::to_string(t) + "," + std::to_string(w) + "," + levels[(state >> 8) % 4] + "\n";
    }
  }
  const std::string trace_file = dir.write("mixed.csv", trace);
  cases.push_back({"mixed-ssp-16",
                   {"availability={trace: {path: " + trace_file + "}}", "cluster.workers=16", "workload.global_batch=256",
                    "workload.asp={rule: ssp, staleness_bound: 4}", "workload.dataset_samples=20000"}});
  for (const Case& c : cases) {
    std::vector<std::string> outputs;
    for (std::size_t i = 0; i < layouts.size(); ++i) {
      std::vector<std::string> args = {"sim", scenario, "--quiet", "--no-timeline", "--set", "workload.numerics=time",
                                       "--set", "workload.epochs=1", "--out", dir.at(c.name + "-" + std::to_string(i))};
      for (const std::string& set : c.sets) args.insert(args.end(), {"--set", set});
      const RunResult r = run_omnilearn(args, dir.path(), {"GLIBC_TUNABLES=" + layouts[i]});
      ASSERT_EQ(r.exit_code, 0) << c.name << ": " << r.err;
      outputs.push_back(read_file(dir.path() / (c.name + "-" + std::to_string(i)) / "iterations.csv"));
      ASSERT_FALSE(outputs.back().empty()) << c.name;
    }
    for (std::size_t i = 1; i < outputs.size(); ++i) {
      EXPECT_TRUE(outputs[i] == outputs[0]) << c.name << ": iterations.csv differs under GLIBC_TUNABLES=" << layouts[i];
    }
  }
}

// omnilearn jobs: a generated workload is checked and simulated on a preset cluster into a run folder.
TEST(CliJobs, GenerateCheckAndRunAWorkload) {
  TempDir dir;
  RunResult r = run_omnilearn({"jobs", "generate", "--jobs", "12", "--load", "0.8", "--cluster-gpus", "108", "--seed",
                               "3", "--output", dir.at("jobs.csv")},
                              dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_omnilearn({"jobs", "check", dir.at("jobs.csv")}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("12 jobs"), std::string::npos) << r.out;
  const std::vector<std::string> run = {"jobs", "run", dir.at("jobs.csv"), "--cluster", "gavel", "--scheduler",
                                        "gavel", "--quiet", "--out", dir.at("run")};
  r = run_omnilearn(run, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("12/12 jobs done"), std::string::npos) << r.out;
  const std::string jobs = read_file(dir.path() / "run" / "jobs.csv");
  EXPECT_EQ(std::count(jobs.begin(), jobs.end(), '\n'), 13) << jobs;  // the header and one row per job
  // Finish-time fairness: the last columns of every job, the mean and max in the summary and on the console.
  EXPECT_NE(jobs.find(",contention,fair_s,rho\n"), std::string::npos) << jobs;
  const std::string summary_json = read_file(dir.path() / "run" / "summary.json");
  EXPECT_NE(summary_json.find("\"finished\": 12"), std::string::npos);
  EXPECT_NE(summary_json.find("\"mean_rho\": "), std::string::npos) << summary_json;
  EXPECT_NE(summary_json.find("\"max_rho\": "), std::string::npos) << summary_json;
  EXPECT_NE(r.out.find("finish-time fairness: mean rho "), std::string::npos) << r.out;
  EXPECT_NE(read_file(dir.path() / "run" / "allocations.csv").find("time_s,job,kind,devices"), std::string::npos);
  // The folder holds a run: refused without --force, replaced with it, and the same bytes again.
  r = run_omnilearn(run, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  std::vector<std::string> forced = run;
  forced.push_back("--force");
  r = run_omnilearn(forced, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir.path() / "run" / "jobs.csv"), jobs);
  // The same bytes under other heap layouts (as CliSim.RunFoldersDoNotDependOnTheHeapLayout for single runs).
  for (const char* layout : {"glibc.malloc.tcache_count=0", "glibc.malloc.tcache_count=0:glibc.malloc.mmap_threshold=4096"}) {
    std::vector<std::string> other = run;
    other.back() = dir.at(std::string("run-") + layout);
    r = run_omnilearn(other, dir.path(), {std::string("GLIBC_TUNABLES=") + layout});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* f : {"jobs.csv", "allocations.csv", "timeline.json"}) {
      EXPECT_TRUE(read_file(dir.path() / ("run-" + std::string(layout)) / f) == read_file(dir.path() / "run" / f))
          << f << " differs under " << layout;
    }
  }
}

// --packing: one-worker jobs share the two V100s where Gavel measured a gain; the same bytes under other heap layouts.
TEST(CliJobs, PackingRunsPairsAndKeepsTheBytes) {
  TempDir dir;
  dir.write("two.yaml", "name: two\ngroups:\n  - {device: v100, nodes: 1, gpus_per_node: 2}\n");
  std::string file =
      "name,arrival_s,model,dataset,dataset_samples,epochs,target,workers,min_workers,max_workers,global_batch,"
      "mode,batch_policy\n";
  for (int i = 0; i < 6; ++i) {
    file +=
        "j" + std::to_string(i) + ",0,lm,wikitext-2," + std::to_string(20000 * (i + 1)) + ",1,,1,,,20,bsp,uniform\n";
  }
  dir.write("jobs.csv", file);
  const std::vector<std::string> run = {
      "jobs",         "run",    dir.at("jobs.csv"), "--cluster", dir.at("two.yaml"), "--packing",
      "--parameters", "lm=3e7", "--quiet",          "--out",     dir.at("run")};
  RunResult r = run_omnilearn(run, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string allocations = read_file(dir.path() / "run" / "allocations.csv");
  EXPECT_EQ(allocations.substr(0, allocations.find('\n')), "time_s,job,kind,devices,packed_with");
  EXPECT_NE(allocations.find("0,j2,v100,1,j0\n"), std::string::npos) << allocations;
  EXPECT_NE(read_file(dir.path() / "run" / "timeline.json").find("packed with"), std::string::npos);
  std::vector<std::string> other = run;
  other.back() = dir.at("run-tcache");
  r = run_omnilearn(other, dir.path(), {"GLIBC_TUNABLES=glibc.malloc.tcache_count=0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"jobs.csv", "allocations.csv", "timeline.json"}) {
    EXPECT_TRUE(read_file(dir.path() / "run-tcache" / f) == read_file(dir.path() / "run" / f)) << f;
  }
}

TEST(CliJobs, RunErrorsNameWhatIsWrong) {
  TempDir dir;
  dir.write("jobs.csv",
            "name,arrival_s,model,dataset,dataset_samples,epochs,target,workers,min_workers,max_workers,global_batch,"
            "mode,batch_policy\n"
            "a,0,resnet18,cifar10,50000,1,,2,,,128,bsp,uniform\n"
            "b,5,mysterynet,cifar10,50000,1,,1,,,64,bsp,uniform\n");
  RunResult r = run_omnilearn({"jobs", "run", dir.at("jobs.csv"), "--scheduler", "nosuch", "--out", dir.at("r1")},
                              dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nosuch"), std::string::npos) << r.err;
  r = run_omnilearn({"jobs", "run", dir.at("jobs.csv"), "--out", dir.at("r2")}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("mysterynet"), std::string::npos) << r.err;
  r = run_omnilearn({"jobs", "run", dir.at("jobs.csv"), "--cluster", "nowhere", "--out", dir.at("r3")}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("nowhere"), std::string::npos) << r.err;
  r = run_omnilearn({"jobs", "run", dir.at("jobs.csv"), "--placement", "sideways", "--out", dir.at("r4")},
                    dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--placement"), std::string::npos) << r.err;
  r = run_omnilearn({"jobs", "run", "--help"}, dir.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("example"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace omnilearn::cli::testing
