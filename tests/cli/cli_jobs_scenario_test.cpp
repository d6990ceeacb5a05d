// `omnilearn jobs run` with a jobs scenario (kind: jobs): the file and the equivalent options give the same run
// folder, --set/--seed overrides, errors naming file and line, the generator as `jobs generate`, energy from the
// section or the options, sweeps of jobs scenarios with --resume, and a job with only a target accuracy ends when the
// equivalent epochs would.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_test_support.h"
#include "omnilearn/traces/metric_curves.h"

namespace omnilearn::cli::testing {
namespace {

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(read_file(p)); }

// A job file without its comment lines (they name the command that wrote it).
std::string job_lines(const fs::path& p) {
  std::istringstream in(read_file(p));
  std::string line, out;
  while (std::getline(in, line)) {
    if (!line.starts_with("#")) out += line + "\n";
  }
  return out;
}

TEST(CliJobsScenario, FileAndEquivalentOptionsGiveTheSameRunFolder) {
  TempDir tmp;
  const std::string jobs = tmp.at("w.csv");
  ASSERT_EQ(run_omnilearn({"jobs", "generate", "--jobs", "8", "--load", "0.8", "--cluster-gpus", "64", "--seed", "4",
                           "--output", jobs}, tmp.path()).exit_code, 0);
  const std::string scenario = tmp.write("w.yaml",
                                         "kind: jobs\nname: w\nworkload: {file: w.csv}\ncluster: sia\n"
                                         "scheduler: las\nround: 120\nrestore: 30\nplacement: spread\n");
  const RunResult a = run_omnilearn({"jobs", "run", scenario, "--quiet", "--out", tmp.at("a")}, tmp.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const RunResult b = run_omnilearn({"jobs", "run", jobs, "--cluster", "sia", "--scheduler", "las", "--round", "120",
                                     "--restore", "30", "--placement", "spread", "--quiet", "--out", tmp.at("b")},
                                    tmp.path());
  ASSERT_EQ(b.exit_code, 0) << b.err;
  int files = 0;
  for (const auto& entry : fs::directory_iterator(tmp.at("a"))) {
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    ASSERT_TRUE(fs::exists(tmp.path() / "b" / name));
    if (name == "summary.json") {
      nlohmann::json x = read_json(entry.path()), y = read_json(tmp.path() / "b" / name);
      x.erase("argv");
      y.erase("argv");
      EXPECT_EQ(x, y);
    } else {
      EXPECT_EQ(read_file(entry.path()), read_file(tmp.path() / "b" / name));
    }
    ++files;
  }
  EXPECT_GE(files, 5);  // jobs.csv, allocations.csv, summary.json, timeline.json, manifest.json
  const nlohmann::json m = read_json(tmp.path() / "a" / "manifest.json");
  EXPECT_EQ(m["scenario"]["scheduler"], "las");
  EXPECT_EQ(m["scenario"]["placement"], "spread");
  EXPECT_FALSE(m.contains("argv"));
}

TEST(CliJobsScenario, EnergyFromTheSectionOrTheOptions) {
  TempDir tmp;
  const std::string jobs = tmp.at("w.csv");
  ASSERT_EQ(run_omnilearn({"jobs", "generate", "--jobs", "6", "--load", "0.8", "--cluster-gpus", "64", "--seed", "2",
                           "--output", jobs}, tmp.path()).exit_code, 0);
  const std::string scenario =
      tmp.write("w.yaml", "kind: jobs\nname: w\nworkload: {file: w.csv}\ncluster: sia\nenergy: {wait: idle}\n");
  const RunResult a = run_omnilearn({"jobs", "run", scenario, "--quiet", "--out", tmp.at("a")}, tmp.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("unallocated devices idle"), std::string::npos) << a.out;
  const RunResult b = run_omnilearn({"jobs", "run", jobs, "--cluster", "sia", "--wait", "idle", "--quiet", "--out",
                                     tmp.at("b")}, tmp.path());
  ASSERT_EQ(b.exit_code, 0) << b.err;
  for (const char* name : {"jobs.csv", "allocations.csv", "manifest.json"}) {
    EXPECT_EQ(read_file(tmp.path() / "a" / name), read_file(tmp.path() / "b" / name)) << name;
  }
  nlohmann::json x = read_json(tmp.path() / "a" / "summary.json"), y = read_json(tmp.path() / "b" / "summary.json");
  x.erase("argv");
  y.erase("argv");
  EXPECT_EQ(x, y);
  const nlohmann::json& e = x["energy"];
  EXPECT_EQ(e["wait"], "idle");
  EXPECT_NEAR(e["total_j"].get<double>(), e["jobs_j"].get<double>() + e["unallocated_idle_j"].get<double>(),
              1e-9 * e["total_j"].get<double>());
  EXPECT_GT(e["jobs_j"].get<double>(), 0.0);
  EXPECT_NE(read_file(tmp.path() / "a" / "jobs.csv").find(",rho,energy_j,compute_j,comm_j,wait_j,idle_j\n"),
            std::string::npos);
  // --energy alone: the section's defaults (wait auto); without either, no energy at all.
  const RunResult c = run_omnilearn({"jobs", "run", jobs, "--cluster", "sia", "--energy", "--quiet", "--out",
                                     tmp.at("c")}, tmp.path());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(read_json(tmp.path() / "c" / "summary.json")["energy"]["wait"], "auto");
  const RunResult d = run_omnilearn({"jobs", "run", jobs, "--cluster", "sia", "--quiet", "--out", tmp.at("d")},
                                    tmp.path());
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_FALSE(read_json(tmp.path() / "d" / "summary.json").contains("energy"));
  EXPECT_FALSE(read_json(tmp.path() / "d" / "manifest.json")["scenario"].contains("energy"));
  const RunResult bad = run_omnilearn({"jobs", "run", jobs, "--wait", "warm", "--out", tmp.at("e")}, tmp.path());
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("(--wait warm): energy.wait: expected auto, idle, busy or watts"), std::string::npos)
      << bad.err;
}

TEST(CliJobsScenario, SetAndSeedAreRecordedAndAnotherSeedDrawsAnotherWorkload) {
  TempDir tmp;
  const std::string scenario = source_path("scenarios/jobs/philly-gavel.yaml");
  const RunResult a = run_omnilearn({"jobs", "run", scenario, "--set", "workload.generate.jobs=6", "--set",
                                     "scheduler=las", "--seed", "2", "--quiet", "--out", tmp.at("a")},
                                    tmp.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const nlohmann::json m = read_json(tmp.path() / "a" / "manifest.json");
  EXPECT_EQ(m["scenario"]["scheduler"], "las");
  EXPECT_EQ(m["scenario"]["seed"], 2);
  EXPECT_EQ(m["scenario"]["workload"]["generate"]["jobs"], 6);
  EXPECT_EQ(read_json(tmp.path() / "a" / "summary.json")["scheduler"], "las");
  const RunResult b = run_omnilearn({"jobs", "run", scenario, "--set", "workload.generate.jobs=6", "--quiet", "--out",
                                     tmp.at("b")}, tmp.path());
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(job_lines(tmp.path() / "a" / "workload.csv"), job_lines(tmp.path() / "b" / "workload.csv"));
  // The default run folder: <outputs.dir>/<name>, against the working folder.
  const RunResult c = run_omnilearn({"jobs", "run", scenario, "--set", "workload.generate.jobs=3", "--quiet"},
                                    tmp.path());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_TRUE(fs::exists(tmp.path() / "runs" / "philly-gavel" / "summary.json"));
}

// Field `column` of the first job's row of a run's jobs.csv.
std::string first_job_field(const fs::path& jobs_csv, std::size_t column) {
  std::istringstream in(read_file(jobs_csv));
  std::string line;
  std::getline(in, line);  // header
  std::getline(in, line);
  std::istringstream row(line);
  std::string field;
  for (std::size_t i = 0; i <= column && std::getline(row, field, ','); ++i) {
  }
  return field;
}

TEST(CliJobsScenario, TargetOnlyJobEndsWhenTheEquivalentEpochsWould) {
  TempDir tmp;
  // ResNet-18 on CIFAR-10 (50,000 samples) at global batch 128 until 90% accuracy: the shipped curves' samples.
  auto curves = traces::read_metric_curve_table(source_path("traces/devices/metric-curves.csv"));
  ASSERT_TRUE(curves.is_ok()) << curves.status().message();
  auto samples = curves->samples_to_target("resnet18", 128, 0.9);
  ASSERT_TRUE(samples.is_ok()) << samples.status().message();
  char epochs[64];
  std::snprintf(epochs, sizeof epochs, "%.17g", *samples / 50000.0);
  const std::string header =
      "name,arrival_s,model,dataset,dataset_samples,epochs,target,workers,min_workers,max_workers,global_batch,mode,"
      "batch_policy\n";
  const auto run = [&](const std::string& name, const std::string& epochs_field, const std::string& target_field) {
    const std::string file = tmp.write(name + ".csv", header + "j,0,resnet18,cifar10,50000," + epochs_field + "," +
                                                          target_field + ",4,4,4,128,bsp,uniform\n");
    const RunResult r = run_omnilearn({"jobs", "run", file, "--cluster", "sia", "--quiet", "--out", tmp.at(name)},
                                      tmp.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return std::make_pair(first_job_field(tmp.path() / name / "jobs.csv", 3),
                          first_job_field(tmp.path() / name / "jobs.csv", 7));
  };
  const auto target = run("target", "", "0.9");
  const auto equivalent = run("epochs", epochs, "");
  EXPECT_FALSE(target.first.empty());
  EXPECT_EQ(target.first, equivalent.first);    // end_s
  EXPECT_EQ(target.second, equivalent.second);  // samples
  EXPECT_GT(std::stod(target.second), 10 * 50000.0);
  // Epochs and a target: the epochs decide (one epoch, far short of 90%).
  const auto both = run("both", "1", "0.9");
  EXPECT_EQ(both.second, "50048");  // 391 steps of 128
  // A target never measured, and a model without curves, are refused with the job's name.
  const std::string file = tmp.write("far.csv", header + "far,0,resnet18,cifar10,50000,,0.99,4,4,4,128,bsp,uniform\n");
  RunResult r = run_omnilearn({"jobs", "run", file, "--cluster", "sia", "--quiet", "--out", tmp.at("far")}, tmp.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("job 'far': model 'resnet18' (cifar10) at global batch 128 never reaches the target 0.99"),
            std::string::npos)
      << r.err;
  const std::string other = tmp.write("lm.csv", header + "lm,0,lm,wikitext-2,59675,,0.5,1,1,1,20,bsp,uniform\n");
  r = run_omnilearn({"jobs", "run", other, "--cluster", "sia", "--quiet", "--out", tmp.at("lm")}, tmp.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("job 'lm': model 'lm' has no measured metric curve"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("models with curves: bert, deepspeech2, ncf, resnet18, resnet50, yolov3"), std::string::npos)
      << r.err;
}

TEST(CliJobsScenario, ErrorsNameFileLineAndField) {
  TempDir tmp;
  const std::string bad = tmp.write("bad.yaml", "kind: jobs\nworkload: {file: x.csv}\nschedular: las\n");
  RunResult r = run_omnilearn({"jobs", "run", bad, "--out", tmp.at("o")}, tmp.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.yaml:3: schedular: unknown key"), std::string::npos) << r.err;
  const std::string scenario = source_path("scenarios/jobs/philly-gavel.yaml");
  r = run_omnilearn({"jobs", "run", scenario, "--set", "round=-5", "--out", tmp.at("o")}, tmp.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("(--set round=-5): round:"), std::string::npos) << r.err;
  r = run_omnilearn({"jobs", "run", source_path("scenarios/examples/quick.yaml"), "--out", tmp.at("o")}, tmp.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("run it with omnilearn sim"), std::string::npos) << r.err;
  r = run_omnilearn({"sim", scenario, "--out", tmp.at("o")}, tmp.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("omnilearn jobs run"), std::string::npos) << r.err;
  const std::string two = tmp.write("two.yaml", "kind: jobs\nworkload:\n  file: x.csv\n  generate: {jobs: 3}\n");
  r = run_omnilearn({"jobs", "run", two, "--out", tmp.at("o")}, tmp.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("two.yaml:4: workload.generate: give only one of file, generate, import"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp.path() / "o" / "summary.json"));
}

TEST(CliJobsScenario, TheGeneratorIsJobsGenerate) {
  TempDir tmp;
  const std::string scenario = tmp.write(
      "g.yaml", "kind: jobs\nseed: 3\nworkload:\n  generate: {jobs: 10, load: 0.8}\n  batch_policy: omnilearn\n"
                "cluster: gavel\n");
  const RunResult a = run_omnilearn({"jobs", "run", scenario, "--quiet", "--out", tmp.at("a")}, tmp.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  // Gavel's cluster: 108 GPUs.
  const RunResult g = run_omnilearn({"jobs", "generate", "--jobs", "10", "--load", "0.8", "--cluster-gpus", "108",
                                     "--seed", "3", "--batch-policy", "omnilearn", "--output", tmp.at("g.csv")},
                                    tmp.path());
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const std::string lines = job_lines(tmp.path() / "g.csv");
  EXPECT_EQ(job_lines(tmp.path() / "a" / "workload.csv"), lines);
  EXPECT_NE(lines.find(",omnilearn"), std::string::npos);
}

TEST(CliJobsScenario, ShippedSweepResumesOnlyUnfinishedPoints) {
  TempDir tmp;
  const std::string sweep = source_path("scenarios/jobs/sweep-philly.yaml");
  const std::vector<std::string> base{"sweep", sweep, "--jobs", "2", "--quiet", "--out", tmp.at("s"),
                                      "--set", "workload.generate.jobs=4"};
  RunResult r = run_omnilearn(base, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = read_file(tmp.path() / "s" / "sweep.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 17);  // header + 4 schedulers x 2 policies x 2 seeds
  EXPECT_TRUE(csv.starts_with("point,scheduler,job_policy,seed,status,round_s,jobs,finished,mean_jct_s,"
                              "median_jct_s,p99_jct_s,makespan_s,rounds,stopped,utilisation_"))
      << csv.substr(0, 200);
  EXPECT_NE(r.out.find("mean JCT (s)"), std::string::npos) << r.out;
  std::vector<std::string> resume = base;
  resume.push_back("--resume");
  r = run_omnilearn(resume, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("16 of 16 points are finished, running 0"), std::string::npos) << r.err;
  // A point stopped by a signal, and one whose summary is gone, run again; the others do not.
  const fs::path stopped = tmp.path() / "s" / "sweep-philly-las-omnilearn-2" / "summary.json";
  nlohmann::json j = read_json(stopped);
  j["stopped"] = "stopped on request at 60 s (simulated)";
  std::ofstream(stopped) << j.dump();
  fs::remove(tmp.path() / "s" / "sweep-philly-fifo-uniform-1" / "summary.json");
  const fs::path kept = tmp.path() / "s" / "sweep-philly-gavel-uniform-1" / "summary.json";
  const auto kept_time = fs::last_write_time(kept);
  r = run_omnilearn(resume, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("14 of 16 points are finished, running 2"), std::string::npos) << r.err;
  EXPECT_FALSE(read_json(stopped).contains("stopped"));
  EXPECT_TRUE(fs::exists(tmp.path() / "s" / "sweep-philly-fifo-uniform-1" / "summary.json"));
  EXPECT_EQ(fs::last_write_time(kept), kept_time);
  // SimGrid settings mean nothing to a jobs run.
  r = run_omnilearn({"sweep", sweep, "--cfg=network/model:CM02", "--out", tmp.at("t")}, tmp.path());
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace omnilearn::cli::testing
