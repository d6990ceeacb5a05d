// Helpers for the importer tests: the raw trace folder (skip when absent) and a naive, independent CSV
// reader used to recompute figures. Header-only test code.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "omnilearn/traces/trace_importer.h"

namespace omnilearn::traces::test {

namespace fs = std::filesystem;

// The raw file's path, or "" (and the caller skips) when the raw folder is not beside the clone.
inline std::string raw(const std::string& rel) {
  const fs::path p = fs::path(OMNILEARN_TRACES_RAW) / rel;
  return fs::exists(p) ? p.string() : std::string();
}

#define RAW_OR_SKIP(var, rel)                                                                   \
  const std::string var = raw(rel);                                                             \
  if (var.empty()) GTEST_SKIP() << "raw trace " << OMNILEARN_TRACES_RAW << "/" << (rel)         \
                                << " is missing (clone ../shared beside the repository to run this)"

inline std::vector<std::string> split(const std::string& line, char d) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string f;
  while (std::getline(in, f, d)) out.push_back(f);
  if (!line.empty() && line.back() == d) out.emplace_back();
  return out;
}

inline double avail(double pct) { return std::round(std::clamp(1.0 - pct / 100.0, 0.0, 1.0) * 1e5) / 1e5; }

// Seconds since the epoch of "YYYY-MM-DD HH:MM:SS[.fff]" as UTC, via the C library.
inline double iso_seconds(const std::string& s) {
  std::tm tm{};
  double frac = 0.0;
  int sec = 0;
  std::sscanf(s.c_str(), "%d-%d-%d %d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &sec);
  const std::size_t dot = s.find('.');
  if (dot != std::string::npos) frac = std::stod(std::string("0").append(s.substr(dot)));
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_sec = sec;
  return static_cast<double>(timegm(&tm)) + frac;
}

inline Result<AvailabilityTrace> run(ImportFormat f, const std::string& input, std::size_t max_workers,
                              NodeSelection sel = NodeSelection::kSourceOrder) {
  ImportOptions o;
  o.format = f;
  o.input = input;
  o.max_workers = max_workers;
  o.selection = sel;
  return import_trace(o);
}

}  // namespace omnilearn::traces::test
