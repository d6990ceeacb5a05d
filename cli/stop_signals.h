// StopSignals: turns SIGINT and SIGTERM into a request to stop that a long run polls, so that it can close its run
// folder valid and exit 128 + the signal. The handler only stores the signal number in a flag (async-signal-safe);
// a second signal of the same kind gets the default action (the process ends at once). Process-wide: one instance
// at a time, on the main thread.
#pragma once

#include <csignal>

namespace omnilearn::cli {

class StopSignals {
 public:
  StopSignals();   // installs the handlers
  ~StopSignals();  // restores the previous ones
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The first signal received (SIGINT or SIGTERM), or 0.
  static int received();

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

}  // namespace omnilearn::cli
