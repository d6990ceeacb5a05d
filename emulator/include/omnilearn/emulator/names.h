// Names that reach the filesystem (cgroup folders, cache files): reduced to [A-Za-z0-9_-] so that no text from
// a scenario can leave the project's folder ('/', '.', spaces and the rest become '_'). Pure: thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace omnilearn::emulator {

// Every character outside [A-Za-z0-9_-] becomes '_'; the result is at most 64 characters; "" becomes "run".
std::string sanitize_name(std::string_view text);

// The cgroup folder of a run: "omnilearn-" + sanitize_name(run_id).
std::string cgroup_run_folder(std::string_view run_id);

}  // namespace omnilearn::emulator
