// Names that reach the filesystem (cgroup folders, cache files): reduced to [A-Za-z0-9_-] so that no text from
// a scenario can leave the project's folder ('/', '.', spaces and the rest become '_'). A run's cgroup name also
// says which launcher owns it (pid, its start time, a per-launch nonce), so that concurrent runs never share a
// tree and a later run can tell a dead launcher's leftovers from a live run's. Pure except this_launcher():
// thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace omnilearn::emulator {

// Every character outside [A-Za-z0-9_-] becomes '_'; the result is at most `max_length` characters; "" becomes
// "run".
std::string sanitize_name(std::string_view text, std::size_t max_length = 64);

// The cgroup folder of a run: "omnilearn-" + sanitize_name(run_id, 128).
std::string cgroup_run_folder(std::string_view run_id);

// The launcher that owns a run: its pid, its start time (clock ticks after boot, /proc/<pid>/stat field 22: a
// reused pid has another) and a random per-launch nonce (two launches of one process differ).
struct LauncherId {
  pid_t pid = 0;
  std::uint64_t start_ticks = 0;
  std::uint32_t nonce = 0;
  bool operator==(const LauncherId&) const = default;
};

// This process, with a fresh nonce.
LauncherId this_launcher();
// The start time of process `pid`, or nothing when there is no such process (or /proc cannot tell).
std::optional<std::uint64_t> process_start_ticks(pid_t pid);

// A run id unique by construction: "<scenario part>[-node<r>]-p<pid>-s<start ticks>-<nonce, 8 hex digits>". The
// scenario part is the name sanitized and cut to 24 characters; the owner part is never cut. node_rank < 0: one
// host.
std::string make_run_id(std::string_view scenario_name, int node_rank, const LauncherId& owner);

// The owner encoded in a cgroup folder name made by cgroup_run_folder(make_run_id(...)); nothing for any other
// name (older runs' names, other programs' folders), so those are never taken for stale.
std::optional<LauncherId> parse_cgroup_run_folder(std::string_view folder);

}  // namespace omnilearn::emulator
