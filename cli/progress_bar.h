// ProgressBar: a one-line progress bar on stderr for long runs, drawn only when stderr is a terminal (or forced).
// Not thread-safe: update from one thread.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <string>

namespace omnilearn::cli {

class ProgressBar {
 public:
  ProgressBar(std::string label, bool enabled) : label_(std::move(label)), enabled_(enabled && isatty(2)) {}
  ~ProgressBar() { finish(); }

  // Draws `done` in [0, 1] with an optional note; redraws only when the shown percentage changes.
  void update(double done, const std::string& note = "") {
    if (!enabled_) return;
    const int percent = static_cast<int>(done * 100.0 + 0.5);
    if (percent == last_percent_ && note == last_note_) return;
    last_percent_ = percent;
    last_note_ = note;
    const int width = 30;
    const int filled = percent * width / 100;
    std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% %s", label_.c_str(), filled, "##############################",
                 width - filled, "", percent, note.c_str());
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
};

}  // namespace omnilearn::cli
