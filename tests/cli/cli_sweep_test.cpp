// `omnilearn sweep` end to end: a failing point does not stop the others; --mpi under mpirun gives the same
// sweep.csv as a local run; --emit-slurm writes one array task per point; --gather rebuilds sweep.csv.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "cli_test_support.h"

namespace omnilearn::cli::testing {
namespace {

// A 2 x 2 sweep over quick.yaml; every point simulates in well under a second.
void write_small_sweep(const TempDir& dir, const std::string& extra_axis = "") {
  dir.write("quick.yaml", quick_yaml());
  dir.write("small.yaml",
            "name: small\nbase: quick.yaml\naxes:\n  policy.every_n: [2, 4]\n"
            "  policy.name: [uniform, omnilearn]\n" +
                extra_axis);
}

std::vector<std::string> csv_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

RunResult local_sweep(const TempDir& dir, const std::string& sweep, const std::string& out) {
  return run_omnilearn({"sweep", dir.at(sweep), "--quiet", "--jobs", "2", "--out", dir.at(out)}, dir.path());
}

TEST(CliSweep, AFailingPointIsReportedAndTheOthersStillRun) {
  TempDir dir;
  dir.write("good.csv", "time_s,worker,fraction\n0,fast,1.0\n0,slow,1.0\n1,slow,0.5\n");
  dir.write("bad.csv", "time_s,worker,fraction\n0,fast,banana\n");  // exists (the load check passes), fails to parse
  dir.write(
      "traced.yaml",
      quick_yaml("availability:\n  schedule:\n    unit: seconds\n    phases:\n      - {at: 0, fractions: [1.0, 1.0]}\n"
                 "      - {at: 0.5s, cores: [4, 1]}\n",
                 "availability:\n  trace: {path: good.csv, nodes: [fast, slow]}\n"));
  dir.write("sweep.yaml",
            "name: f\nbase: traced.yaml\naxes:\n  availability.trace.path: [good.csv, bad.csv]\n"
            "  policy.name: [uniform, omnilearn]\n");
  const RunResult r = local_sweep(dir, "sweep.yaml", "out");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("point f-bad.csv-uniform failed (exit 1)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("point f-bad.csv-omnilearn failed (exit 1)"), std::string::npos) << r.err;
  EXPECT_NE(read_file(dir.at("out/f-bad.csv-uniform.log")).find("bad.csv:2"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir.at("out/f-good.csv-uniform/summary.json")));
  EXPECT_TRUE(fs::exists(dir.at("out/f-good.csv-omnilearn/summary.json")));
  const auto lines = csv_lines(read_file(dir.at("out/sweep.csv")));
  ASSERT_EQ(lines.size(), 5u);
  // Virtual-time training's and the testbed's accuracy columns (empty for a time-only run).
  EXPECT_NE(lines[0].find(",batch_changes,final_accuracy,time_to_target_s,vs_uniform_pct,"), std::string::npos)
      << lines[0];
  EXPECT_EQ(lines[1].rfind("f-good.csv-uniform,good.csv,uniform,ok,uniform,bsp,2,8,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("f-good.csv-omnilearn,good.csv,omnilearn,ok,omnilearn,", 0), 0u) << lines[2];
  EXPECT_EQ(lines[3], "f-bad.csv-uniform,bad.csv,uniform,failed (exit 1),,,,,,,,,,,,,,,,");
  EXPECT_EQ(lines[4], "f-bad.csv-omnilearn,bad.csv,omnilearn,failed (exit 1),,,,,,,,,,,,,,,,");
  EXPECT_NE(r.out.find("4 points, 2 failed"), std::string::npos) << r.out;
}

// Off a terminal (stderr to a file here) the sweep prints one plain line per finished point, with the failures,
// the elapsed time and the time left; its points write no timeline.json unless the sweep asks for it.
TEST(CliSweep, OffATerminalProgressIsPlainLinesAndTimelinesAreOffUnlessAsked) {
  TempDir dir;
  write_small_sweep(dir, "  policy.min_batch: [8, 1000]\n");  // 8 points, the 4 with min_batch 1000 fail
  const RunResult r = run_omnilearn({"sweep", dir.at("small.yaml"), "--jobs", "2", "--out", dir.at("out")}, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::regex line(R"(sweep small: ([0-9]+)/8 done( \(([0-9]+) failed\))?, elapsed [0-9]+s(, eta [0-9]+s)?)");
  int lines = 0, last_done = 0, last_failed = 0;
  for (const std::string& l : csv_lines(r.err)) {
    std::smatch m;
    if (!std::regex_match(l, m, line)) continue;
    ++lines;
    EXPECT_EQ(std::stoi(m[1]), last_done + 1) << l;  // one line per finished point, in order
    last_done = std::stoi(m[1]);
    if (m[3].matched) last_failed = std::stoi(m[3]);
    EXPECT_EQ(m[4].matched, last_done < 8) << l;  // an estimate until the last point
  }
  EXPECT_EQ(lines, 8) << r.err;
  EXPECT_EQ(last_failed, 4) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "a terminal bar off a terminal";
  for (const char* point : {"small-2-uniform-8", "small-4-omnilearn-8"}) {
    EXPECT_TRUE(fs::exists(dir.at(std::string("out/") + point + "/summary.json"))) << point;
    EXPECT_FALSE(fs::exists(dir.at(std::string("out/") + point + "/timeline.json"))) << point;
  }
  // Asked on the command line: every point writes its timeline; --quiet prints no progress.
  const RunResult asked = run_omnilearn({"sweep", dir.at("small.yaml"), "--quiet", "--out", dir.at("asked"), "--set",
                                         "outputs.timeline=true", "--set", "policy.min_batch=8"},
                                        dir.path());
  EXPECT_EQ(asked.exit_code, 0) << asked.err;
  EXPECT_EQ(asked.err.find("done"), std::string::npos) << asked.err;
  EXPECT_TRUE(fs::exists(dir.at("asked/small-2-uniform-1000/timeline.json")));
  // Asked in the sweep file (`set:`).
  dir.write("with.yaml",
            "name: with\nbase: quick.yaml\nset: {outputs.timeline: true}\naxes:\n  policy.name: [uniform]\n");
  EXPECT_EQ(local_sweep(dir, "with.yaml", "with").exit_code, 0);
  EXPECT_TRUE(fs::exists(dir.at("with/with-uniform/timeline.json")));
}

// Bounds that cannot hold the global batch: the point is named up front, fails on its own, and the others run.
TEST(CliSweep, AnInvalidPointFailsAloneAndIsNamed) {
  TempDir dir;
  dir.write("quick.yaml", quick_yaml());
  dir.write("sweep.yaml", "name: m\nbase: quick.yaml\naxes:\n  policy.min_batch: [8, 1000]\n");
  const RunResult r = local_sweep(dir, "sweep.yaml", "out");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("point 'm-1000'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("policy.max_batch: expected min_batch <= max_batch"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir.at("out/m-8/summary.json")));
  EXPECT_FALSE(fs::exists(dir.at("out/m-1000/summary.json")));
}

TEST(CliSweep, MpiRunGivesTheSameSweepCsvAsALocalRun) {
  const std::string mpirun = find_on_path("mpirun");
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH (install openmpi-bin: scripts/setup.sh)";
  TempDir dir;
  write_small_sweep(dir);
  const RunResult local = local_sweep(dir, "small.yaml", "local");
  ASSERT_EQ(local.exit_code, 0) << local.err;
  // Loopback only: the test machine may have no other network. `timeout` (coreutils) bounds a hung launch.
  std::vector<std::string> command{mpirun, "--allow-run-as-root", "-np", "2", "--oversubscribe"};
  for (const char* mca : {"btl=self,tcp", "btl_tcp_if_include=lo", "oob_tcp_if_include=lo"}) {
    const std::string kv = mca;
    command.insert(command.end(), {"--mca", kv.substr(0, kv.find('=')), kv.substr(kv.find('=') + 1)});
  }
  command.insert(command.end(), {OMNILEARN_BIN, "sweep", dir.at("small.yaml"), "--mpi", "--jobs", "1", "--quiet",
                                 "--out", dir.at("mpi")});
  const std::string timeout = find_on_path("timeout");
  if (!timeout.empty()) command.insert(command.begin(), {timeout, "120"});
  const std::string program = command.front();
  command.erase(command.begin());
  const RunResult mpi =
      run_program(program, command, dir.path(), {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"});
  if (mpi.err.find("built without MPI") != std::string::npos) GTEST_SKIP() << "omnilearn was built without MPI";
  ASSERT_EQ(mpi.exit_code, 0) << mpi.out << mpi.err;
  const std::string csv = read_file(dir.at("mpi/sweep.csv"));
  EXPECT_EQ(csv_lines(csv).size(), 5u) << csv;
  EXPECT_EQ(csv, read_file(dir.at("local/sweep.csv")));
  EXPECT_NE(mpi.out.find("4 points, 0 failed"), std::string::npos) << mpi.out;  // the table, printed once by rank 0
  EXPECT_EQ(mpi.out.find("4 points, 0 failed"), mpi.out.rfind("4 points, 0 failed")) << mpi.out;
}

TEST(CliSweep, GatherRebuildsTheSweepCsvOfANormalSweep) {
  TempDir dir;
  write_small_sweep(dir);
  ASSERT_EQ(local_sweep(dir, "small.yaml", "out").exit_code, 0);
  const std::string original = read_file(dir.at("out/sweep.csv"));
  fs::remove(dir.at("out/sweep.csv"));
  RunResult r = run_omnilearn({"sweep", dir.at("small.yaml"), "--gather", "--out", dir.at("out")}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir.at("out/sweep.csv")), original);
  // A point without results is a "missing" row, and the exit code says the sweep is incomplete.
  fs::remove_all(dir.at("out/small-4-omnilearn"));
  r = run_omnilearn({"sweep", dir.at("small.yaml"), "--gather", "--out", dir.at("out")}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("point small-4-omnilearn has no results"), std::string::npos) << r.err;
  EXPECT_NE(read_file(dir.at("out/sweep.csv")).find("small-4-omnilearn,4,omnilearn,missing,"), std::string::npos);
}

TEST(CliSweep, EmitSlurmWritesOneArrayTaskPerPointAndGathers) {
  TempDir dir;
  // A value with a space and a quote: it must reach `omnilearn sim` as one word.
  write_small_sweep(dir, "  name: [\"run one\", \"it's two\"]\n");
  const std::string script_path = dir.at("small.slurm");
  const RunResult r = run_omnilearn({"sweep", dir.at("small.yaml"), "--emit-slurm", script_path, "--out",
                                     dir.at("slurm out"), "--slurm-time", "00:20:00", "--slurm-cpus", "2"},
                                    dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sbatch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--gather"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir.at("slurm out/sweep.csv")));  // nothing ran
  const std::string script = read_file(script_path);
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  for (const char* line :
       {"#SBATCH --array=0-7\n", "#SBATCH --job-name=omnilearn-small\n", "#SBATCH --cpus-per-task=2\n",
        "#SBATCH --time=00:20:00\n", "#SBATCH --output=\"" /* the out folder has a space */}) {
    EXPECT_NE(script.find(line), std::string::npos) << line << " not in:\n" << script;
  }
  EXPECT_NE(script.find("slurm-%A_%a.out"), std::string::npos);
  for (int task = 0; task < 8; ++task) {
    EXPECT_NE(script.find("\n  " + std::to_string(task) + ")\n"), std::string::npos) << task;
  }
  EXPECT_EQ(script.find("\n  8)\n"), std::string::npos);
  EXPECT_NE(script.find("'--set' 'name=run one'"), std::string::npos) << script;
  EXPECT_NE(script.find("'--set' 'name=it'\\''s two'"), std::string::npos) << script;
  EXPECT_NE(script.find("--gather --out '" + dir.at("slurm out") + "'"), std::string::npos) << script;

  // Run every array task the way SLURM would, then gather: the same sweep.csv as a normal sweep.
  const std::string bash = find_on_path("bash");
  if (bash.empty()) GTEST_SKIP() << "bash is not on PATH: the script's content was checked, not run";
  for (int task = 0; task < 8; ++task) {
    const RunResult t =
        run_program(bash, {script_path}, dir.path(),
                    {"SLURM_ARRAY_TASK_ID=" + std::to_string(task), std::string("OMNILEARN=") + OMNILEARN_BIN});
    ASSERT_EQ(t.exit_code, 0) << "task " << task << ": " << t.err;
  }
  EXPECT_EQ(run_program(bash, {script_path}, dir.path(), {"SLURM_ARRAY_TASK_ID=8"}).exit_code, 2);
  EXPECT_EQ(read_file(dir.at("slurm out/small-2-uniform-run_one.exit")), "0\n");
  const RunResult gather =
      run_omnilearn({"sweep", dir.at("small.yaml"), "--gather", "--out", dir.at("slurm out")}, dir.path());
  ASSERT_EQ(gather.exit_code, 0) << gather.err;
  ASSERT_EQ(local_sweep(dir, "small.yaml", "local").exit_code, 0);
  EXPECT_EQ(read_file(dir.at("slurm out/sweep.csv")), read_file(dir.at("local/sweep.csv")));
  // The scenario name with a space reached the run as one word.
  EXPECT_NE(read_file(dir.at("slurm out/small-4-omnilearn-it_s_two/manifest.json")).find("it's two"),
            std::string::npos);
}

TEST(CliSweep, GatherWithoutTheOutputFolderSaysSo) {
  TempDir dir;
  write_small_sweep(dir);
  const RunResult r =
      run_omnilearn({"sweep", dir.at("small.yaml"), "--gather", "--out", dir.at("never_made")}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--gather: no folder " + dir.at("never_made")), std::string::npos) << r.err;
}

TEST(CliSweep, GatherReadsTheExitStatusASlurmTaskRecorded) {
  TempDir dir;
  write_small_sweep(dir);
  fs::create_directories(dir.at("out"));
  dir.write("out/small-2-uniform.exit", "3\n");
  const RunResult r = run_omnilearn({"sweep", dir.at("small.yaml"), "--gather", "--out", dir.at("out")}, dir.path());
  EXPECT_EQ(r.exit_code, 1);
  const std::string csv = read_file(dir.at("out/sweep.csv"));
  EXPECT_NE(csv.find("small-2-uniform,2,uniform,failed (exit 3),"), std::string::npos) << csv;
  EXPECT_NE(csv.find("small-4-omnilearn,4,omnilearn,missing,"), std::string::npos) << csv;
}

// Issue 12: a newline in the sweep file's path injected a command into the --emit-slurm script (it ended the
// header comment). Control characters are now refused, and every other value is quoted for bash: running the
// script with a harmless stand-in binary runs no `$(...)` and no backquote from any path or value.
TEST(CliSweep, EmitSlurmCannotBeMadeToRunAnInjectedCommand) {
  TempDir dir;
  const std::string newline_folder = "evil\ntouch INJECTED_NL\n";
  dir.write(newline_folder + "/quick.yaml", quick_yaml());
  const std::string newline_sweep =
      dir.write(newline_folder + "/small.yaml", "name: small\nbase: quick.yaml\naxes:\n  seed: [1, 2]\n");
  RunResult r = run_omnilearn({"sweep", newline_sweep, "--emit-slurm", dir.at("nl.slurm"), "--out", dir.at("out")},
                              dir.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("the sweep file's path"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("control character"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.at("nl.slurm")));

  // Quotes, $(...) and backquotes everywhere else: in the folder, the output folder and an axis value.
  const std::string folder = "it's $(touch INJECTED_1) `touch INJECTED_2`";
  dir.write(folder + "/quick.yaml", quick_yaml());
  const std::string sweep = dir.write(
      folder + "/small.yaml",
      "name: small\nbase: quick.yaml\naxes:\n  name: [\"$(touch INJECTED_3)\", \"'; touch INJECTED_4; '\"]\n");
  const std::string out = dir.at("o$(touch INJECTED_5)'`touch INJECTED_6`");
  const std::string script = dir.at("evil.slurm");
  r = run_omnilearn({"sweep", sweep, "--emit-slurm", script, "--out", out}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string bash = find_on_path("bash");
  if (bash.empty()) GTEST_SKIP() << "bash is not on PATH: the refusal was checked, the script not run";
  EXPECT_EQ(run_program(bash, {"-n", script}, dir.path()).exit_code, 0) << read_file(script);
  for (int task = 0; task < 2; ++task) {
    const RunResult t = run_program(bash, {script}, dir.path(),
                                    {"SLURM_ARRAY_TASK_ID=" + std::to_string(task), "OMNILEARN=/bin/true"});
    EXPECT_EQ(t.exit_code, 0) << t.err;
  }
  // The folders' own names hold the text; a file named exactly INJECTED_<n> would mean a command ran.
  for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
    const std::string name = entry.path().filename().string();
    EXPECT_FALSE(name.rfind("INJECTED_", 0) == 0 && name.size() <= 11) << entry.path();
  }
}

}  // namespace
}  // namespace omnilearn::cli::testing
