#include "omnilearn/scenarios/model_profile_file.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <vector>

#include "section_parsers.h"
#include "yaml_source.h"

namespace omnilearn::scenarios {
namespace {

// The shortest text that reads back as the same double, in printf's %g style (2.53694e+06, 0.0002).
std::string number(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general);
  return ec == std::errc() ? std::string(buf, end) : std::string("nan");
}

// A count (parameters) in plain digits when it is a whole number a double holds exactly.
std::string count(double v) {
  return v == std::floor(v) && std::abs(v) < 9007199254740992.0 ? std::to_string(static_cast<long long>(v)) : number(v);
}

// `[a, b, c]`
std::string number_list(const std::vector<double>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i == 0 ? "" : ", ") + number(values[i]);
  return out + "]";
}

// A string as one YAML scalar, quoted where a plain one would read back as something else.
std::string scalar(const std::string& text) {
  YAML::Emitter e;
  e << text;
  return e.c_str();
}

// `key: {share: [...], <column>: [...]}`, the form read_share_table reads.
std::string share_table(const char* key, const std::vector<double>& shares, const char* column,
                        const std::vector<double>& values) {
  return std::string(key) + ": {share: " + number_list(shares) + ", " + column + ": " + number_list(values) + "}\n";
}

std::string comment_lines(const std::string& comment) {
  std::string out;
  std::istringstream in(comment);
  for (std::string line; std::getline(in, line);) out += line.empty() ? "#\n" : "# " + line + "\n";
  return out;
}

}  // namespace

Result<ModelProfile> load_model_profile(const std::string& path) {
  auto text = detail::read_text_file(path);
  if (!text) return text.status();
  detail::YamlSource source(path);
  auto root = source.load(*text);
  if (!root) return root.status();
  ModelProfile out;
  out.name = std::filesystem::path(path).stem().string();
  OMNI_RETURN_IF_ERROR(detail::parse_model_profile(source, *root, "", out));
  return out;
}

std::string model_profile_yaml(const ModelProfile& p, const std::string& comment) {
  std::string out = comment_lines(comment);
  out += "name: " + scalar(p.name) + "\n";
  out += "parameters: " + count(p.parameters) + "\n";
  if (p.gradient_bytes != 4.0 * p.parameters) out += "gradient_bytes: " + number(p.gradient_bytes) + "\n";
  out += "flops_per_sample: " + number(p.flops_per_sample) + "\n";
  out += "flops_per_iteration: " + number(p.flops_per_iteration) + "\n";
  if (p.measured_fixed_s) out += "measured_fixed_s: " + number(*p.measured_fixed_s) + "\n";
  if (p.measured_per_sample_s) out += "measured_per_sample_s: " + number(*p.measured_per_sample_s) + "\n";
  if (p.host_core_flops) out += "host_core_flops: " + number(*p.host_core_flops) + "\n";
  if (!p.slowdown_shares.empty()) out += share_table("cpu_slowdown", p.slowdown_shares, "slowdown", p.slowdown_factors);
  const ModelProfile absent;  // what the parser assumes for a missing key
  // A testbed profile (host_core_flops) states its quota and all-reduce terms even at their defaults: a reader
  // sees what was measured (an all-reduce cost of 0 is a measurement, not an omission).
  const bool testbed = p.host_core_flops.has_value();
  if (testbed || p.quota_period_s != absent.quota_period_s) out += "quota_period_s: " + number(p.quota_period_s) + "\n";
  if (testbed || p.quota_holds_comm != absent.quota_holds_comm) {
    out += std::string("quota_holds_comm: ") + (p.quota_holds_comm ? "true" : "false") + "\n";
  }
  if (testbed || p.allreduce_fixed_s != absent.allreduce_fixed_s) out += "allreduce_fixed_s: " + number(p.allreduce_fixed_s) + "\n";
  if (p.compute_jitter_cv != absent.compute_jitter_cv) out += "compute_jitter_cv: " + number(p.compute_jitter_cv) + "\n";
  if (!p.noise_shares.empty()) out += share_table("compute_noise", p.noise_shares, "std_s", p.noise_std_s);
  if (p.compute_jitter_shared != absent.compute_jitter_shared) {
    out += "compute_jitter_shared: " + number(p.compute_jitter_shared) + "\n";
  }
  if (p.host_cpu_available) out += "host_cpu_available: " + number(*p.host_cpu_available) + "\n";
  return out;
}

}  // namespace omnilearn::scenarios
