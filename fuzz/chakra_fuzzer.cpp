// libFuzzer target: fuzz_chakra() on each input (fuzz_entry_points.h). Built by -DOMNILEARN_FUZZ=ON.
#include <cstddef>
#include <cstdint>

#include "fuzz_entry_points.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  omnilearn::fuzz::fuzz_chakra(data, size);
  return 0;
}
