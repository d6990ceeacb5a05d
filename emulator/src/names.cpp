#include "omnilearn/emulator/names.h"

namespace omnilearn::emulator {

std::string sanitize_name(std::string_view text) {
  constexpr std::size_t kMaxLength = 64;
  std::string out;
  for (const char c : text.substr(0, kMaxLength)) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    out.push_back(keep ? c : '_');
  }
  return out.empty() ? std::string("run") : out;
}

std::string cgroup_run_folder(std::string_view run_id) { return std::string("omnilearn-").append(sanitize_name(run_id)); }

}  // namespace omnilearn::emulator
