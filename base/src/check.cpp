#include "omnilearn/base/check.h"

#include <cstdio>
#include <cstdlib>

namespace omnilearn::detail {

void check_failed(std::string_view condition, std::string_view message, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: check failed: %.*s: %.*s\n", file, line, static_cast<int>(condition.size()),
               condition.data(), static_cast<int>(message.size()), message.data());
  std::abort();
}

}  // namespace omnilearn::detail
