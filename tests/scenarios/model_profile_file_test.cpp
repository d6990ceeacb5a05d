// The model-profile file: what model_profile_yaml writes, load_model_profile reads back unchanged.
#include <gtest/gtest.h>

#include <string>

#include "omnilearn/scenarios/model_profile_file.h"
#include "temp_dir.h"

namespace omnilearn::scenarios {
namespace {

using testing::TempDir;

void expect_equal(const ModelProfile& a, const ModelProfile& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.parameters, b.parameters);
  EXPECT_EQ(a.gradient_bytes, b.gradient_bytes);
  EXPECT_EQ(a.flops_per_sample, b.flops_per_sample);
  EXPECT_EQ(a.flops_per_iteration, b.flops_per_iteration);
  EXPECT_EQ(a.measured_fixed_s, b.measured_fixed_s);
  EXPECT_EQ(a.measured_per_sample_s, b.measured_per_sample_s);
  EXPECT_EQ(a.host_core_flops, b.host_core_flops);
  EXPECT_EQ(a.slowdown_shares, b.slowdown_shares);
  EXPECT_EQ(a.slowdown_factors, b.slowdown_factors);
  EXPECT_EQ(a.allreduce_fixed_s, b.allreduce_fixed_s);
  EXPECT_EQ(a.quota_period_s, b.quota_period_s);
  EXPECT_EQ(a.quota_holds_comm, b.quota_holds_comm);
  EXPECT_EQ(a.compute_jitter_cv, b.compute_jitter_cv);
  EXPECT_EQ(a.compute_jitter_shared, b.compute_jitter_shared);
  EXPECT_EQ(a.noise_shares, b.noise_shares);
  EXPECT_EQ(a.noise_std_s, b.noise_std_s);
  EXPECT_EQ(a.host_cpu_available, b.host_cpu_available);
}

// Every field set away from its default, with numbers that need all 17 digits.
ModelProfile every_field() {
  ModelProfile p;
  p.name = "lenet: calibrated # on host-1";  // needs quoting
  p.parameters = 61706;
  p.gradient_bytes = 2.0 * 61706;  // not the default 4 bytes per parameter
  p.flops_per_sample = 2.5339e6 / 3.0;
  p.flops_per_iteration = 1234.5678901234567;
  p.measured_fixed_s = 0.1 + 0.2;
  p.measured_per_sample_s = 1.0 / 3.0 * 1e-3;
  p.host_core_flops = 2e9;
  p.slowdown_shares = {0.1, 0.2, 1.0 / 3.0, 1.0};
  p.slowdown_factors = {10.5, 5.25, 3.0000000000000004, 1.0};
  p.allreduce_fixed_s = 0.004;
  p.quota_period_s = 0.02;
  p.quota_holds_comm = false;
  p.compute_jitter_cv = 0.25;
  p.compute_jitter_shared = 0.4;
  p.noise_shares = {0.125, 0.5};
  p.noise_std_s = {0.012, 1e-7};
  p.host_cpu_available = 1.97;
  return p;
}

TEST(ModelProfileFile, EveryFieldReadsBackEqual) {
  TempDir tmp;
  const ModelProfile p = every_field();
  const std::string path = tmp.write("p.yaml", model_profile_yaml(p, "Measured here.\n\nTwo lines."));
  auto back = load_model_profile(path);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  expect_equal(*back, p);
}

TEST(ModelProfileFile, DefaultsStayAbsentAndReadBackEqual) {
  TempDir tmp;
  ModelProfile p;
  p.name = "plain";
  p.parameters = 1e6;
  p.gradient_bytes = 4e6;
  p.flops_per_sample = 3e9;
  const std::string text = model_profile_yaml(p);
  EXPECT_EQ(text, "name: plain\nparameters: 1000000\nflops_per_sample: 3e+09\nflops_per_iteration: 0\n");
  auto back = load_model_profile(tmp.write("plain.yaml", text));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  expect_equal(*back, p);
}

TEST(ModelProfileFile, TheCommentAndTheTablesAreWrittenAsTheParserReadsThem) {
  ModelProfile p = every_field();
  p.name = "x";
  const std::string text = model_profile_yaml(p, "first\nsecond");
  EXPECT_EQ(text.rfind("# first\n# second\nname: x\n", 0), 0u) << text;
  EXPECT_NE(text.find("cpu_slowdown: {share: [0.1, 0.2, 0.3333333333333333, 1], slowdown: [10.5, 5.25, "
                      "3.0000000000000004, 1]}\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("compute_noise: {share: [0.125, 0.5], std_s: [0.012, 1e-07]}\n"), std::string::npos) << text;
  EXPECT_NE(text.find("quota_holds_comm: false\n"), std::string::npos) << text;
}

TEST(ModelProfileFile, ANameWithoutKeyTakesTheFileStemAndErrorsNameTheFile) {
  TempDir tmp;
  auto unnamed = load_model_profile(tmp.write("resnet-here.yaml", "parameters: 10\nflops_per_sample: 5\n"));
  ASSERT_TRUE(unnamed.is_ok()) << unnamed.status().message();
  EXPECT_EQ(unnamed->name, "resnet-here");
  const std::string bad = tmp.write("bad.yaml", "parameters: 10\nflops_per_sample: 5\nhost_cpu_available: 2\n");
  auto r = load_model_profile(bad);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("host_cpu_available"), std::string::npos) << r.status().message();
  EXPECT_FALSE(load_model_profile((tmp.path() / "missing.yaml").string()).is_ok());
}

}  // namespace
}  // namespace omnilearn::scenarios
