// FakePowercap: a fake /sys/class/powercap tree in a temporary folder (RAPL zones with their name, range and
// counter files), for the RAPL counter's tests and the host power measurement's. Removed on destruction.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace omnilearn::emulator {

class FakePowercap {
 public:
  explicit FakePowercap(const std::string& name)
      : root_(std::filesystem::temp_directory_path() / ("omnilearn-rapl-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~FakePowercap() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  // Zone `zone` (intel-rapl:0, ...) named `name` with range and counter in microjoules.
  void zone(const std::string& zone, const std::string& name, unsigned long long range_uj, unsigned long long uj) {
    std::filesystem::create_directories(root_ / zone);
    std::ofstream(root_ / zone / "name") << name << "\n";
    std::ofstream(root_ / zone / "max_energy_range_uj") << range_uj << "\n";
    set(zone, uj);
  }
  void set(const std::string& zone, unsigned long long uj) { std::ofstream(root_ / zone / "energy_uj") << uj << "\n"; }
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

}  // namespace omnilearn::emulator
