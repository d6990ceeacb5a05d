#include "omnilearn/scheduler/scheduler_registry.h"

#include "omnilearn/scheduler/packing_policy.h"
#include "omnilearn/scheduler/scheduling_policies.h"

namespace omnilearn::scheduler {

Status SchedulerRegistry::add(std::string name, SchedulerFactory factory) {
  if (factories_.contains(name)) return Status::invalid_argument("scheduler '" + name + "' is registered twice");
  factories_.emplace(std::move(name), std::move(factory));
  return Status::ok();
}

Result<std::unique_ptr<SchedulingPolicy>> SchedulerRegistry::make(std::string_view name,
                                                                  const SchedulerOptions& options) const {
  auto it = factories_.find(name);
  if (it == factories_.end()) {
    std::string known;
    for (const auto& [n, f] : factories_) known += (known.empty() ? "" : ", ") + n;
    return Status::not_found("unknown scheduler '" + std::string(name) + "' (expected one of: " + known + ")");
  }
  auto policy = it->second(options);
  if (!policy.is_ok() || !options.packing || (*policy)->packs_devices()) return policy;
  return make_packing_policy(std::move(policy).value(), options);
}

bool SchedulerRegistry::contains(std::string_view name) const { return factories_.find(name) != factories_.end(); }

std::vector<std::string> SchedulerRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [n, f] : factories_) out.push_back(n);
  return out;
}

SchedulerRegistry make_default_scheduler_registry() {
  SchedulerRegistry r;
  (void)r.add("fifo", make_fifo_policy);
  (void)r.add("fifo-blind", make_fifo_blind_policy);
  (void)r.add("goodput", make_goodput_policy);
  (void)r.add("las", make_las_policy);
  (void)r.add("las-blind", make_las_blind_policy);
  (void)r.add("gavel", make_gavel_policy);
  (void)r.add("gavel-packed", make_gavel_packed_policy);
  (void)r.add("balanced-mix", make_balanced_mix_policy);
  return r;
}

}  // namespace omnilearn::scheduler
