#include "launch_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <ctime>
#include <numeric>

#include "omnilearn/emulator/names.h"
#include "omnilearn/scenarios/enum_names.h"

namespace omnilearn::emulator::detail {
namespace {

// The write end of the launcher's self-pipe: the one piece of process-wide state, because a signal handler can
// reach nothing else. Set only while run_emulation() runs.
volatile sig_atomic_t g_signal_fd = -1;

extern "C" void on_stop_signal(int signo) {
  const int fd = g_signal_fd;
  if (fd >= 0) {
    const char byte = static_cast<char>(signo);
    (void)!::write(fd, &byte, 1);
  }
}

}  // namespace

SignalGuard::SignalGuard() {
  if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) fds_[0] = fds_[1] = -1;
  g_signal_fd = fds_[1];
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  ::sigaction(SIGPIPE, &ign, &old_pipe_);
}

SignalGuard::~SignalGuard() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  ::sigaction(SIGPIPE, &old_pipe_, nullptr);
  g_signal_fd = -1;
  for (int fd : fds_) {
    if (fd >= 0) ::close(fd);
  }
}

Result<int> free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::io_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return Status::io_error(std::string("cannot find a free loopback port: ") + std::strerror(errno));
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

run::Manifest testbed_manifest(const scenarios::Scenario& scenario, const LaunchOptions& options, const std::string& run_id,
                               const std::vector<double>& shares, const std::string& worker_exe, bool comm_unthrottled) {
  run::Manifest m("emulate", scenario, options.argv);
  m.set("run_id", run_id);
  m.set("cgroup_folder", cgroup_run_folder(run_id));
  m.set("worker_executable", worker_exe);
  m.set("host_cpus", host_cpu_count());
  m.set("cpu_shares", shares);
  const auto throttle = comm_unthrottled ? scenarios::QuotaScope::kCompute : scenarios::QuotaScope::kProcess;
  m.set("throttle", std::string(scenarios::enum_name(throttle)));
  if (const NodeOptions& nodes = options.nodes; nodes.nnodes > 1) {
    const WorkerRange range = node_worker_range(scenario.worker_count(), nodes.nnodes, nodes.node_rank);
    m.set("nodes", {{"nnodes", nodes.nnodes},
                    {"node_rank", nodes.node_rank},
                    {"master", nodes.master_addr + ":" + std::to_string(nodes.master_port)},
                    {"bind", nodes.bind_addr},
                    {"workers", {range.begin, range.end}}});
  }
  m.set("overrides", options.overrides);
  m.set_all(options.manifest_fields);
  return m;
}

char process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return '?';
  const auto close = stat.rfind(')');  // the name in parentheses may hold anything
  return close == std::string::npos || close + 2 >= stat.size() ? '?' : stat[close + 2];
}

std::string describe_state(char state) {
  switch (state) {
    case 'T': return "it is stopped (SIGSTOP or a terminal stop)";
    case 't': return "it is stopped by a debugger";
    case 'D': return "it waits in the kernel (uninterruptible: a device or driver)";
    default: return "";
  }
}

Status validate_nodes(const NodeOptions& nodes, std::size_t workers, bool asp) {
  if (nodes.nnodes < 1 || nodes.node_rank < 0 || nodes.node_rank >= nodes.nnodes) {
    return Status::invalid_argument("--node-rank " + std::to_string(nodes.node_rank) + " is not in [0, --nnodes " +
                                    std::to_string(nodes.nnodes) + ")");
  }
  if (nodes.nnodes == 1) return Status::ok();
  if (asp) return Status::invalid_argument("--nnodes > 1: only BSP runs span several hosts (mode: asp does not yet)");
  if (workers < static_cast<std::size_t>(nodes.nnodes)) {
    return Status::invalid_argument("--nnodes " + std::to_string(nodes.nnodes) + " needs at least as many workers (the "
                                    "scenario has " + std::to_string(workers) + ")");
  }
  if (nodes.master_addr.empty() || nodes.master_port < 1 || nodes.master_port > 65535) {
    return Status::invalid_argument("--nnodes > 1 needs --master ADDR:PORT (node 0's address and a free port)");
  }
  if (nodes.bind_addr.empty()) return Status::invalid_argument("--nnodes > 1 needs --bind ADDR (this node's address)");
  if (nodes.secret.empty()) {
    return Status::invalid_argument("--nnodes > 1 needs the run's shared secret (--secret-file FILE, or the "
                                    "environment variable OMNILEARN_SECRET), the same on every node");
  }
  return Status::ok();
}

Status validate_local_cpus(const std::vector<double>& local_shares, int host_cpus) {
  const double sum = std::accumulate(local_shares.begin(), local_shares.end(), 0.0);
  if (sum > host_cpus + 1e-9) {
    return Status::invalid_argument("this node's workers ask for " + std::to_string(sum) + " CPUs but this host has " +
                                    std::to_string(host_cpus));
  }
  return Status::ok();
}

}  // namespace omnilearn::emulator::detail
