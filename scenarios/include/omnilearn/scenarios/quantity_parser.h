// Parsing of numbers with units as written in scenario files ("10Gbps", "50us", "1e9") and SimGrid platform files
// ("1.5Gf").
// Pure functions: thread-safe. Locale-independent (std::from_chars).
#pragma once

#include <optional>
#include <string_view>

namespace omnilearn::scenarios {

// A plain decimal number ("12", "-3.5", "1e9"); nullopt if `text` is anything else (trailing junk included).
std::optional<double> parse_number(std::string_view text);

// A bandwidth in bytes per second. A bare number is bytes/s. Bit units bps, Kbps, Mbps, Gbps, Tbps and byte
// units Bps, KBps, MBps, GBps, TBps (also written "Gb/s", "GB/s") use decimal prefixes: 1 Gbps = 1.25e8 B/s.
// Spaces between number and unit are allowed. Nullopt when malformed or negative.
std::optional<double> parse_bandwidth_Bps(std::string_view text);

// A duration in seconds. A bare number is seconds; units ns, us (or µs), ms, s, min, h. Nullopt when malformed
// or negative.
std::optional<double> parse_duration_s(std::string_view text);

// A compute speed in flop/s, as SimGrid's platform files write it. A bare number is flop/s; units f or flops with
// decimal prefixes k (or K), M, G, T, P, E, Z, Y ("98.095Mf", "1Tf", "2 Gflops"). Nullopt when malformed or not
// positive.
std::optional<double> parse_speed_flops(std::string_view text);

}  // namespace omnilearn::scenarios
