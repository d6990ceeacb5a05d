#include "omnilearn/emulator/energy_counter.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;

// The unsigned number in `file`, or an error naming it.
Result<std::uint64_t> read_number(const fs::path& file) {
  std::FILE* f = std::fopen(file.c_str(), "r");
  if (f == nullptr) return Status::io_error("cannot read " + file.string() + ": " + std::strerror(errno));
  unsigned long long v = 0;
  errno = 0;
  const int n = std::fscanf(f, "%llu", &v);
  const int err = errno;
  std::fclose(f);
  if (n != 1) {
    return Status::io_error("cannot read " + file.string() + ": " +
                            (err != 0 ? std::strerror(err) : "expected a number of microjoules"));
  }
  return static_cast<std::uint64_t>(v);
}

class RaplCounter final : public EnergyCounter {
 public:
  struct Domain {
    std::string name;
    fs::path energy_file;
    std::uint64_t max_range_uj = 0;
    std::uint64_t last_uj = 0;
  };
  explicit RaplCounter(std::vector<Domain> domains) : domains_(std::move(domains)) {}

  std::string description() const override {
    std::string d = "RAPL";
    for (std::size_t i = 0; i < domains_.size(); ++i) d.append(i == 0 ? " " : ", ").append(domains_[i].name);
    return d;
  }

  Result<double> joules() override {
    for (Domain& d : domains_) {
      auto now = read_number(d.energy_file);
      if (!now) return now.status();
      total_uj_ += static_cast<double>(wrapped_delta(d.last_uj, *now, d.max_range_uj));
      d.last_uj = *now;
    }
    return total_uj_ * 1e-6;
  }

 private:
  std::vector<Domain> domains_;
  double total_uj_ = 0.0;
};

}  // namespace

std::uint64_t wrapped_delta(std::uint64_t before, std::uint64_t after, std::uint64_t max_range) {
  if (after >= before) return after - before;
  return (max_range > before ? max_range - before : 0) + after;
}

Result<std::unique_ptr<EnergyCounter>> open_rapl(const fs::path& powercap) {
  std::error_code ec;
  if (!fs::is_directory(powercap, ec)) {
    return Status::not_found(powercap.string() + " is absent: this host exposes no RAPL energy counters");
  }
  std::vector<fs::path> zones;
  for (const fs::directory_entry& e : fs::directory_iterator(powercap, ec)) {
    const std::string name = e.path().filename().string();
    // intel-rapl:N, not intel-rapl:N:M (a part of package N) nor the intel-rapl control type itself.
    if (name.starts_with("intel-rapl:") && name.find(':', 11) == std::string::npos) zones.push_back(e.path());
  }
  std::sort(zones.begin(), zones.end());
  std::vector<RaplCounter::Domain> domains;
  for (const fs::path& zone : zones) {
    std::string name = zone.filename().string();
    if (std::ifstream in(zone / "name"); in && std::getline(in, name) && !name.starts_with("package")) continue;
    auto range = read_number(zone / "max_energy_range_uj");
    if (!range) return range.status();
    auto now = read_number(zone / "energy_uj");
    if (!now) return now.status();
    domains.push_back({name, zone / "energy_uj", *range, *now});
  }
  if (domains.empty()) return Status::not_found(powercap.string() + " holds no RAPL package zone (intel-rapl:N)");
  return std::unique_ptr<EnergyCounter>(std::make_unique<RaplCounter>(std::move(domains)));
}

Result<std::unique_ptr<EnergyCounter>> open_host_energy_counter() { return open_rapl(); }

}  // namespace omnilearn::emulator
