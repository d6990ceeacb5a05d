// The several-hosts placement of `omnilearn emulate`: --nnodes, --node-rank and --master from the command line,
// and for what they leave out torchrun's or SLURM's variables (emulator/node_environment.h). Header-only: the
// one call site is emulate_command.cpp.
#pragma once

#include <boost/program_options.hpp>
#include <iostream>
#include <optional>
#include <string>

#include "omnilearn/base/install_layout.h"
#include "omnilearn/base/status.h"
#include "omnilearn/emulator/launcher.h"
#include "omnilearn/emulator/node_environment.h"

namespace omnilearn::cli {

// Sets nodes.nnodes, node_rank and the master; says on stderr which variables were read. An error names the flag
// or the variable at fault.
inline Status place_node_from_command_line(const boost::program_options::variables_map& vm,
                                           emulator::NodeOptions& nodes) {
  auto given = [&vm](const char* name) { return vm.count(name) > 0 && !vm[name].defaulted(); };
  emulator::NodeFlags flags;
  if (given("nnodes")) flags.nnodes = vm["nnodes"].as<int>();
  if (given("node-rank")) flags.node_rank = vm["node-rank"].as<int>();
  if (given("master")) flags.master = vm["master"].as<std::string>();
  auto placed = emulator::resolve_node_environment(flags, process_environment());
  if (!placed) return placed.status();
  if (placed->from_environment())
    std::cerr << "omnilearn emulate: from the environment: " << placed->describe() << "\n";
  placed->apply_to(nodes);
  return Status::ok();
}

}  // namespace omnilearn::cli
