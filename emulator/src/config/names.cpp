#include "omnilearn/emulator/names.h"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

namespace omnilearn::emulator {
namespace {

constexpr std::size_t kScenarioPartLength = 24;
constexpr std::string_view kPrefix = "omnilearn-";

template <typename T>
std::optional<T> parse_number(std::string_view text, int base = 10) {
  T v{};
  if (text.empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string sanitize_name(std::string_view text, std::size_t max_length) {
  std::string out;
  for (const char c : text.substr(0, max_length)) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    out.push_back(keep ? c : '_');
  }
  return out.empty() ? std::string("run") : out;
}

std::string cgroup_run_folder(std::string_view run_id) {
  return std::string(kPrefix).append(sanitize_name(run_id, /*max_length=*/128));
}

std::optional<std::uint64_t> process_start_ticks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces and ')', so count fields after the last ')'.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return std::nullopt;
  }
  return parse_number<std::uint64_t>(field);
}

LauncherId this_launcher() {
  LauncherId id;
  id.pid = ::getpid();
  id.start_ticks = process_start_ticks(id.pid).value_or(0);
  std::random_device random;
  id.nonce = static_cast<std::uint32_t>(random());
  return id;
}

std::string make_run_id(std::string_view scenario_name, int node_rank, const LauncherId& owner) {
  std::string id = sanitize_name(scenario_name, kScenarioPartLength);
  if (node_rank >= 0) id.append("-node").append(std::to_string(node_rank));
  char nonce[9];
  std::snprintf(nonce, sizeof nonce, "%08x", static_cast<unsigned>(owner.nonce));
  return id.append("-p").append(std::to_string(owner.pid)).append("-s").append(std::to_string(owner.start_ticks))
      .append("-").append(nonce);
}

std::optional<LauncherId> parse_cgroup_run_folder(std::string_view folder) {
  if (!folder.starts_with(kPrefix)) return std::nullopt;
  folder.remove_prefix(kPrefix.size());
  // The last three '-' fields are the owner's; the scenario part before them may hold '-' too.
  std::vector<std::string_view> tail;
  for (int i = 0; i < 3; ++i) {
    const auto dash = folder.rfind('-');
    if (dash == std::string_view::npos || dash == 0) return std::nullopt;
    tail.push_back(folder.substr(dash + 1));
    folder = folder.substr(0, dash);
  }
  const std::string_view nonce = tail[0], start = tail[1], pid = tail[2];
  if (nonce.size() != 8 || !start.starts_with('s') || !pid.starts_with('p')) return std::nullopt;
  for (const char c : nonce) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  const auto p = parse_number<pid_t>(pid.substr(1));
  const auto s = parse_number<std::uint64_t>(start.substr(1));
  const auto n = parse_number<std::uint32_t>(nonce, 16);
  if (!p || !s || !n || *p <= 0) return std::nullopt;
  return LauncherId{*p, *s, *n};
}

}  // namespace omnilearn::emulator
