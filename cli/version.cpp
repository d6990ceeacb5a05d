#include "cli/commands.h"

#ifndef OMNILEARN_VERSION
#define OMNILEARN_VERSION "unknown"
#endif
#ifndef OMNILEARN_GIT_SHA
#define OMNILEARN_GIT_SHA "unknown"
#endif

namespace omnilearn::cli {

std::string version_string() { return std::string(OMNILEARN_VERSION) + " (git " + OMNILEARN_GIT_SHA + ")"; }

}  // namespace omnilearn::cli
