// PolicyRegistry: maps a policy name (as written in a scenario) to a factory. Build one with
// make_default_registry(); it holds no global state. Not thread-safe for concurrent add().
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/controller/policies.h"

namespace omnilearn::controller {

using PolicyFactory = std::function<Result<std::unique_ptr<BatchPolicy>>(const PolicyOptions&)>;

class PolicyRegistry {
 public:
  // Registers `factory` under `name`; an error if the name is taken.
  Status add(std::string name, PolicyFactory factory);
  // Creates the policy called `name`; an error listing the known names if there is none.
  Result<std::unique_ptr<BatchPolicy>> make(std::string_view name, const PolicyOptions& options) const;
  bool contains(std::string_view name) const;
  std::vector<std::string> names() const;  // sorted

 private:
  std::map<std::string, PolicyFactory, std::less<>> factories_;
};

// A registry holding uniform, static, omnilearn, omnilearn-asp, affine, oracle and staleness-bounded.
PolicyRegistry make_default_registry();

}  // namespace omnilearn::controller
