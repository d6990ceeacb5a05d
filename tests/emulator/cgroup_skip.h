// Skips a test that needs write access to the cgroup tree, printing why. SKIP_WITHOUT_CGROUP_V1(why) also skips on
// cgroup v2, for tests that read or build cgroup v1 files. For use inside namespace omnilearn::emulator.
#pragma once

#include <gtest/gtest.h>

#include "omnilearn/emulator/cgroup_throttler.h"

#define SKIP_WITHOUT_CGROUPS()                                                          \
  do {                                                                                  \
    const Status access = check_cgroup_access();                                        \
    if (!access.is_ok()) GTEST_SKIP() << "no cgroup write access: " << access.message(); \
  } while (0)

#define SKIP_WITHOUT_CGROUP_V1(why)        \
  do {                                     \
    SKIP_WITHOUT_CGROUPS();                \
    if (is_cgroup_v2()) GTEST_SKIP() << why; \
  } while (0)
