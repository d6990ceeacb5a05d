// The CPU-quota waits of the testbed's all-reduce, as the simulator models them (bsp_driver.cpp), public so that
// `omnilearn validate` can take them out of a measured exchange. Pure function: thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "omnilearn/base/units.h"

namespace omnilearn::sim {

// The CPU-quota term of a ring all-reduce among processes held to CPU shares (of one core) by CFS quotas with
// period `period_s`: each ring step waits for its most throttled participant (share s < 1) to get CPU again, on
// average (1 - s) / 2 of its period (lengthened, as the testbed does, so that the quota s * period is at least
// 1 ms); the others, idle while they waited for it, still hold quota. Returns `ring_steps` times that wait; 0 when
// every share is >= 1 or period_s is 0. (Taking the expected maximum over all throttled participants instead
// overestimated the testbed's all-reduce by 30-60% on a quiet host.)
Seconds quota_ring_wait_s(const std::vector<double>& shares, Seconds period_s, std::size_t ring_steps);
//
// Steps per all-reduce: 2(P - 1) ring steps when the quota also holds the communication threads (testbed
// `throttle: process`); 1 when they run unthrottled (`throttle: compute`): only the training thread waits, once,
// to run again after the exchange.
inline std::size_t quota_waits_per_allreduce(std::size_t workers, bool quota_holds_comm) {
  return workers < 2 ? 0 : (quota_holds_comm ? 2 * (workers - 1) : 1);
}

}  // namespace omnilearn::sim
