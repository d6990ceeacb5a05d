// A Torch-free stand-in for omnilearn-emulate-worker: speaks the worker protocol so the launcher's process
// handling (start inside a cgroup, records, deaths, signals) is tested in milliseconds. Extra arguments:
//   --fake-steps N      iterations to report (default 20)
//   --fake-step-ms M    sleep per iteration (default 10)
//   --fake-busy-ms M    then compute (spin) this long per iteration (default 0)
//   --fake-exit R:C     rank R exits with code C halfway through
//   --fake-ignore-term  ignore SIGTERM (the launcher must SIGKILL it)
//   --fake-stop R:S     rank R stops itself (SIGSTOP) before step S
//   --fake-hang R:S     rank R sleeps for good before step S (a hung call)
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "omnilearn/emulator/testbed_config.h"
#include "omnilearn/emulator/worker_protocol.h"

int main(int argc, char** argv) {
  using namespace omnilearn;
  int rank = 0, out_fd = -1, steps = 20, step_ms = 10, busy_ms = 0, exit_rank = -1, exit_code = 0;
  int stop_rank = -1, stop_step = 0, hang_rank = -1, hang_step = 0;
  std::string config_path;
  auto rank_colon_step = [](const std::string& s, int& r, int& step) {
    r = std::atoi(s.substr(0, s.find(':')).c_str());
    step = std::atoi(s.substr(s.find(':') + 1).c_str());
  };
  for (int i = 1; i + 1 < argc + 1; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--rank") rank = std::atoi(v);
    else if (a == "--out-fd") out_fd = std::atoi(v);
    else if (a == "--fake-steps") steps = std::atoi(v);
    else if (a == "--fake-step-ms") step_ms = std::atoi(v);
    else if (a == "--fake-busy-ms") busy_ms = std::atoi(v);
    else if (a == "--fake-exit") {
      const std::string s = v;
      exit_rank = std::atoi(s.substr(0, s.find(':')).c_str());
      exit_code = std::atoi(s.substr(s.find(':') + 1).c_str());
    } else if (a == "--fake-ignore-term") std::signal(SIGTERM, SIG_IGN);
    else if (a == "--config") config_path = v;
    else if (a == "--fake-stop") rank_colon_step(v, stop_rank, stop_step);
    else if (a == "--fake-hang") rank_colon_step(v, hang_rank, hang_step);
  }
  auto send = [&](const emulator::WorkerMessage& m) {
    const std::string line = emulator::encode(m);
    if (::write(out_fd, line.data(), line.size()) < 0) std::_Exit(3);
  };
  // Where am I? (The test checks that the worker runs inside its cgroup from the start.)
  std::ifstream self("/proc/self/cgroup");
  for (std::string line; std::getline(self, line);) {
    if (line.find(":cpu:") != std::string::npos || line.find(":cpu,") != std::string::npos || line.rfind("0::", 0) == 0) {
      if (line.find("omnilearn-") != std::string::npos) send(emulator::ExtraRecord{"started_in_cgroup_" + std::to_string(rank), 1});
    }
  }
  if (rank == 0) send(emulator::ExtraRecord{"training_start_s", 0.0});
  // The run's settings come in the run folder's config.json, as for the real worker.
  auto config = emulator::read_testbed_config(config_path);
  if (!config) return 4;
  if (!config->store_file.empty()) {
    std::ofstream(config->store_file) << "a stand-in for the FileStore\n";
    if (config->store_file.ends_with("/run/.rendezvous")) {
      send(emulator::ExtraRecord{"store_file_in_run_folder_" + std::to_string(rank), 1});
    }
  } else {
    send(emulator::ExtraRecord{"store_host_given", 1});
  }
  if (rank == 0) send(run::PlanRecord{0, 0, 0.0, "initial", true, 0.0, {32, 32}, {0.5, 0.5}});
  for (int s = 0; s < steps; ++s) {
    if (rank == exit_rank && s == steps / 2) return exit_code;
    if (rank == stop_rank && s == stop_step) ::raise(SIGSTOP);
    if (rank == hang_rank && s == hang_step) {
      for (;;) ::pause();
    }
    ::usleep(static_cast<useconds_t>(step_ms) * 1000);
    const auto busy_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_ms);
    for (volatile unsigned spin = 0; std::chrono::steady_clock::now() < busy_until;) spin = spin + 1;
    run::IterationRecord r;
    r.worker = static_cast<WorkerId>(rank), r.step = s, r.epoch = s / 10, r.start_s = 0.01 * s, r.compute_s = 0.008;
    r.comm_s = 0.001, r.wait_s = 0.001, r.batch = 32, r.loss = 1.0 / (s + 1);
    send(r);
  }
  if (rank == 0) {
    send(run::EvaluationRecord{0.2, steps - 1, (steps - 1) / 10, 0.5, 0.86});
    send(emulator::ExtraRecord{"time_to_target_s", 0.2});
  }
  // Rank 0 reached its target (it reported the time to it); the others' reasons are not the run's.
  send(emulator::DoneRecord{rank == 0 ? run::StopReason::kTarget : run::StopReason::kEpochs});
  return 0;
}
