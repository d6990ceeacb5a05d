// SchedulerRegistry: maps a scheduling policy's name (as a scenario or job file will write it) to a factory. Build
// one with make_default_scheduler_registry(); it holds no global state. Not thread-safe for concurrent add().
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/scheduler/scheduling_policy.h"

namespace omnilearn::scheduler {

using SchedulerFactory = std::function<Result<std::unique_ptr<SchedulingPolicy>>(const SchedulerOptions&)>;

class SchedulerRegistry {
 public:
  // Registers `factory` under `name`; an error if the name is taken.
  Status add(std::string name, SchedulerFactory factory);
  // Creates the policy called `name`; an error listing the known names if there is none.
  Result<std::unique_ptr<SchedulingPolicy>> make(std::string_view name, const SchedulerOptions& options) const;
  bool contains(std::string_view name) const;
  std::vector<std::string> names() const;  // sorted

 private:
  std::map<std::string, SchedulerFactory, std::less<>> factories_;
};

// A registry holding fifo, fifo-blind, las, las-blind, gavel, gavel-packed, goodput and balanced-mix.
SchedulerRegistry make_default_scheduler_registry();

}  // namespace omnilearn::scheduler
