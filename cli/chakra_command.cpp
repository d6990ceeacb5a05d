// `omnilearn chakra`: replays the ranks of a Chakra execution trace (hybrid/chakra_replay.h) on a simple network and
// prints each rank's finish, compute, communication and idle seconds; with --out, ranks.csv and summary.json.
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/subcommand_line.h"
#include "omnilearn/base/atomic_file.h"
#include "omnilearn/hybrid/chakra_replay.h"
#include "omnilearn/traces/chakra_trace.h"
#include "omnilearn/traces/text_file.h"

namespace omnilearn::cli {
namespace {

namespace po = boost::program_options;
using traces::shortest_number;

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// "RANK=FACTOR" into speeds[RANK]; an error naming the option otherwise.
Status parse_speed(const std::string& text, std::vector<double>& speeds) {
  const std::size_t eq = text.find('=');
  std::size_t rank = 0;
  double factor = 0.0;
  try {
    std::size_t used = 0;
    if (eq == std::string::npos) throw std::invalid_argument("no '='");
    rank = std::stoul(text.substr(0, eq), &used);
    if (used != eq) throw std::invalid_argument("rank");
    factor = std::stod(text.substr(eq + 1), &used);
    if (used != text.size() - eq - 1) throw std::invalid_argument("factor");
  } catch (const std::exception&) {
    return Status::invalid_argument("--speed '" + text + "': expected RANK=FACTOR, e.g. 3=0.5");
  }
  if (rank >= speeds.size()) {
    return Status::invalid_argument("--speed '" + text + "': rank " + std::to_string(rank) +
                                    " is not in the trace (0.." + std::to_string(speeds.size() - 1) + ")");
  }
  speeds[rank] = factor;
  return Status::ok();
}

Status write_outputs(const std::string& dir, const std::string& trace, const hybrid::ChakraReplayOptions& o,
                     const hybrid::ChakraReplay& replay, std::size_t nodes) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::io_error(dir + ": cannot create the folder: " + ec.message());
  std::string csv = "rank,finish_s,compute_s,comm_s,idle_s\n";
  for (std::size_t r = 0; r < replay.ranks.size(); ++r) {
    const hybrid::ChakraRankTimes& t = replay.ranks[r];
    csv += std::to_string(r) + "," + shortest_number(t.finish_s) + "," + shortest_number(t.compute_s) + "," +
           shortest_number(t.comm_s) + "," + shortest_number(t.idle_s) + "\n";
  }
  OMNI_RETURN_IF_ERROR(write_file_atomically(dir + "/ranks.csv", csv));
  std::string speeds;
  for (double s : o.speed) speeds += (speeds.empty() ? "" : ", ") + shortest_number(s);
  const auto link = [](const hybrid::ChakraLink& l) {
    return "{\"bandwidth_bytes_per_s\": " + shortest_number(l.bandwidth_bytes_per_s) +
           ", \"latency_s\": " + shortest_number(l.latency_s) + "}";
  };
  const std::string json = "{\n  \"trace\": " + json_string(trace) +
                           ",\n  \"ranks\": " + std::to_string(replay.ranks.size()) +
                           ",\n  \"nodes\": " + std::to_string(nodes) +
                           ",\n  \"makespan_s\": " + shortest_number(replay.makespan_s) + ",\n  \"speed\": [" + speeds +
                           "],\n  \"inter\": " + link(o.network.inter) + ",\n  \"intra\": " + link(o.network.intra) +
                           ",\n  \"ranks_per_node\": " + std::to_string(o.network.ranks_per_node) + "\n}\n";
  return write_file_atomically(dir + "/summary.json", json);
}

}  // namespace

int run_chakra_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "omnilearn chakra <prefix-or-folder> [options]\n\n"
      "Replays a Chakra execution trace (files <prefix>.<rank>.et, one per rank) on a simple network: compute\n"
      "nodes one at a time per rank, sends, receives and collectives matched across ranks (docs/hybrid.md).\n\n"
      "examples:\n  omnilearn chakra traces/llm --bandwidth-gbps 200 --latency-us 2\n"
      "  omnilearn chakra traces/llm --speed 3=0.5 --ranks-per-node 8 --out runs/chakra\n\n"
      "options");
  double gbps = 100.0;
  double latency_us = 5.0;
  double intra_gbps = 0.0;
  double intra_latency_us = -1.0;
  std::int64_t per_node = 0;
  opts.add_options()("help,h", "print this help")("trace", po::value<std::string>(), "trace prefix or folder")(
      "speed", po::value<std::vector<std::string>>()->composing(),
      "RANK=FACTOR: the rank computes FACTOR times as fast")("bandwidth-gbps", po::value(&gbps)->default_value(gbps),
                                                             "bandwidth between nodes, gigabits per second")(
      "latency-us", po::value(&latency_us)->default_value(latency_us), "latency between nodes, microseconds")(
      "ranks-per-node", po::value(&per_node)->default_value(0), "ranks per node (0: one flat network)")(
      "intra-bandwidth-gbps", po::value(&intra_gbps), "bandwidth within a node (default: --bandwidth-gbps)")(
      "intra-latency-us", po::value(&intra_latency_us), "latency within a node (default: --latency-us)")(
      "out", po::value<std::string>(), "folder for ranks.csv and summary.json");
  po::positional_options_description pos;
  pos.add("trace", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "omnilearn chakra: " << e.what() << " (see --help)\n";
    return 2;
  }
  if (vm.count("help") != 0U) {
    std::cout << opts << "\n";
    return 0;
  }
  if (vm.count("trace") == 0U) {
    std::cerr << "omnilearn chakra: expected a trace prefix or folder (see --help)\n";
    return 2;
  }
  const std::string trace = vm["trace"].as<std::string>();
  auto ranks = traces::read_chakra_trace(trace);
  if (!ranks) return fail_with("omnilearn chakra", ranks.status());
  hybrid::ChakraReplayOptions o;
  o.speed.assign(ranks->size(), 1.0);
  if (vm.count("speed") != 0U) {
    for (const std::string& s : vm["speed"].as<std::vector<std::string>>()) {
      if (Status st = parse_speed(s, o.speed); !st) return fail_with("omnilearn chakra", st);
    }
  }
  o.network.inter = hybrid::ChakraLink{gbps * 1e9 / 8.0, latency_us * 1e-6};
  o.network.intra = hybrid::ChakraLink{(vm.count("intra-bandwidth-gbps") != 0U ? intra_gbps : gbps) * 1e9 / 8.0,
                                       (vm.count("intra-latency-us") != 0U ? intra_latency_us : latency_us) * 1e-6};
  o.network.ranks_per_node = per_node;
  auto replay = hybrid::replay_chakra(*ranks, o);
  if (!replay) return fail_with("omnilearn chakra", replay.status().with_context(trace));
  std::size_t nodes = 0;
  for (const traces::ChakraRank& r : *ranks) nodes += r.nodes.size();
  std::printf("%s: %zu ranks, %zu nodes, makespan %.6f s\n\n%6s %12s %12s %12s %12s\n", trace.c_str(), ranks->size(),
              nodes, replay->makespan_s, "rank", "finish_s", "compute_s", "comm_s", "idle_s");
  for (std::size_t r = 0; r < replay->ranks.size(); ++r) {
    const hybrid::ChakraRankTimes& t = replay->ranks[r];
    std::printf("%6zu %12.6f %12.6f %12.6f %12.6f\n", r, t.finish_s, t.compute_s, t.comm_s, t.idle_s);
  }
  if (vm.count("out") != 0U) {
    const std::string dir = vm["out"].as<std::string>();
    if (Status st = write_outputs(dir, trace, o, *replay, nodes); !st) return fail_with("omnilearn chakra", st);
    std::printf("\nwrote %s/ranks.csv and %s/summary.json\n", dir.c_str(), dir.c_str());
  }
  return 0;
}

}  // namespace omnilearn::cli
