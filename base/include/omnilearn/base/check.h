// OMNI_CHECK: an always-on invariant check. A failed check is a bug in OmniLearn, never bad input:
// it prints the condition, file and line and aborts. Expected failures return a Status instead.
#pragma once

#include <string_view>

namespace omnilearn::detail {
[[noreturn]] void check_failed(std::string_view condition, std::string_view message, const char* file, int line);
}  // namespace omnilearn::detail

#define OMNI_CHECK(cond, msg)                                                    \
  do {                                                                           \
    if (!(cond)) ::omnilearn::detail::check_failed(#cond, (msg), __FILE__, __LINE__); \
  } while (0)
