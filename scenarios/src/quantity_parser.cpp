#include "omnilearn/scenarios/quantity_parser.h"

#include <charconv>
#include <cmath>
#include <string>
#include <utility>

namespace omnilearn::scenarios {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits "12.5 Gbps" into the number and the unit text; nullopt if there is no leading number.
std::optional<std::pair<double, std::string_view>> split_quantity(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0.0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr == text.data() || !std::isfinite(value)) return std::nullopt;
  return std::make_pair(value, trim(std::string_view(ptr, static_cast<std::size_t>(text.data() + text.size() - ptr))));
}

}  // namespace

std::optional<double> parse_number(std::string_view text) {
  auto q = split_quantity(text);
  if (!q || !q->second.empty()) return std::nullopt;
  return q->first;
}

std::optional<double> parse_bandwidth_Bps(std::string_view text) {
  auto q = split_quantity(text);
  if (!q || q->first < 0.0) return std::nullopt;
  std::string unit(q->second);
  if (unit.empty()) return q->first;
  if (unit.size() > 2 && unit.ends_with("/s")) unit = unit.substr(0, unit.size() - 2) + "ps";
  if (!unit.ends_with("ps")) return std::nullopt;
  unit.resize(unit.size() - 2);  // "Gb", "GB", "b", "B"
  if (unit.empty()) return std::nullopt;
  const char kind = unit.back();
  unit.pop_back();
  double bits_per_unit = 0.0;
  if (kind == 'b') {
    bits_per_unit = 1.0;
  } else if (kind == 'B') {
    bits_per_unit = 8.0;
  } else {
    return std::nullopt;
  }
  double prefix = 1.0;
  if (unit.empty()) {
    prefix = 1.0;
  } else if (unit == "K" || unit == "k") {
    prefix = 1e3;
  } else if (unit == "M") {
    prefix = 1e6;
  } else if (unit == "G") {
    prefix = 1e9;
  } else if (unit == "T") {
    prefix = 1e12;
  } else {
    return std::nullopt;
  }
  return q->first * prefix * bits_per_unit / 8.0;
}

std::optional<double> parse_duration_s(std::string_view text) {
  auto q = split_quantity(text);
  if (!q || q->first < 0.0) return std::nullopt;
  const std::string_view unit = q->second;
  double scale = 0.0;
  if (unit.empty() || unit == "s") {
    scale = 1.0;
  } else if (unit == "ms") {
    scale = 1e-3;
  } else if (unit == "us" || unit == "\xC2\xB5s") {
    scale = 1e-6;
  } else if (unit == "ns") {
    scale = 1e-9;
  } else if (unit == "min") {
    scale = 60.0;
  } else if (unit == "h") {
    scale = 3600.0;
  } else {
    return std::nullopt;
  }
  return q->first * scale;
}

std::optional<double> parse_speed_flops(std::string_view text) {
  auto q = split_quantity(text);
  if (!q || !(q->first > 0.0)) return std::nullopt;
  std::string_view unit = q->second;
  if (unit.empty()) return q->first;
  if (unit.ends_with("flops")) {
    unit.remove_suffix(5);
  } else if (unit.ends_with('f')) {
    unit.remove_suffix(1);
  } else {
    return std::nullopt;
  }
  if (unit.empty()) return q->first;
  if (unit.size() != 1) return std::nullopt;
  static constexpr std::string_view kPrefixes = "kMGTPEZY";
  static constexpr double kScales[] = {1e3, 1e6, 1e9, 1e12, 1e15, 1e18, 1e21, 1e24};
  const std::size_t i = kPrefixes.find(unit.front() == 'K' ? 'k' : unit.front());
  if (i == std::string_view::npos) return std::nullopt;
  return q->first * kScales[i];
}

}  // namespace omnilearn::scenarios
