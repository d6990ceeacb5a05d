// NodeEnvironment: where this launcher sits among several hosts (how many nodes, its rank, node 0's address),
// from the command line or, for what the command line leaves out, from the variables that torchrun or SLURM set.
// Precedence per value: flag > torchrun's variables > SLURM's > the single-host default. Pure functions of their
// inputs (the environment comes in as a map): thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "omnilearn/base/status.h"
#include "omnilearn/emulator/launcher.h"

namespace omnilearn::emulator {

// The torchrun default port, used with a master from SLURM_JOB_NODELIST (or MASTER_ADDR) when MASTER_PORT is unset.
inline constexpr int kDefaultMasterPort = 29500;

enum class NodeSource { kDefault, kFlag, kTorchrun, kSlurm };

// The values of --nnodes, --node-rank and --master; nullopt when the option was not given.
struct NodeFlags {
  std::optional<int> nnodes;
  std::optional<int> node_rank;
  std::optional<std::string> master;  // ADDR:PORT
};

struct NodeEnvironment {
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr;  // empty with one node and no --master
  int master_port = 0;
  NodeSource source = NodeSource::kDefault;  // the environment's group that was read (kFlag: the flags only)
  // Per value, where it came from: "--nnodes", "WORLD_SIZE", "SLURM_NTASKS", ..., or "" for the default.
  std::string nnodes_from, node_rank_from, master_from;

  bool from_environment() const { return source == NodeSource::kTorchrun || source == NodeSource::kSlurm; }
  // One line for the log: "2 nodes (SLURM_NTASKS), node rank 1 (SLURM_PROCID), master n01:29500 (...)".
  std::string describe() const;
  // Copies nnodes, node_rank and the master into `nodes` (bind address and secret untouched).
  void apply_to(NodeOptions& nodes) const;
};

// Resolves each value: its flag when given, else torchrun's variables (NNODES or WORLD_SIZE; NODE_RANK, GROUP_RANK
// or RANK; MASTER_ADDR with MASTER_PORT), else SLURM's (SLURM_NTASKS or SLURM_NNODES; SLURM_PROCID or
// SLURM_NODEID; the first host of SLURM_JOB_NODELIST or SLURM_NODELIST, port MASTER_PORT or 29500), else one node.
// With one node the rank and master variables are not read. An error names the flag or the variable at fault:
// not a number, a rank outside [0, nodes), several launchers per host (LOCAL_WORLD_SIZE > 1, or SLURM_NTASKS !=
// SLURM_NNODES), an unreadable node list, several nodes but no master, or nodes from the environment but no rank
// (--nnodes alone keeps its old meaning: node rank 0).
Result<NodeEnvironment> resolve_node_environment(const NodeFlags& flags, const std::map<std::string, std::string>& env);

// The first host of a SLURM host list ("n[01-04,07],gpu2" -> "n01"); an error when `list` is not one.
Result<std::string> first_slurm_host(std::string_view list);

}  // namespace omnilearn::emulator
