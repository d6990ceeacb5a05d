// Progress of long runs on stderr. ProgressBar: a one-line bar with the elapsed time and an estimate of the time
// left, drawn only when stderr is a terminal. SweepProgress: the sweep's progress, as that bar on a terminal and as
// plain lines otherwise (logs, CI, batch jobs), at most one per finished point and rate-limited for huge sweeps.
// Not thread-safe: update from one thread.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace omnilearn::cli {

// "45s", "1m12s", "2h03m".
inline std::string format_duration(double seconds) {
  const long s = seconds < 0 ? 0 : static_cast<long>(seconds + 0.5);
  char text[32];
  if (s < 60) {
    std::snprintf(text, sizeof text, "%lds", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  }
  return text;
}

// "elapsed 1m12s, eta 2m40s" for a share `done` in (0, 1] finished after `elapsed_s`; "elapsed 3s" before any.
inline std::string elapsed_and_eta(double done, double elapsed_s) {
  std::string text = "elapsed " + format_duration(elapsed_s);
  if (done > 0.0 && done < 1.0) text += ", eta " + format_duration(elapsed_s * (1.0 - done) / done);
  return text;
}

using ProgressClock = std::chrono::steady_clock;

inline double seconds_since(ProgressClock::time_point start) {
  return std::chrono::duration<double>(ProgressClock::now() - start).count();
}

class ProgressBar {
 public:
  ProgressBar(std::string label, bool enabled) : label_(std::move(label)), enabled_(enabled && isatty(2)) {}
  ~ProgressBar() { finish(); }

  // Draws `done` in [0, 1] with an optional note, the elapsed time and the time left; redraws only when the shown
  // percentage or the note changes.
  void update(double done, const std::string& note = "") {
    if (!enabled_) return;
    const int percent = static_cast<int>(done * 100.0 + 0.5);
    if (percent == last_percent_ && note == last_note_) return;
    last_percent_ = percent;
    last_note_ = note;
    const int width = 30;
    const int filled = percent * width / 100;
    const std::string timing = elapsed_and_eta(done, seconds_since(start_));
    std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% %s%s%s\033[K", label_.c_str(), filled, "##############################",
                 width - filled, "", percent, note.c_str(), note.empty() ? "" : ", ", timing.c_str());
    std::fflush(stderr);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::fputc('\n', stderr);
    drawn_ = false;
  }

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  int last_percent_ = -1;
  std::string last_note_;
  ProgressClock::time_point start_ = ProgressClock::now();
};

// Whether a plain progress line is due: the last point, or 1% more points, or 10 s, since the last line.
inline bool plain_line_due(std::size_t done, std::size_t total, std::size_t last_done, double since_last_s) {
  if (done == total) return true;
  return (done - last_done) * 100 >= total || since_last_s >= 10.0;
}

class SweepProgress {
 public:
  // `enabled` false: silent (--quiet). Otherwise the bar on a terminal, plain lines elsewhere.
  SweepProgress(std::string label, std::size_t total, bool enabled)
      : label_(label), total_(total), enabled_(enabled), terminal_(isatty(2) != 0), bar_(std::move(label), enabled) {
    if (enabled_ && terminal_) bar_.update(0.0, "0/" + std::to_string(total_));
  }

  // One more point finished (failed: a non-zero exit).
  void point_done(bool failed) {
    ++done_;
    failed_ += failed ? 1 : 0;
    if (!enabled_ || total_ == 0) return;
    const double share = static_cast<double>(done_) / static_cast<double>(total_);
    const std::string count = std::to_string(done_) + "/" + std::to_string(total_);
    const std::string failures = failed_ > 0 ? " (" + std::to_string(failed_) + " failed)" : "";
    if (terminal_) {
      bar_.update(share, count + failures);
      return;
    }
    if (!plain_line_due(done_, total_, last_line_done_, seconds_since(last_line_))) return;
    const std::string line =
        label_ + ": " + count + " done" + failures + ", " + elapsed_and_eta(share, seconds_since(start_)) + "\n";
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    last_line_done_ = done_;
    last_line_ = ProgressClock::now();
  }
  void finish() { bar_.finish(); }

 private:
  std::string label_;
  std::size_t total_;
  bool enabled_;
  bool terminal_;
  ProgressBar bar_;
  std::size_t done_ = 0, failed_ = 0, last_line_done_ = 0;
  ProgressClock::time_point start_ = ProgressClock::now(), last_line_ = ProgressClock::now();
};

}  // namespace omnilearn::cli
