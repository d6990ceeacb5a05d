// Portable transforms of std::mt19937_64's output for the traces module's seeded generators and importers: the std
// distributions differ between standard libraries, these do not. Private to traces/. Stateless: thread-safe.
#pragma once

#include <cmath>
#include <random>

namespace omnilearn::traces::detail {

// Uniform on [0, 1), from the engine's top 53 bits.
inline double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
// Exponential with mean `mean`.
inline double exponential(std::mt19937_64& rng, double mean) { return -mean * std::log1p(-uniform01(rng)); }

}  // namespace omnilearn::traces::detail
