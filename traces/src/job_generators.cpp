#include "omnilearn/traces/job_generators.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>

#include "portable_random.h"

namespace omnilearn::traces {
namespace {

using detail::exponential;
using detail::uniform01;

// From ../shared/traces-raw/pollux-osdi21/traces/philly.csv (82,247 jobs), filtered as Pollux's workload.py filters
// it (duration >= 60 s, GPU time < 1,000 h: 74,428 jobs), GPU counts with at least 50 jobs (74,409 jobs): jobs per
// count and the duration quantiles (pandas quantile, interpolation='lower') at the probabilities below.
constexpr std::array<double, 13> kLevels{0, .1, .2, .3, .4, .5, .6, .7, .8, .9, .95, .99, 1};
struct Row {
  std::int64_t gpus;
  double jobs;
  std::array<double, 13> duration_s;
};
constexpr std::array<Row, 6> kPhilly{{
    {1, 70447, {60, 71, 152, 437, 847, 1393, 1956, 2579, 4069, 9145, 21754, 146889, 3.25604e+06}},
    {2, 461, {60, 103, 136, 947, 20883, 35113, 69083, 122836, 192161, 282562, 455941, 1.09797e+06, 1.52115e+06}},
    {4, 1789, {61, 158, 598, 2519, 9181, 18884, 38298, 79589, 104514, 182042, 234773, 528732, 868158}},
    {8, 1506, {62, 247, 849, 3628, 11235, 21335, 50005, 112144, 173456, 235108, 317900, 408420, 449688}},
    {16, 144, {68, 195, 380, 1884, 10097, 29737, 58735, 87565, 123440, 167367, 181596, 198333, 220684}},
    {32, 62, {345, 829, 1179, 1324, 2665, 14262, 46892, 48544, 53862, 56631, 64338, 78004, 104218}},
}};

std::vector<SizeClass> build_distribution() {
  double total = 0.0;
  for (const Row& r : kPhilly) total += r.jobs;
  std::vector<SizeClass> out;
  for (const Row& r : kPhilly) {
    SizeClass c{r.gpus, r.jobs / total, {}};
    for (std::size_t i = 0; i < kLevels.size(); ++i) c.quantiles.emplace_back(kLevels[i], r.duration_s[i]);
    out.push_back(std::move(c));
  }
  return out;
}

// The duration at probability u of one class: log-linear between quantiles.
Seconds duration_at(const SizeClass& c, double u) {
  std::size_t i = 1;
  while (i + 1 < c.quantiles.size() && c.quantiles[i].first < u) ++i;
  const auto [p0, d0] = c.quantiles[i - 1];
  const auto [p1, d1] = c.quantiles[i];
  const double w = p1 > p0 ? std::clamp((u - p0) / (p1 - p0), 0.0, 1.0) : 0.0;
  return d0 * std::pow(d1 / d0, w);
}

// Draws one record from the distribution with two uniforms.
JobSize draw(const std::vector<SizeClass>& dist, std::mt19937_64& rng) {
  const double u = uniform01(rng);
  const double v = uniform01(rng);
  double acc = 0.0;
  const SizeClass* chosen = &dist.back();
  for (const SizeClass& c : dist) {
    acc += c.probability;
    if (u < acc) {
      chosen = &c;
      break;
    }
  }
  // Durations are whole seconds in the trace: keep them so.
  return {chosen->gpus, std::max(1.0, std::round(duration_at(*chosen, v)))};
}

}  // namespace

const std::vector<SizeClass>& philly_size_distribution() {
  static const std::vector<SizeClass> kDistribution = build_distribution();  // constant after first use
  return kDistribution;
}

const char* philly_size_distribution_note() {
  return "Philly (Jeon et al., ATC 2019; CC BY 4.0) as Pollux's artifact ships it (traces/philly.csv, Apache-2.0): "
         "jobs >= 60 s and < 1000 GPU-hours, GPU counts 1-32, duration quantiles per count";
}

double mean_gpu_seconds(const std::vector<SizeClass>& distribution) {
  double mean = 0.0;
  for (const SizeClass& c : distribution) {
    double m = 0.0;  // mean duration of the class: exact for log-linear segments
    for (std::size_t i = 1; i < c.quantiles.size(); ++i) {
      const auto [p0, d0] = c.quantiles[i - 1];
      const auto [p1, d1] = c.quantiles[i];
      const double seg = d1 == d0 ? d0 : (d1 - d0) / std::log(d1 / d0);
      m += (p1 - p0) * seg;
    }
    mean += c.probability * static_cast<double>(c.gpus) * m;
  }
  return mean;
}

Result<GeneratedJobs> generate_philly_like(const PhillyLikeOptions& o) {
  if (o.jobs == 0 || o.jobs > kMaxJobs) {
    return Status::invalid_argument("philly-like: jobs is " + std::to_string(o.jobs) + "; expected 1 to " +
                                    std::to_string(kMaxJobs));
  }
  if (!std::isfinite(o.load) || o.load <= 0.0) {
    return Status::invalid_argument("philly-like: load is invalid; expected a number > 0");
  }
  if (o.cluster_gpus < 1) return Status::invalid_argument("philly-like: cluster_gpus is < 1; expected >= 1");
  GeneratedJobs out;
  if (o.sizes.empty()) {
    out.mean_gpu_seconds = mean_gpu_seconds(philly_size_distribution());
  } else {
    double sum = 0.0;
    for (const JobSize& s : o.sizes) {
      if (s.gpus < 1 || !(s.duration_s > 0.0)) {
        return Status::invalid_argument("philly-like: a size record has gpus < 1 or duration_s <= 0");
      }
      sum += static_cast<double>(s.gpus) * s.duration_s;
    }
    out.mean_gpu_seconds = sum / static_cast<double>(o.sizes.size());
  }
  out.arrival_rate_per_s = o.load * static_cast<double>(o.cluster_gpus) / out.mean_gpu_seconds;
  std::mt19937_64 rng(o.seed);
  Seconds t = 0.0;
  for (std::size_t k = 0; k < o.jobs; ++k) {
    t += exponential(rng, 1.0 / out.arrival_rate_per_s);
    const JobSize size = o.sizes.empty() ? draw(philly_size_distribution(), rng)
                                         : o.sizes[static_cast<std::size_t>(uniform01(rng) *
                                                                            static_cast<double>(o.sizes.size()))];
    const double coin = uniform01(rng);
    // Arrivals rounded to 1 ms, as the trace importers round times.
    auto job = philly_job("", std::round(t * 1e3) / 1e3, size.gpus, size.duration_s, coin, o.conversion);
    if (!job.is_ok()) return job.status().with_context("philly-like");
    job->name = job->model + "-" + std::to_string(k);
    out.jobs.push_back(std::move(job).value());
  }
  return out;
}

}  // namespace omnilearn::traces
