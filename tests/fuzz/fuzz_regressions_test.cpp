// Every input under fuzz/regressions/<target>/ (each a crash, hang or sanitizer report fuzzing once found) and
// every shipped seed file goes through the same entry point as its libFuzzer target: each must return.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_entry_points.h"

namespace omnilearn::fuzz {
namespace {

namespace fs = std::filesystem;

using EntryPoint = void (*)(const std::uint8_t*, std::size_t);

std::vector<fs::path> files_under(const fs::path& dir, const std::string& extension = "") {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file() && (extension.empty() || it->path().extension() == extension)) files.push_back(*it);
  }
  return files;
}

std::size_t replay(EntryPoint entry, const std::vector<fs::path>& files, const std::string& prefix = "") {
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    std::ifstream in(file, std::ios::binary);
    const std::string bytes = prefix + std::string(std::istreambuf_iterator<char>(in), {});
    entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  return files.size();
}

const fs::path kRoot = OMNILEARN_SOURCE_DIR;

TEST(FuzzRegressions, ScenarioInputsReturn) {
  replay(fuzz_scenario, files_under(kRoot / "fuzz/regressions/scenario"));
  EXPECT_GT(replay(fuzz_scenario, files_under(kRoot / "scenarios", ".yaml")), 10u);  // the seeds
}

TEST(FuzzRegressions, SweepInputsReturn) {
  replay(fuzz_sweep, files_under(kRoot / "fuzz/regressions/sweep"));
  EXPECT_GT(replay(fuzz_sweep, files_under(kRoot / "scenarios", ".yaml")), 10u);
}

TEST(FuzzRegressions, TraceInputsReturn) {
  replay(fuzz_trace, files_under(kRoot / "fuzz/regressions/trace"));
  EXPECT_GT(replay(fuzz_trace, files_under(kRoot / "traces/data", ".csv")), 5u);
}

TEST(FuzzRegressions, ImporterInputsReturn) {
  replay(fuzz_importer, files_under(kRoot / "fuzz/regressions/importer"));
  for (char format = 0; format < 10; ++format) {
    replay(fuzz_importer, files_under(kRoot / "traces/data", ".csv"), std::string(1, format));
  }
}

TEST(FuzzRegressions, JobsInputsReturn) {
  EXPECT_GE(replay(fuzz_jobs, files_under(kRoot / "fuzz/regressions/jobs")), 5u);  // the hostile job files
  for (char reader = 0; reader < 7; ++reader) {
    replay(fuzz_jobs, files_under(kRoot / "traces/devices", ".csv"), std::string(1, reader));
    replay(fuzz_jobs, files_under(kRoot / "scenarios/testbed/jobs", ".csv"), std::string(1, reader));
  }
}

TEST(FuzzRegressions, ChakraInputsReturn) {
  replay(fuzz_chakra, files_under(kRoot / "fuzz/regressions/chakra"));
  // A GlobalMetadata and a compute node with a dependency on itself, then each of its prefixes (the seeds of
  // fuzz/make_corpus.sh are written the same way).
  const std::string file("\x07\x0a\x05\x30\x2e\x30\x2e\x34\x0b\x08\x01\x18\x04\x38\x64\x2a\x01\x01\x3a\x00", 20);
  for (std::size_t cut = 0; cut <= file.size(); ++cut) {
    fuzz_chakra(reinterpret_cast<const std::uint8_t*>(file.data()), cut);
  }
}

TEST(FuzzRegressions, GpuPowerTableInputsReturn) {
  EXPECT_GE(replay(fuzz_gpu_power_table, files_under(kRoot / "fuzz/regressions/gpu_power_table")), 5u);
  EXPECT_GE(replay(fuzz_gpu_power_table, files_under(kRoot / "traces/devices", ".csv")), 5u);  // zeus-power.csv reads
}

}  // namespace
}  // namespace omnilearn::fuzz
