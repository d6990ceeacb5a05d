#include "worker_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace omnilearn::emulator::worker {

void report_totals(Reporter& reporter, const RunTotals& t) {
  reporter.send(ExtraRecord{"controller_decision_s", t.decision_s});
  reporter.send(ExtraRecord{"controller_overhead", t.training_s > 0 ? t.decision_s / t.training_s : 0.0});
  if (t.server_apply_s) reporter.send(ExtraRecord{"server_apply_s", *t.server_apply_s});
  reporter.send(ExtraRecord{"training_time_s", t.training_s});
  reporter.send(ExtraRecord{"evaluation_time_s", t.evaluation_s});
  reporter.send(ExtraRecord{"parameters", static_cast<double>(t.parameters)});
  if (t.updates) reporter.send(ExtraRecord{"updates", static_cast<double>(*t.updates)});
  reporter.send(ExtraRecord{"time_to_target_s", t.time_to_target_s.value_or(-1.0)});
  // Steps to target, so that "faster steps" and "fewer steps" can be told apart.
  if (t.steps_to_target >= 0) reporter.send(ExtraRecord{"steps_to_target", static_cast<double>(t.steps_to_target)});
}

void Reporter::send_line(std::string_view line) {
  std::size_t done = 0;
  while (fd_ >= 0 && done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      fd_ = -1;
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

NoticeReader::NoticeReader(int fd) : fd_(fd) {
  if (fd_ >= 0) ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

std::vector<AvailabilityNotice> NoticeReader::poll() {
  std::vector<AvailabilityNotice> out;
  if (fd_ < 0) return out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd_, buf, sizeof buf)) > 0;) pending_.append(buf, static_cast<std::size_t>(n));
  std::size_t start = 0;
  for (std::size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
    auto m = decode(std::string_view(pending_).substr(start, nl - start));
    if (m && std::holds_alternative<AvailabilityNotice>(*m)) out.push_back(std::get<AvailabilityNotice>(*m));
  }
  pending_.erase(0, start);
  return out;
}

bool read_line(int fd, std::string& pending, std::string& line) {
  for (;;) {
    const std::size_t nl = pending.find('\n');
    if (nl != std::string::npos) {
      line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      return true;
    }
    char buf[1024];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    pending.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace omnilearn::emulator::worker
