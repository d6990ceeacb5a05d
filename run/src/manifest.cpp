#include "omnilearn/run/manifest.h"

#include <ctime>
#include <string_view>
#include <utility>

#include "omnilearn/base/check.h"
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
  json_["scenario"] = nullptr;  // text() puts scenario_ here
  // As the dump of a tree parsed from scenario_to_json's text would write it (the same ordered keys, its numbers in
  // shortest round-trip form, its strings valid UTF-8), one level down.
  scenario_ = scenarios::scenario_to_json(scenario, /*depth=*/1);
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
  const std::string rest = out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  // scenario_ in the placeholder's place: the backend's value before it is a string, which holds no raw newline.
  constexpr std::string_view kPlaceholder = "\n  \"scenario\": null";
  const std::size_t at = rest.find(kPlaceholder);
  OMNI_CHECK(at != std::string::npos, "Manifest: the scenario's place was lost");
  const std::size_t value = at + kPlaceholder.size() - 4;  // where "null" starts
  std::string text;
  text.reserve(rest.size() - 4 + scenario_.size());
  text.append(rest, 0, value).append(scenario_).append(rest, value + 4);
  return text;
}

}  // namespace omnilearn::run
