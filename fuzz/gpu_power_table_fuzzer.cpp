// libFuzzer target: fuzz_gpu_power_table() on each input (fuzz_entry_points.h). Built by -DOMNILEARN_FUZZ=ON.
#include <cstddef>
#include <cstdint>

#include "fuzz_entry_points.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  omnilearn::fuzz::fuzz_gpu_power_table(data, size);
  return 0;
}
