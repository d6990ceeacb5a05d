#include "omnilearn/emulator/host_power.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "omnilearn/base/atomic_file.h"

namespace omnilearn::emulator {
namespace {

void sleep_for(Seconds s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// `cores` threads that spin until `s` seconds have passed.
void spin(Seconds s, int cores) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(s);
  std::vector<std::thread> threads;
  std::atomic<unsigned long long> sink{0};
  for (int c = 0; c < cores; ++c) {
    threads.emplace_back([end, &sink] {
      unsigned long long x = 0;
      while (std::chrono::steady_clock::now() < end) {
        for (int i = 0; i < 10000; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      }
      sink += x;
    });
  }
  for (std::thread& t : threads) t.join();
}

Seconds steady_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The joules and seconds of one window: read, run it, read.
Result<std::pair<double, Seconds>> window(EnergyCounter& counter, const std::function<Seconds()>& clock,
                                          const std::function<void()>& body, const char* which) {
  auto j0 = counter.joules();
  if (!j0) return j0.status().with_context(std::string("the ") + which + " window");
  const Seconds t0 = clock();
  body();
  auto j1 = counter.joules();
  if (!j1) return j1.status().with_context(std::string("the ") + which + " window");
  const Seconds t = clock() - t0;
  if (!(t > 0.0)) return Status::internal(std::string("the ") + which + " window measured no time");
  return std::pair{*j1 - *j0, t};
}

}  // namespace

Result<std::string> this_host_id() {
  std::ifstream in("/etc/machine-id");
  std::string id;
  if (in && std::getline(in, id) && !id.empty()) return id;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') return "hostname:" + std::string(host);
  return Status::not_found("this host has no /etc/machine-id and no host name: it cannot be told from another");
}

Result<HostPower> measure_host_power(EnergyCounter& counter, const std::string& host_id, const HostPowerRun& run) {
  HostPower p;
  p.host_id = host_id;
  p.counter = counter.description();
  p.cores = run.cores > 0 ? run.cores : static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  const auto clock = run.clock ? run.clock : steady_s;
  const auto idle = run.idle ? run.idle : sleep_for;
  const auto busy = run.busy ? run.busy : spin;
  auto i = window(
      counter, clock, [&] { idle(run.idle_s); }, "idle");
  if (!i) return i.status();
  auto b = window(
      counter, clock, [&] { busy(run.busy_s, p.cores); }, "busy");
  if (!b) return b.status();
  p.idle_s = i->second;
  p.busy_s = b->second;
  p.idle_w = i->first / i->second;
  p.busy_w = b->first / b->second;
  if (!(p.busy_w > p.idle_w) || !(p.idle_w >= 0.0)) {
    return Status::invalid_argument("host power: " + std::to_string(p.busy_w) + " W with " + std::to_string(p.cores) +
                                    " cores busy against " + std::to_string(p.idle_w) + " W idle (" + p.counter +
                                    "); expected more when busy: was the host idle?");
  }
  return p;
}

double predicted_host_joules(const HostPower& power, Seconds window_s, double busy_core_s) {
  const double per_core_w = power.cores > 0 ? (power.busy_w - power.idle_w) / power.cores : 0.0;
  return power.idle_w * window_s + per_core_w * busy_core_s;
}

Status write_host_power(const HostPower& p, const std::filesystem::path& file) {
  const nlohmann::ordered_json j = {{"host_id", p.host_id}, {"counter", p.counter}, {"cores", p.cores},
                                    {"idle_w", p.idle_w},   {"busy_w", p.busy_w},   {"idle_s", p.idle_s},
                                    {"busy_s", p.busy_s}};
  return write_file_atomically(file.string(), j.dump(2) + "\n");
}

Result<HostPower> read_host_power(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return Status::not_found("cannot read " + file.string());
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::parse_error(file.string() + ": expected a JSON object");
  HostPower p;
  auto text = [&](const char* key, std::string& out) -> Status {
    if (!j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty()) {
      return Status::parse_error(file.string() + ": " + key + ": expected a non-empty string");
    }
    out = j[key].get<std::string>();
    return Status::ok();
  };
  auto number = [&](const char* key, double& out) -> Status {
    if (!j.contains(key) || !j[key].is_number() || !std::isfinite(j[key].get<double>()) || j[key].get<double>() < 0) {
      return Status::parse_error(file.string() + ": " + key + ": expected a finite number >= 0");
    }
    out = j[key].get<double>();
    return Status::ok();
  };
  OMNI_RETURN_IF_ERROR(text("host_id", p.host_id));
  OMNI_RETURN_IF_ERROR(text("counter", p.counter));
  double cores = 0.0;
  OMNI_RETURN_IF_ERROR(number("cores", cores));
  if (cores < 1 || cores != std::floor(cores) || cores > 1e6) {
    return Status::parse_error(file.string() + ": cores: expected a whole number >= 1");
  }
  p.cores = static_cast<int>(cores);
  OMNI_RETURN_IF_ERROR(number("idle_w", p.idle_w));
  OMNI_RETURN_IF_ERROR(number("busy_w", p.busy_w));
  OMNI_RETURN_IF_ERROR(number("idle_s", p.idle_s));
  OMNI_RETURN_IF_ERROR(number("busy_s", p.busy_s));
  if (!(p.busy_w > p.idle_w)) return Status::parse_error(file.string() + ": busy_w: expected more than idle_w");
  return p;
}

}  // namespace omnilearn::emulator
