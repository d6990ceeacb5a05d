#include "omnilearn/emulator/node_environment.h"

#include <charconv>
#include <vector>

namespace omnilearn::emulator {
namespace {

using Env = std::map<std::string, std::string>;

// The first of `names` that is set (and not empty) in `env`.
const std::pair<const std::string, std::string>* first_set(const Env& env, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    const auto it = env.find(n);
    if (it != env.end() && !it->second.empty()) return &*it;
  }
  return nullptr;
}

// A whole number in [lo, hi], or an error naming `what` (a flag or NAME=value) and `expected`.
Result<int> parse_int(std::string_view text, int lo, int hi, const std::string& what, const std::string& expected) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
    return Status::invalid_argument(what + ": expected " + expected);
  }
  return v;
}

Result<int> parse_variable(const std::pair<const std::string, std::string>& var, int lo, int hi,
                           const std::string& expected) {
  return parse_int(var.second, lo, hi, var.first + "=" + var.second, expected);
}

struct Group {
  NodeSource source;
  std::vector<std::string> nnodes, rank;
};

// torchrun runs one process per --nproc-per-node; OmniLearn wants one launcher per host. SLURM likewise per task.
Status check_one_launcher_per_host(NodeSource source, const Env& env) {
  if (source == NodeSource::kTorchrun) {
    if (const auto* local = first_set(env, {"LOCAL_WORLD_SIZE"}); local != nullptr && local->second != "1") {
      return Status::invalid_argument("LOCAL_WORLD_SIZE=" + local->second +
                                      ": run one omnilearn launcher per host (torchrun --nproc-per-node 1)");
    }
  }
  if (source == NodeSource::kSlurm) {
    const auto* tasks = first_set(env, {"SLURM_NTASKS"});
    const auto* nodes = first_set(env, {"SLURM_NNODES"});
    if (tasks != nullptr && nodes != nullptr && tasks->second != nodes->second) {
      return Status::invalid_argument("SLURM_NTASKS=" + tasks->second + " but SLURM_NNODES=" + nodes->second +
                                      ": run one omnilearn launcher per node (srun --ntasks-per-node=1)");
    }
  }
  return Status::ok();
}

// nnodes and node_rank: the flag, else the first group (torchrun, then SLURM) that sets the value.
Status resolve_counts(const NodeFlags& flags, const Env& env, NodeEnvironment& out) {
  const std::vector<Group> groups = {
      {NodeSource::kTorchrun, {"NNODES", "WORLD_SIZE"}, {"NODE_RANK", "GROUP_RANK", "RANK"}},
      {NodeSource::kSlurm, {"SLURM_NTASKS", "SLURM_NNODES"}, {"SLURM_PROCID", "SLURM_NODEID"}}};
  if (flags.nnodes) {
    out.nnodes = *flags.nnodes, out.nnodes_from = "--nnodes", out.source = NodeSource::kFlag;
  } else {
    for (const Group& g : groups) {
      const auto* var = first_set(env, g.nnodes);
      if (var == nullptr) continue;
      const Result<int> n = parse_variable(*var, 1, 1 << 20, "a number of hosts >= 1");
      if (!n) return n.status();
      out.nnodes = *n;
      OMNI_RETURN_IF_ERROR(check_one_launcher_per_host(g.source, env));
      out.nnodes_from = var->first, out.source = g.source;
      break;
    }
  }
  if (flags.node_rank) {
    out.node_rank = *flags.node_rank, out.node_rank_from = "--node-rank";
    return Status::ok();
  }
  if (out.nnodes <= 1) return Status::ok();  // one host: stray rank variables do not matter
  for (const Group& g : groups) {
    const auto* var = first_set(env, g.rank);
    if (var == nullptr) continue;
    const Result<int> rank = parse_variable(
        *var, 0, out.nnodes - 1, "a node rank in [0, " + std::to_string(out.nnodes) + ") (" + out.nnodes_from + ")");
    if (!rank) return rank.status();
    out.node_rank = *rank;
    out.node_rank_from = var->first;
    if (out.source == NodeSource::kFlag || out.source == NodeSource::kDefault) out.source = g.source;
    return Status::ok();
  }
  if (flags.nnodes) return Status::ok();  // --nnodes alone: rank 0, as before the environment was read
  return Status::invalid_argument(std::to_string(out.nnodes) + " nodes (" + out.nnodes_from +
                                  ") but no node rank: "
                                  "pass --node-rank, or set NODE_RANK (torchrun) or SLURM_PROCID");
}

// The port from MASTER_PORT, else the torchrun default.
Result<int> master_port(const Env& env, std::string& from) {
  const auto* port = first_set(env, {"MASTER_PORT"});
  if (port == nullptr) return kDefaultMasterPort;
  from += ", MASTER_PORT";
  return parse_variable(*port, 1, 65535, "a TCP port in 1..65535");
}

Status resolve_master(const NodeFlags& flags, const Env& env, NodeEnvironment& out) {
  if (flags.master) {
    const std::string& m = *flags.master;
    const auto colon = m.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return Status::invalid_argument("--master " + m + ": expected ADDR:PORT");
    const Result<int> port = parse_int(std::string_view(m).substr(colon + 1), 1, 65535, "--master " + m, "ADDR:PORT");
    if (!port) return port.status();
    out.master_port = *port;
    out.master_addr = m.substr(0, colon), out.master_from = "--master";
    return Status::ok();
  }
  if (out.nnodes <= 1) return Status::ok();
  if (const auto* addr = first_set(env, {"MASTER_ADDR"})) {
    out.master_addr = addr->second, out.master_from = "MASTER_ADDR";
  } else if (const auto* list = first_set(env, {"SLURM_JOB_NODELIST", "SLURM_NODELIST"})) {
    auto host = first_slurm_host(list->second);
    if (!host) return host.status().with_context(list->first + "=" + list->second);
    out.master_addr = *host, out.master_from = list->first;
  } else {
    if (flags.nnodes) return Status::ok();  // --nnodes alone: rank 0, as before the environment was read
  return Status::invalid_argument(std::to_string(out.nnodes) + " nodes (" + out.nnodes_from +
                                    ") but no master: pass "
                                    "--master ADDR:PORT, or set MASTER_ADDR (and MASTER_PORT)");
  }
  const Result<int> port = master_port(env, out.master_from);
  if (!port) return port.status();
  out.master_port = *port;
  return Status::ok();
}

}  // namespace

Result<std::string> first_slurm_host(std::string_view list) {
  std::string host;
  std::size_t i = 0;
  while (i < list.size() && list[i] != ',') {  // the first item ends at a comma outside brackets
    if (list[i] == ']') return Status::invalid_argument("an unmatched ']' in a SLURM host list");
    if (list[i] != '[') {
      host.push_back(list[i++]);
      continue;
    }
    const std::size_t close = list.find(']', i);
    if (close == std::string_view::npos) return Status::invalid_argument("an unclosed '[' in a SLURM host list");
    const std::string_view inside = list.substr(i + 1, close - i - 1);
    const std::string_view first = inside.substr(0, inside.find_first_of(",-"));
    if (first.empty() || first.find('[') != std::string_view::npos) {
      return Status::invalid_argument("an empty or nested range in a SLURM host list");
    }
    host.append(first);
    i = close + 1;
  }
  if (host.empty()) return Status::invalid_argument("an empty SLURM host list");
  return host;
}

std::string NodeEnvironment::describe() const {
  auto from = [](const std::string& f) { return f.empty() ? std::string(" (default)") : " (" + f + ")"; };
  std::string s = std::to_string(nnodes) + " nodes" + from(nnodes_from) + ", node rank " + std::to_string(node_rank) +
                  from(node_rank_from);
  if (!master_addr.empty()) s += ", master " + master_addr + ":" + std::to_string(master_port) + from(master_from);
  return s;
}

void NodeEnvironment::apply_to(NodeOptions& nodes) const {
  nodes.nnodes = nnodes;
  nodes.node_rank = node_rank;
  nodes.master_addr = master_addr;
  nodes.master_port = master_port;
}

Result<NodeEnvironment> resolve_node_environment(const NodeFlags& flags, const Env& env) {
  NodeEnvironment out;
  if (flags.nnodes || flags.node_rank || flags.master) out.source = NodeSource::kFlag;
  OMNI_RETURN_IF_ERROR(resolve_counts(flags, env, out));
  OMNI_RETURN_IF_ERROR(resolve_master(flags, env, out));
  return out;
}

}  // namespace omnilearn::emulator
