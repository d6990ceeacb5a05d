#include "omnilearn/run/manifest.h"

#include <ctime>
#include <utility>

#include "omnilearn/scenarios/scenario_json.h"

namespace omnilearn::run {
namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

Manifest::Manifest(std::string backend, const scenarios::Scenario& scenario, const std::vector<std::string>& argv)
    : started_(utc_now()) {
  json_["backend"] = std::move(backend);
  // scenario_to_json writes valid JSON by construction (numbers in shortest round-trip form, which survive this).
  json_["scenario"] = nlohmann::ordered_json::parse(scenarios::scenario_to_json(scenario));
  json_["argv"] = argv;
  json_["seed"] = scenario.seed;
}

void Manifest::set(const std::string& key, nlohmann::ordered_json value) { json_[key] = std::move(value); }

void Manifest::set_all(const std::map<std::string, std::string>& fields) {
  for (const auto& [key, value] : fields) json_[key] = value;
}

std::string Manifest::text(std::optional<double> elapsed_s) const {
  nlohmann::ordered_json out = json_;
  out["wall_clock"] = {{"started", started_}, {"elapsed_s", elapsed_s ? nlohmann::ordered_json(*elapsed_s) : nullptr}};
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace omnilearn::run
