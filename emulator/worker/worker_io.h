// The worker's pipes to the launcher (Torch-free): records out (worker_protocol.h lines), notices and commands in.
// Not thread-safe: one per pipe end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/emulator/worker_protocol.h"

namespace omnilearn::emulator::worker {

// Writes whole lines to the launcher; once the launcher is gone it drops them (PR_SET_PDEATHSIG ends us soon).
class Reporter {
 public:
  explicit Reporter(int fd) : fd_(fd) {}
  void send(const WorkerMessage& m) { send_line(encode(m)); }
  void send_line(std::string_view line);

 private:
  int fd_;
};

// The closing numbers of the process that ran the controller (BSP rank 0, the ASP parameter server), reported as
// ExtraRecords for summary.json's extra block.
struct RunTotals {
  double decision_s = 0.0;       // time in the controller
  double training_s = 0.0;       // training time (evaluations excluded)
  double evaluation_s = 0.0;
  std::int64_t parameters = 0;
  std::optional<double> time_to_target_s;
  std::int64_t steps_to_target = -1;  // BSP steps, ASP applied updates; -1: not reached
  std::optional<double> server_apply_s;  // ASP: time applying pushes
  std::optional<std::int64_t> updates;   // ASP: pushes applied
};
void report_totals(Reporter& reporter, const RunTotals& totals);

// Non-blocking reader of the launcher's availability notices (the process that runs the controller).
class NoticeReader {
 public:
  explicit NoticeReader(int fd);
  std::vector<AvailabilityNotice> poll();

 private:
  int fd_;
  std::string pending_;
};

// Blocking line reader (calibration commands). Returns false at end of file.
bool read_line(int fd, std::string& pending, std::string& line);

}  // namespace omnilearn::emulator::worker
