// The cgroup throttler (libcgroup). Layout: <mount of each controller>/omnilearn-<run id>/w<k>, plus w<k>-comm
// (no quota) for the worker's communication threads when the quota holds compute only (emulator.throttle: compute) on
// cgroup v1.
#include "omnilearn/emulator/cgroup_throttler.h"

#include <libcgroup.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "omnilearn/emulator/names.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

namespace omnilearn::emulator {
namespace {

constexpr std::int64_t kMinQuotaUs = 1000;     // the kernel's minimum quota
constexpr std::int64_t kMaxPeriodUs = 1000000; // the kernel's maximum period
constexpr std::uint64_t kTopCpuShares = 262144;  // cgroup v1's largest cpu.shares

std::string num(std::int64_t v) { return std::to_string(v); }

// A libcgroup error as a Status; permission problems get their own code and a hint.
Status cgroup_error(int rc, const std::string& what) {
  const int os_errno = rc == ECGOTHER ? cgroup_get_last_errno() : 0;
  std::string msg = what;
  msg.append(": ").append(cgroup_strerror(rc));
  if (os_errno != 0) msg.append(" (").append(std::strerror(os_errno)).append(")");
  if (rc == ECGROUPNOTALLOWED || rc == ECGROUPNOTOWNER || os_errno == EACCES || os_errno == EPERM) {
    return Status::permission_denied(msg + "; the testbed needs write access to the cgroup tree (run as root, or "
                                           "delegate a cgroup to this user)");
  }
  if (rc == ECGROUPNOTMOUNTED || rc == ECGROUPSUBSYSNOTMOUNTED) {
    return Status::not_found(msg + "; mount the cgroup controller (cgroup v1 cpu,cpuacct,freezer or cgroup v2)");
  }
  return Status::io_error(msg);
}

Status init_libcgroup() {
  const int rc = cgroup_init();
  if (rc != 0) return cgroup_error(rc, "cgroup_init");
  return Status::ok();
}

Result<std::string> mount_point(const char* controller) {
  char* mnt = nullptr;
  const int rc = cgroup_get_subsys_mount_point(controller, &mnt);
  if (rc != 0 || mnt == nullptr) {
    return Status::not_found(std::string("cgroup controller '").append(controller).append(
        "' is not mounted (the testbed needs cpu, cpuacct and freezer on cgroup v1, or cgroup v2 with cpu)"));
  }
  std::string out(mnt);
  std::free(mnt);
  return out;
}

// Owns a libcgroup `struct cgroup`.
struct CgroupHandle {
  explicit CgroupHandle(const std::string& name) : cg(cgroup_new_cgroup(name.c_str())) {}
  ~CgroupHandle() {
    if (cg != nullptr) cgroup_free(&cg);
  }
  CgroupHandle(const CgroupHandle&) = delete;
  CgroupHandle& operator=(const CgroupHandle&) = delete;
  cgroup_controller* add(const char* controller) { return cgroup_add_controller(cg, controller); }
  struct cgroup* cg;
};

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

CgroupThrottler::CgroupThrottler(const CgroupThrottlerOptions& o)
    : folder_(cgroup_run_folder(o.run_id)), nominal_(o.nominal_cores), period_s_(o.period_s), cpuset_(o.cpuset) {
  v2_ = is_cgroup_v2();
  // v2 would need a threaded subtree (see the header).
  split_comm_ = o.throttle == scenarios::QuotaScope::kCompute && !v2_;
  controllers_ = v2_ ? std::vector<std::string>{"cpu"} : std::vector<std::string>{"cpu", "cpuacct", "freezer"};
  if (!cpuset_.empty()) controllers_.push_back("cpuset");
}

CgroupThrottler::~CgroupThrottler() { (void)remove(); }

Status CgroupThrottler::find_mounts() {
  for (const std::string& c : controllers_) {
    auto mnt = mount_point(c.c_str());
    if (!mnt) return mnt.status();
    if (::access(mnt->c_str(), W_OK) != 0) {
      return Status::permission_denied("no permission to create cgroups under " + *mnt + " (" + std::strerror(errno) +
                                       "); run as root or delegate a cgroup to this user");
    }
    mounts_.push_back(*mnt);
  }
  return Status::ok();
}

// Writes the freezer file directly (no libcgroup state): safe from the duty-cycle thread.
Status CgroupThrottler::set_frozen(WorkerId worker, bool frozen) {
  if (worker >= nominal_.size()) return Status::invalid_argument("cgroup throttler: no worker " + num(worker));
  const std::string file = v2_ ? path(worker, "cpu") + "/cgroup.freeze" : path(worker, "freezer") + "/freezer.state";
  const std::string value = v2_ ? (frozen ? "1" : "0") : (frozen ? "FROZEN" : "THAWED");
  std::ofstream out(file);
  out << value;
  out.flush();
  if (!out) return Status::io_error("cannot write " + value + " to " + file);
  return Status::ok();
}

ThreadFiles CgroupThrottler::thread_files(WorkerId worker) const {
  return {tasks_files(worker, true), tasks_files(worker, false)};
}

Status CgroupThrottler::attach(WorkerId worker, pid_t pid) {
  if (worker >= nominal_.size()) return Status::invalid_argument("cgroup throttler: no worker " + num(worker));
  CgroupHandle h(group(worker));
  for (const std::string& c : controllers_) h.add(c.c_str());
  const int rc = cgroup_attach_task_pid(h.cg, pid);
  if (rc != 0) return cgroup_error(rc, "attaching pid " + num(pid) + " to cgroup " + group(worker));
  return Status::ok();
}

Status CgroupThrottler::apply(WorkerId worker, double fraction) {
  if (worker >= nominal_.size()) return Status::invalid_argument("cgroup throttler: no worker " + num(worker));
  if (!(fraction >= 0.0 && fraction <= 1.0)) {
    return Status::invalid_argument("cgroup throttler: fraction " + std::to_string(fraction) + " outside [0, 1]");
  }
  return set_quota(worker, cpu_quota_for(fraction * nominal_[worker], period_s_));
}

Status CgroupThrottler::remove() {
  if (removed_) return Status::ok();
  removed_ = true;
  Status first;
  for (std::size_t k = 0; k < nominal_.size(); ++k) {
    const auto w = static_cast<WorkerId>(k);
    std::vector<std::string> names{group(w)};
    if (split_comm_) names.push_back(comm_group(w));
    kill_tasks(w);  // both groups: a worker's threads are in one or the other
    for (const std::string& name : names) {
      CgroupHandle h(name);
      for (const std::string& c : controllers_) h.add(c.c_str());
      const int rc = cgroup_delete_cgroup_ext(h.cg, CGFLAG_DELETE_IGNORE_MIGRATION);
      if (rc != 0 && rc != ECGROUPNOTEXIST && first.is_ok()) first = cgroup_error(rc, "deleting cgroup " + name);
    }
  }
  CgroupHandle h(folder_);
  for (const std::string& c : controllers_) h.add(c.c_str());
  const int rc = cgroup_delete_cgroup_ext(h.cg, CGFLAG_DELETE_IGNORE_MIGRATION);
  if (rc != 0 && rc != ECGROUPNOTEXIST && first.is_ok()) first = cgroup_error(rc, "deleting cgroup " + folder_);
  return first;
}

Result<double> CgroupThrottler::cpu_usage_s(WorkerId worker) const {
  if (worker >= nominal_.size()) return Status::invalid_argument("cgroup throttler: no worker " + num(worker));
  if (v2_) {
    std::ifstream in(path(worker, "cpu") + "/cpu.stat");
    std::string key;
    for (long long v = 0; in >> key >> v;) {
      if (key == "usage_usec") return static_cast<double>(v) * 1e-6;
    }
    return Status::io_error("cpu.stat has no usage_usec");
  }
  long long total_ns = 0;
  for (const bool comm : {false, true}) {
    if (comm && !split_comm_) break;
    const std::string file = path(worker, "cpuacct") + (comm ? "-comm" : "") + "/cpuacct.usage";  // comm_group()
    std::ifstream in(file);
    long long ns = 0;
    if (!(in >> ns)) return Status::io_error("cannot read " + file);
    total_ns += ns;
  }
  return static_cast<double>(total_ns) * 1e-9;
}

// The path of `worker`'s group in controller `controller` (one of controllers_).
std::string CgroupThrottler::path(WorkerId worker, const std::string& controller) const {
  for (std::size_t i = 0; i < controllers_.size(); ++i) {
    if (controllers_[i] == controller) return mounts_[i] + "/" + group(worker);
  }
  return {};
}

std::string CgroupThrottler::group(WorkerId worker) const { return folder_ + "/w" + num(worker); }
std::string CgroupThrottler::comm_group(WorkerId worker) const { return group(worker) + "-comm"; }

std::vector<std::string> CgroupThrottler::tasks_files(WorkerId worker, bool comm) const {
  if (!split_comm_ || worker >= nominal_.size()) return {};
  std::vector<std::string> files;
  for (const std::string& m : mounts_) {
    files.push_back(m + "/" + (comm ? comm_group(worker) : group(worker)) + "/tasks");
  }
  return files;
}

Status CgroupThrottler::create_one(const std::string& name) {
  CgroupHandle h(name);
  if (h.cg == nullptr) return Status::internal("cgroup_new_cgroup failed for " + name);
  for (const std::string& c : controllers_) {
    cgroup_controller* ctl = h.add(c.c_str());
    if (ctl == nullptr) return Status::internal("cgroup_add_controller(" + c + ") failed for " + name);
    if (c == "cpu" && name == folder_ && !v2_) {
      // The run's folder outweighs the host's other processes (1024 each), so that what else runs here takes CPU
      // from the workers' quotas as little as the scheduler allows.
      cgroup_add_value_uint64(ctl, "cpu.shares", kTopCpuShares);
    }
    if (c == "cpuset") {
      // cgroup v1 cpuset groups start with empty cpus/mems; fill them before any task arrives.
      const std::string mems = read_first_line(mounts_.back() + "/cpuset.mems");
      cgroup_add_value_string(ctl, "cpuset.cpus", cpuset_.c_str());
      cgroup_add_value_string(ctl, "cpuset.mems", mems.empty() ? "0" : mems.c_str());
    }
  }
  const int rc = cgroup_create_cgroup(h.cg, 0);
  if (rc != 0) return cgroup_error(rc, "creating cgroup " + name);
  return Status::ok();
}

Status CgroupThrottler::create_groups() {
  OMNI_RETURN_IF_ERROR(create_one(folder_));
  for (std::size_t k = 0; k < nominal_.size(); ++k) {
    OMNI_RETURN_IF_ERROR(create_one(group(static_cast<WorkerId>(k))));
    OMNI_RETURN_IF_ERROR(apply(static_cast<WorkerId>(k), 1.0));
    if (split_comm_) OMNI_RETURN_IF_ERROR(create_one(comm_group(static_cast<WorkerId>(k))));
  }
  return Status::ok();
}

Status CgroupThrottler::set_quota(WorkerId worker, CpuQuota q) {
  CgroupHandle h(group(worker));
  cgroup_controller* ctl = h.add("cpu");
  if (v2_) {
    const std::string value = num(q.quota_us) + " " + num(q.period_us);
    cgroup_add_value_string(ctl, "cpu.max", value.c_str());
  } else {
    cgroup_add_value_int64(ctl, "cpu.cfs_period_us", q.period_us);
    cgroup_add_value_int64(ctl, "cpu.cfs_quota_us", q.quota_us);
  }
  const int rc = cgroup_modify_cgroup(h.cg);
  if (rc != 0) return cgroup_error(rc, "setting the CPU quota of cgroup " + group(worker));
  return Status::ok();
}

// Thaws, then SIGKILLs every task left in the worker's group and waits (up to 2 s) for the group to empty:
// deleting a group with tasks would move them to the parent (NOTES.md).
void CgroupThrottler::kill_tasks(WorkerId worker) {
  std::vector<std::string> dirs{path(worker, "cpu")};
  if (split_comm_) dirs.push_back(dirs[0] + "-comm");
  if (!v2_) {
    std::ofstream thaw(path(worker, "freezer") + "/freezer.state");
    thaw << "THAWED\n";
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < deadline) {
    bool any = false;
    for (const std::string& dir : dirs) {
      std::ifstream in(dir + "/cgroup.procs");
      for (pid_t pid = 0; in >> pid;) {
        any = true;
        ::kill(pid, SIGKILL);
      }
    }
    if (!any) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

CpuQuota cpu_quota_for(double cores, double period_s) {
  CpuQuota q;
  q.period_us = std::clamp<std::int64_t>(std::llround(period_s * 1e6), kMinQuotaUs, kMaxPeriodUs);
  if (!(cores > 0.0)) {
    q.quota_us = kMinQuotaUs;
    return q;
  }
  q.quota_us = std::llround(cores * static_cast<double>(q.period_us));
  if (q.quota_us < kMinQuotaUs) {
    q.period_us = std::min<std::int64_t>(kMaxPeriodUs, std::llround(static_cast<double>(kMinQuotaUs) / cores));
    q.quota_us = std::max<std::int64_t>(kMinQuotaUs, std::llround(cores * static_cast<double>(q.period_us)));
  }
  return q;
}

bool is_cgroup_v2(const std::string& root) {
  struct statfs fs {};
  if (::statfs(root.c_str(), &fs) != 0) return false;
  return static_cast<unsigned long>(fs.f_type) == static_cast<unsigned long>(CGROUP2_SUPER_MAGIC);
}

Result<std::unique_ptr<CgroupThrottler>> make_cgroup_throttler(const CgroupThrottlerOptions& options) {
  if (options.nominal_cores.empty()) return Status::invalid_argument("cgroup throttler: no workers");
  for (const double c : options.nominal_cores) {
    if (!(c > 0.0)) return Status::invalid_argument("cgroup throttler: nominal cores must be > 0");
  }
  OMNI_RETURN_IF_ERROR(init_libcgroup());
  std::unique_ptr<CgroupThrottler> t(new CgroupThrottler(options));
  OMNI_RETURN_IF_ERROR(t->find_mounts());
  OMNI_RETURN_IF_ERROR(t->create_groups());
  return t;
}

Status check_cgroup_access(const std::string& root) {
  OMNI_RETURN_IF_ERROR(init_libcgroup());
  const char* controller = "cpu";
  auto mnt = mount_point(controller);
  if (!mnt) return mnt.status();
  if (::access(mnt->c_str(), W_OK) != 0) {
    return Status::permission_denied("no write access to " + *mnt + " (" + std::strerror(errno) + ")");
  }
  (void)root;
  return Status::ok();
}

}  // namespace omnilearn::emulator
