// The testbed across hosts, on this machine: two network namespaces joined by a veth pair (10.231.x.1/24 and
// .2/24, private and only inside the namespaces), each running `omnilearn emulate --nnodes 2 --node-rank R` with two
// of a 4-worker BSP scenario's workers (or placed by torchrun's and SLURM's variables alone). Checks the run folder
// parts, and that a worker killed on node 1 stops both launchers. Needs root and iproute2's `ip`; skips with the
// reason otherwise. The namespaces are always deleted.
//
// The launchers enter their namespace with setns(2) on /run/netns/NAME (what `nsenter --net` does), not with
// `ip netns exec`: that one remounts /sys for the namespace, which hides the cgroup tree the launcher needs.
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "omnilearn/base/subprocess.h"
#include "omnilearn/emulator/dataset_cache.h"
#include "omnilearn/emulator/emulator_config.h"
#include "omnilearn/emulator/cgroup_throttler.h"
#include "test_scenarios.h"

extern char** environ;

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::optional<std::string> find_ip() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (::access(p, X_OK) == 0) return std::string(p);
  }
  return std::nullopt;
}

// Runs argv (no shell) and returns its exit code (-1 if it could not start or was killed).
int run_command(const std::vector<std::string>& argv) {
  auto status = Subprocess::run(argv);
  return status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
}

// Two namespaces omni-<pid>-a/b and a veth pair between them; deleted by the destructor whatever happened.
class NamespacePair {
 public:
  NamespacePair(std::string ip, int subnet) : ip_(std::move(ip)), subnet_(subnet) {
    const std::string tag = "omni-" + std::to_string(::getpid());
    names_ = {tag + "-a", tag + "-b"};
  }
  ~NamespacePair() {
    for (const auto& n : names_) {
      if (created_.count(n) != 0) run_command({ip_, "netns", "del", n});  // takes the veth ends with it
    }
  }
  NamespacePair(const NamespacePair&) = delete;
  NamespacePair& operator=(const NamespacePair&) = delete;

  // Creates both namespaces, the veth pair, the addresses, and brings every link up. "" or what failed.
  std::string create() {
    const std::string veth[2] = {"omv" + std::to_string(::getpid()) + "a", "omv" + std::to_string(::getpid()) + "b"};
    for (const auto& n : names_) {
      if (run_command({ip_, "netns", "add", n}) != 0) return "ip netns add " + n + " failed";
      created_.insert(n);
    }
    const std::vector<std::vector<std::string>> steps = {
        {ip_, "link", "add", veth[0], "netns", names_[0], "type", "veth", "peer", "name", veth[1], "netns", names_[1]},
        {ip_, "-n", names_[0], "addr", "add", address(0) + "/24", "dev", veth[0]},
        {ip_, "-n", names_[1], "addr", "add", address(1) + "/24", "dev", veth[1]},
        {ip_, "-n", names_[0], "link", "set", "lo", "up"},
        {ip_, "-n", names_[1], "link", "set", "lo", "up"},
        {ip_, "-n", names_[0], "link", "set", veth[0], "up"},
        {ip_, "-n", names_[1], "link", "set", veth[1], "up"},
    };
    for (const auto& s : steps) {
      if (run_command(s) != 0) {
        std::string line;
        for (const auto& a : s) line += a + " ";
        return "failed: " + line;
      }
    }
    return "";
  }
  const std::string& name(int node) const { return names_[static_cast<std::size_t>(node)]; }
  std::string address(int node) const {
    return "10.231." + std::to_string(subnet_) + "." + std::to_string(node + 1);
  }

 private:
  std::string ip_;
  int subnet_;
  std::vector<std::string> names_;
  std::set<std::string> created_;
};

// A launcher started inside a namespace: setns(CLONE_NEWNET) in the child before exec, stdout+stderr to `log`. It dies
// with the test, and its destructor kills and reaps it if it still runs (its workers die with it:
// PR_SET_PDEATHSIG), before the namespaces go.
class Launcher {
 public:
  // `extra_env` ("NAME=value") replaces those variables of this process's environment.
  Launcher(const std::string& netns, const std::vector<std::string>& argv, const std::string& log,
           const std::vector<std::string>& extra_env = {}) {
    SpawnOptions options;
    options.env = extra_env;
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string kv(*e);
      bool replaced = false;
      for (const auto& x : extra_env) replaced |= kv.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0;
      if (!replaced) options.env->push_back(kv);
    }
    options.stdout_file = options.stderr_file = log;
    const int ns = ::open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC);
    options.in_child = [ns] { return ns >= 0 && ::setns(ns, CLONE_NEWNET) == 0; };  // async-signal-safe
    auto child = Subprocess::start(argv, options);
    if (ns >= 0) ::close(ns);
    if (child) {
      child_.emplace(std::move(child).value());
    } else {
      ADD_FAILURE() << "cannot start the launcher in " << netns << ": " << child.status().message();
    }
  }
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  pid_t pid() const { return child_ ? child_->pid() : -1; }
  // Waits up to `limit` for the exit; the exit code, 128 + signal, or nullopt while it still runs.
  std::optional<int> wait_for(std::chrono::seconds limit) {
    const auto deadline = Clock::now() + limit;
    while (child_ && !child_->poll_exit() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!child_ || !child_->exited()) return std::nullopt;
    const int status = child_->status();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // The launcher's direct children (its worker processes).
  std::vector<pid_t> children() const {
    std::ifstream in("/proc/" + std::to_string(pid()) + "/task/" + std::to_string(pid()) + "/children");
    std::vector<pid_t> out;
    for (pid_t p; in >> p;) out.push_back(p);
    return out;
  }

 private:
  std::optional<Subprocess> child_;  // SIGKILLed and reaped on destruction if it still runs
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Rows of iterations.csv per worker (first column).
std::map<int, int> rows_per_worker(const std::string& path) {
  std::ifstream in(path);
  std::map<int, int> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (!line.empty()) ++rows[std::stoi(line.substr(0, line.find(',')))];
  }
  return rows;
}

// Sum of batches per controller decision in plans.csv (step,epoch,time_s,reason,changed,imbalance,worker,batch,weight).
std::vector<long> plan_sums(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, long> sums;  // keyed by the row's first six cells (one decision)
  std::vector<std::string> order;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    if (cells.size() < 8) continue;
    const std::string key = cells[0] + "," + cells[1] + "," + cells[2] + "," + cells[3];
    if (sums.count(key) == 0) order.push_back(key);
    sums[key] += std::stol(cells[7]);
  }
  std::vector<long> out;
  for (const auto& k : order) out.push_back(sums[k]);
  return out;
}

class MultiHost : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces and cgroups)";
    ip_ = find_ip();
    if (!ip_) GTEST_SKIP() << "iproute2's ip not found (scripts/setup.sh installs iproute2)";
    if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
      GTEST_SKIP() << "Fashion-MNIST missing: install the Debian package dataset-fashion-mnist";
    }
    if (const Status access = check_cgroup_access(); !access.is_ok()) {
      GTEST_SKIP() << "no cgroup write access: " << access.message();
    }
    // Decompress the dataset once here, so the two launchers do not race on the cache.
    const auto prepared = prepare_fashion_mnist(scenarios::EmulatorSpec{}.data_source, default_dataset_cache_dir());
    ASSERT_TRUE(prepared.is_ok()) << prepared.status().message();
  }

  // argv of node `node`'s launcher.
  // The shared secret as a file (chmod 600, as --secret-file requires) in `dir`.
  static std::string secret_file(const std::string& dir, const std::string& name, const std::string& secret) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << secret << "\n";
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
    return path;
  }

  std::vector<std::string> launcher_argv(const NamespacePair& ns, const std::string& scenario, const std::string& out,
                                         int node, int port, const std::string& secret_path) const {
    return {OMNILEARN_CLI, "emulate", scenario, "--nnodes", "2", "--node-rank", std::to_string(node),
            "--master", ns.address(0) + ":" + std::to_string(port), "--bind", ns.address(node), "--out", out,
            "--secret-file", secret_path, "--target-accuracy", "0", "--set", "emulator.eval_samples=500"};
  }

  std::optional<std::string> ip_;
  const int subnet_ = 1 + ::getpid() % 250;
  const int port_ = 29500 + ::getpid() % 1000;  // in a fresh namespace every port is free
};

TEST_F(MultiHost, TwoNamespacesTrainOneBspRun) {
  NamespacePair ns(*ip_, subnet_);
  const std::string error = ns.create();
  ASSERT_EQ(error, "");
  const std::string dir = testing::fresh_dir("multihost");
  // 4 workers (2 per node), 512 samples, global batch 64, 1 epoch: 8 steps.
  const std::string scenario = testing::write_scenario(dir, "mh", 4, "", 512, 64, 1);
  const std::string out = dir + "/run";
  const std::string secret = secret_file(dir, "secret", "the run's shared secret");
  Launcher node0(ns.name(0), launcher_argv(ns, scenario, out, 0, port_, secret), dir + "/node0.log");
  Launcher node1(ns.name(1), launcher_argv(ns, scenario, out, 1, port_, secret), dir + "/node1.log");
  const auto rc0 = node0.wait_for(std::chrono::seconds(120));
  const auto rc1 = node1.wait_for(std::chrono::seconds(20));
  std::printf("node 0:\n%snode 1:\n%s", read_file(dir + "/node0.log").c_str(), read_file(dir + "/node1.log").c_str());
  ASSERT_TRUE(rc0.has_value()) << "node 0 did not finish in 120 s";
  ASSERT_TRUE(rc1.has_value()) << "node 1 did not finish";
  EXPECT_EQ(*rc0, 0);
  EXPECT_EQ(*rc1, 0);

  // Node 0's folder: every worker's rows (workers 2 and 3 derived from the all-reduced facts), plans, summary.
  EXPECT_EQ(rows_per_worker(out + "/iterations.csv"), (std::map<int, int>{{0, 8}, {1, 8}, {2, 8}, {3, 8}}));
  const std::vector<long> sums = plan_sums(out + "/plans.csv");
  ASSERT_FALSE(sums.empty());
  for (long s : sums) EXPECT_EQ(s, 64);
  ASSERT_TRUE(fs::exists(out + "/summary.json"));
  const auto summary = nlohmann::json::parse(std::ifstream(out + "/summary.json"));
  EXPECT_EQ(summary["workers"].get<int>(), 4);
  EXPECT_EQ(summary["iterations"].get<int>(), 8);
  // Node 1's part: its own workers' measured rows, no summary.
  EXPECT_EQ(rows_per_worker(out + "/node1/iterations.csv"), (std::map<int, int>{{2, 8}, {3, 8}}));
  EXPECT_FALSE(fs::exists(out + "/node1/summary.json"));
  const auto manifest = nlohmann::json::parse(std::ifstream(out + "/node1/manifest.json"));
  EXPECT_EQ(manifest["nodes"]["bind"].get<std::string>(), ns.address(1));
  EXPECT_EQ(manifest["nodes"]["node_rank"].get<int>(), 1);
  const auto manifest0 = nlohmann::json::parse(std::ifstream(out + "/manifest.json"));
  for (const auto& m : {manifest0, manifest}) {
    const std::string folder = m["cgroup_folder"].get<std::string>();
    for (const char* c : {"cpu", "cpuacct", "freezer"}) {
      EXPECT_FALSE(fs::exists(fs::path("/sys/fs/cgroup") / c / folder)) << c << "/" << folder << " left behind";
    }
  }
}

// The same run with no --nnodes, --node-rank or --master: node 0 reads torchrun's variables, node 1 SLURM's (its
// master is the first host of SLURM_JOB_NODELIST, the port MASTER_PORT). The secret comes from OMNILEARN_SECRET.
TEST_F(MultiHost, TwoNamespacesPlacedByTorchrunAndSlurmVariablesAlone) {
  NamespacePair ns(*ip_, subnet_);
  const std::string error = ns.create();
  ASSERT_EQ(error, "");
  const std::string dir = testing::fresh_dir("multihost-env");
  const std::string scenario = testing::write_scenario(dir, "mhenv", 4, "", 512, 64, 1);
  const std::string out = dir + "/run";
  auto argv = [&](int node) {
    return std::vector<std::string>{OMNILEARN_CLI, "emulate", scenario, "--bind", ns.address(node), "--out", out,
                                    "--target-accuracy", "0", "--set", "emulator.eval_samples=500"};
  };
  const std::string port = std::to_string(port_);
  const std::vector<std::string> torchrun = {"MASTER_ADDR=" + ns.address(0), "MASTER_PORT=" + port, "WORLD_SIZE=2",
                                             "RANK=0", "LOCAL_WORLD_SIZE=1", "OMNILEARN_SECRET=env secret"};
  const std::vector<std::string> slurm = {"SLURM_NTASKS=2", "SLURM_NNODES=2", "SLURM_PROCID=1", "SLURM_NODEID=1",
                                          "SLURM_JOB_NODELIST=" + ns.address(0), "MASTER_PORT=" + port,
                                          "OMNILEARN_SECRET=env secret"};
  Launcher node0(ns.name(0), argv(0), dir + "/node0.log", torchrun);
  Launcher node1(ns.name(1), argv(1), dir + "/node1.log", slurm);
  const auto rc0 = node0.wait_for(std::chrono::seconds(120));
  const auto rc1 = node1.wait_for(std::chrono::seconds(20));
  const std::string log0 = read_file(dir + "/node0.log"), log1 = read_file(dir + "/node1.log");
  std::printf("node 0:\n%snode 1:\n%s", log0.c_str(), log1.c_str());
  ASSERT_TRUE(rc0.has_value()) << "node 0 did not finish in 120 s";
  ASSERT_TRUE(rc1.has_value()) << "node 1 did not finish";
  EXPECT_EQ(*rc0, 0);
  EXPECT_EQ(*rc1, 0);
  EXPECT_NE(log0.find("2 nodes (WORLD_SIZE), node rank 0 (RANK)"), std::string::npos);
  EXPECT_NE(log1.find("2 nodes (SLURM_NTASKS), node rank 1 (SLURM_PROCID), master " + ns.address(0) + ":" + port +
                      " (SLURM_JOB_NODELIST, MASTER_PORT)"),
            std::string::npos);
  EXPECT_EQ(rows_per_worker(out + "/iterations.csv"), (std::map<int, int>{{0, 8}, {1, 8}, {2, 8}, {3, 8}}));
  EXPECT_EQ(rows_per_worker(out + "/node1/iterations.csv"), (std::map<int, int>{{2, 8}, {3, 8}}));
  EXPECT_TRUE(fs::exists(out + "/summary.json"));
}

TEST_F(MultiHost, AWorkerKilledOnNodeOneStopsBothNodes) {
  NamespacePair ns(*ip_, subnet_);
  const std::string error = ns.create();
  ASSERT_EQ(error, "");
  const std::string dir = testing::fresh_dir("multihost-kill");
  const std::string scenario = testing::write_scenario(dir, "mhkill", 4, "", 8192, 64, 3);  // far longer than the test
  const std::string out = dir + "/run";
  const std::string secret = secret_file(dir, "secret", "the run's shared secret");
  Launcher node0(ns.name(0), launcher_argv(ns, scenario, out, 0, port_, secret), dir + "/node0.log");
  Launcher node1(ns.name(1), launcher_argv(ns, scenario, out, 1, port_, secret), dir + "/node1.log");
  // Wait until node 1's workers train (rows on disk), then kill one of them.
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline && rows_per_worker(out + "/node1/iterations.csv").size() < 2 &&
         !node0.wait_for(std::chrono::seconds(0)) && !node1.wait_for(std::chrono::seconds(0))) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::vector<pid_t> workers = node1.children();
  ASSERT_FALSE(workers.empty()) << read_file(dir + "/node1.log");
  ASSERT_EQ(::kill(workers.front(), SIGKILL), 0);
  const auto killed_at = Clock::now();
  const auto rc1 = node1.wait_for(std::chrono::seconds(15));
  const auto rc0 = node0.wait_for(std::chrono::seconds(15));
  const double stop_s = std::chrono::duration<double>(Clock::now() - killed_at).count();
  std::printf("both stopped %.2f s after the kill\nnode 0:\n%snode 1:\n%s", stop_s,
              read_file(dir + "/node0.log").c_str(), read_file(dir + "/node1.log").c_str());
  ASSERT_TRUE(rc0.has_value()) << "node 0 still runs 15 s after a worker of node 1 died";
  ASSERT_TRUE(rc1.has_value()) << "node 1 still runs 15 s after its worker died";
  EXPECT_EQ(*rc0, 1);
  EXPECT_EQ(*rc1, 1);
  EXPECT_FALSE(fs::exists(out + "/summary.json"));
  for (const auto& w : workers) EXPECT_NE(::kill(w, 0), 0) << "worker " << w << " outlived its launcher";
}

// The TCPStore on node 0 is reachable by anyone on the network (LibTorch 1.13 binds no address): a node without the
// run's secret must be refused before Gloo connects, and node 0 must say which rank failed.
TEST_F(MultiHost, ANodeWithAnotherSecretIsRefused) {
  NamespacePair ns(*ip_, subnet_);
  const std::string error = ns.create();
  ASSERT_EQ(error, "");
  const std::string dir = testing::fresh_dir("multihost-secret");
  const std::string scenario = testing::write_scenario(dir, "mhsecret", 4, "", 512, 64, 1);
  const std::string out = dir + "/run";
  Launcher node0(ns.name(0), launcher_argv(ns, scenario, out, 0, port_, secret_file(dir, "s0", "right")),
                 dir + "/node0.log");
  Launcher node1(ns.name(1), launcher_argv(ns, scenario, out, 1, port_, secret_file(dir, "s1", "wrong")),
                 dir + "/node1.log");
  const auto rc0 = node0.wait_for(std::chrono::seconds(60));
  const auto rc1 = node1.wait_for(std::chrono::seconds(20));
  const std::string log0 = read_file(dir + "/node0.log"), log1 = read_file(dir + "/node1.log");
  std::printf("node 0:\n%snode 1:\n%s", log0.c_str(), log1.c_str());
  ASSERT_TRUE(rc0.has_value()) << "node 0 still runs";
  ASSERT_TRUE(rc1.has_value()) << "node 1 still runs";
  EXPECT_EQ(*rc0, 1);
  EXPECT_EQ(*rc1, 1);
  EXPECT_NE(log0.find("failed the shared-secret check"), std::string::npos);
  EXPECT_NE(log1.find("failed the shared-secret check"), std::string::npos);
  EXPECT_FALSE(fs::exists(out + "/summary.json"));
  EXPECT_EQ(rows_per_worker(out + "/iterations.csv"), (std::map<int, int>{}));  // no step was trained
}

}  // namespace
}  // namespace omnilearn::emulator
