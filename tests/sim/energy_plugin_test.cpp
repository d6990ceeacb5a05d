// The cross-check of EnergyMeter against SimGrid's host energy plugin (docs/energy.md): on a host busy at a known
// performance state both charge P x t; at availability 0.5 the plugin (3.32) charges the whole idle power plus half
// the dynamic power, where the meter's share rule charges half of the node: the other half of the host belongs to
// whoever took it. Its own executable: one SimGrid engine per process.
#include <gtest/gtest.h>

#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/plugins/energy.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <string>
#include <vector>

#include "omnilearn/run/energy_meter.h"

namespace omnilearn::run {
namespace {

namespace sg4 = simgrid::s4u;

double meter_busy_joules(double idle_w, double busy_w, double seconds, double fraction) {
  scenarios::EnergySpec spec;
  scenarios::DevicePower d;
  d.idle_w = idle_w, d.busy_w = busy_w;
  EnergyMeter m(spec, {WorkerPower{d, 1.0, false, {}, {}, {}}});
  if (fraction < 1.0) m.availability(0, fraction, 0.0);
  IterationRecord r;
  r.compute_s = seconds, r.batch = 32;
  m.iteration(r);
  return m.summary(seconds, std::nullopt, std::nullopt).compute_j;
}

TEST(EnergyPlugin, AgreesWithTheMeterAtTwoPstatesAndDiffersUnderAvailability) {
  std::vector<std::string> args{"energy-plugin-test", "--log=root.thres:critical"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  sg4::Engine engine(&argc, argv.data());
  sg_host_energy_plugin_init();
  auto* zone = sg4::create_full_zone("energy");
  // One core; pstate 0 at 1 Gflop/s (10 W idle, 100 W busy), pstate 1 at 0.5 Gflop/s (10 W idle, 40 W busy).
  std::vector<sg4::Host*> hosts;
  for (const char* name : {"p0", "p1", "half"}) {
    sg4::Host* h = zone->create_host(name, std::vector<double>{1e9, 5e8});
    h->set_property("wattage_per_state", "10:100, 10:40");
    h->set_property("wattage_off", "0");
    hosts.push_back(h);
  }
  zone->seal();
  hosts[1]->set_pstate(1);
  hosts[2]->set_speed_profile(simgrid::kernel::profile::ProfileBuilder::from_string("half", "0 0.5\n", -1));
  std::vector<double> ends(hosts.size(), -1.0);
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    sg4::Actor::create(std::string("run-") + hosts[i]->get_cname(), hosts[i], [&ends, i] {
      sg4::this_actor::execute(1e9);
      ends[i] = sg4::Engine::get_clock();
    });
  }
  engine.run();
  const double now = sg4::Engine::get_clock();
  ASSERT_DOUBLE_EQ(now, 2.0);
  EXPECT_DOUBLE_EQ(ends[0], 1.0);
  EXPECT_DOUBLE_EQ(ends[1], 2.0);  // pstate 1 and the half-available host take 2 s
  EXPECT_DOUBLE_EQ(ends[2], 2.0);
  // p0 busy 1 s at 100 W, then idle 1 s at 10 W until the clock stops.
  EXPECT_NEAR(sg_host_get_consumed_energy(hosts[0]), meter_busy_joules(10, 100, 1.0, 1.0) + 10.0, 1e-9);
  EXPECT_NEAR(sg_host_get_consumed_energy(hosts[1]), meter_busy_joules(10, 40, 2.0, 1.0), 1e-9);
  // Half available for 2 s: SimGrid 3.32 judges the load against the peak speed (0.5) and charges the whole idle
  // power, 10 + 0.5 x 90 = 55 W; the share rule charges half of the node, 0.5 x 100 = 50 W.
  EXPECT_NEAR(sg_host_get_consumed_energy(hosts[2]), 110.0, 1e-9);
  EXPECT_NEAR(meter_busy_joules(10, 100, 2.0, 0.5), 100.0, 1e-9);
}

}  // namespace
}  // namespace omnilearn::run
