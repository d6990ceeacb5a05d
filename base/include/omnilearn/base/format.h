// Number text for files and messages. Header-only; thread-safe.
#pragma once

#include <cstdio>
#include <string>

namespace omnilearn {

// `v` with `significant` significant digits (printf %g): 17 reads back as the same double.
inline std::string format_g(double v, int significant = 17) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

}  // namespace omnilearn
