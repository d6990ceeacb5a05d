#include "cli/stop_signals.h"

namespace omnilearn::cli {
namespace {

// The one piece of process-wide state: a signal handler can reach nothing else.
volatile std::sig_atomic_t g_received = 0;

extern "C" void omnilearn_cli_on_stop_signal(int signo) {
  if (g_received == 0) g_received = signo;
}

}  // namespace

StopSignals::StopSignals() {
  g_received = 0;
  struct sigaction sa {};
  sa.sa_handler = omnilearn_cli_on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // a second Ctrl-C ends the process at once
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

StopSignals::~StopSignals() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
}

int StopSignals::received() { return g_received; }

}  // namespace omnilearn::cli
