#include "omnilearn/controller/policy_registry.h"

namespace omnilearn::controller {

Status PolicyRegistry::add(std::string name, PolicyFactory factory) {
  if (factories_.contains(name)) return Status::invalid_argument("policy '" + name + "' is registered twice");
  factories_.emplace(std::move(name), std::move(factory));
  return Status::ok();
}

Result<std::unique_ptr<BatchPolicy>> PolicyRegistry::make(std::string_view name,
                                                          const PolicyOptions& options) const {
  auto it = factories_.find(name);
  if (it == factories_.end()) {
    std::string known;
    for (const auto& [n, f] : factories_) known += (known.empty() ? "" : ", ") + n;
    return Status::not_found("unknown policy '" + std::string(name) + "' (expected one of: " + known + ")");
  }
  return it->second(options);
}

bool PolicyRegistry::contains(std::string_view name) const { return factories_.find(name) != factories_.end(); }

std::vector<std::string> PolicyRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [n, f] : factories_) out.push_back(n);
  return out;
}

PolicyRegistry make_default_registry() {
  PolicyRegistry r;
  using Ptr = std::unique_ptr<BatchPolicy>;
  (void)r.add("uniform", [](const PolicyOptions&) -> Result<Ptr> { return make_uniform_policy(); });
  (void)r.add("static", [](const PolicyOptions&) -> Result<Ptr> { return make_static_policy(); });
  (void)r.add("omnilearn", [](const PolicyOptions& o) -> Result<Ptr> { return make_omnilearn_policy(o); });
  (void)r.add("omnilearn-asp", [](const PolicyOptions& o) -> Result<Ptr> { return make_omnilearn_asp_policy(o); });
  (void)r.add("affine", [](const PolicyOptions& o) -> Result<Ptr> { return make_affine_policy(o); });
  (void)r.add("oracle", make_oracle_policy);
  (void)r.add("staleness-bounded", make_staleness_bounded_policy);
  return r;
}

}  // namespace omnilearn::controller
