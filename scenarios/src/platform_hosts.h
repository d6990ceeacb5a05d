// The hosts of a SimGrid platform file, read from its XML here because scenarios/ cannot link SimGrid: each
// <host>'s id and its speed in its initial power state. SimGrid itself loads the file's network (sim/), and checks
// each worker's speed against these hosts. Pure functions: thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"

namespace omnilearn::scenarios::detail {

struct PlatformHost {
  std::string name;          // the host's id
  double speed_flops = 0.0;  // its `speed` (the `pstate`-th of a comma-separated list, else the first)
  int line = 0;              // where its element starts in the file, from 1
};

// The <host> elements of the platform file at `path`, in file order. Errors name the file and line: an unreadable
// file, a host without id or with a malformed speed, an id used twice, and elements that make hosts this reader
// does not expand (<cluster>, <cabinet>, <peer>, <include>).
Result<std::vector<PlatformHost>> read_platform_hosts(const std::string& path);

// The same from the file's text; `path` names it in errors.
Result<std::vector<PlatformHost>> parse_platform_hosts(std::string_view xml, const std::string& path);

}  // namespace omnilearn::scenarios::detail
