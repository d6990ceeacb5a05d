// Several hosts from the environment: torchrun's and SLURM's variables when the flags are absent, the precedence
// flag > torchrun > SLURM per value, SLURM host lists, and errors that name the variable at fault.
#include "omnilearn/emulator/node_environment.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace omnilearn::emulator {
namespace {

using Env = std::map<std::string, std::string>;

NodeEnvironment resolved(const NodeFlags& flags, const Env& env) {
  auto r = resolve_node_environment(flags, env);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? *r : NodeEnvironment{};
}

std::string refused(const NodeFlags& flags, const Env& env) {
  auto r = resolve_node_environment(flags, env);
  EXPECT_FALSE(r.is_ok()) << "accepted: " << (r.is_ok() ? r->describe() : "");
  return r.is_ok() ? "" : r.status().message();
}

TEST(NodeEnvironment, NothingSetIsOneHost) {
  const NodeEnvironment n = resolved({}, {{"RANK", "3"}, {"MASTER_ADDR", "x"}});  // stray variables, one host
  EXPECT_EQ(n.nnodes, 1);
  EXPECT_EQ(n.node_rank, 0);
  EXPECT_EQ(n.master_addr, "");
  EXPECT_EQ(n.source, NodeSource::kDefault);
  EXPECT_FALSE(n.from_environment());
}

TEST(NodeEnvironment, TorchrunVariables) {
  const NodeEnvironment n = resolved({}, {{"WORLD_SIZE", "2"},
                                          {"RANK", "1"},
                                          {"MASTER_ADDR", "10.0.0.1"},
                                          {"MASTER_PORT", "29400"},
                                          {"LOCAL_WORLD_SIZE", "1"}});
  EXPECT_EQ(n.nnodes, 2);
  EXPECT_EQ(n.node_rank, 1);
  EXPECT_EQ(n.master_addr, "10.0.0.1");
  EXPECT_EQ(n.master_port, 29400);
  EXPECT_EQ(n.source, NodeSource::kTorchrun);
  EXPECT_EQ(n.nnodes_from, "WORLD_SIZE");
  EXPECT_EQ(n.describe(), "2 nodes (WORLD_SIZE), node rank 1 (RANK), master 10.0.0.1:29400 (MASTER_ADDR, MASTER_PORT)");
  // NNODES and NODE_RANK come before WORLD_SIZE and RANK; MASTER_PORT defaults to torchrun's 29500.
  const NodeEnvironment m =
      resolved({}, {{"NNODES", "3"}, {"WORLD_SIZE", "24"}, {"NODE_RANK", "2"}, {"RANK", "17"}, {"MASTER_ADDR", "h0"}});
  EXPECT_EQ(m.nnodes, 3);
  EXPECT_EQ(m.node_rank, 2);
  EXPECT_EQ(m.master_port, kDefaultMasterPort);
}

TEST(NodeEnvironment, SlurmVariables) {
  const NodeEnvironment n = resolved({}, {{"SLURM_NTASKS", "4"},
                                          {"SLURM_NNODES", "4"},
                                          {"SLURM_PROCID", "3"},
                                          {"SLURM_NODEID", "3"},
                                          {"SLURM_JOB_NODELIST", "gpu[07-10]"}});
  EXPECT_EQ(n.nnodes, 4);
  EXPECT_EQ(n.node_rank, 3);
  EXPECT_EQ(n.master_addr, "gpu07");
  EXPECT_EQ(n.master_port, kDefaultMasterPort);
  EXPECT_EQ(n.source, NodeSource::kSlurm);
  // SLURM_NNODES and SLURM_NODEID alone, SLURM_NODELIST, MASTER_PORT for the port.
  const NodeEnvironment m = resolved(
      {}, {{"SLURM_NNODES", "2"}, {"SLURM_NODEID", "0"}, {"SLURM_NODELIST", "a1,b2"}, {"MASTER_PORT", "31000"}});
  EXPECT_EQ(m.nnodes, 2);
  EXPECT_EQ(m.master_addr, "a1");
  EXPECT_EQ(m.master_port, 31000);
}

TEST(NodeEnvironment, FlagsBeatTorchrunBeatsSlurmPerValue) {
  const Env both = {{"WORLD_SIZE", "2"},   {"RANK", "1"},         {"MASTER_ADDR", "t0"},
                    {"SLURM_NTASKS", "3"}, {"SLURM_PROCID", "2"}, {"SLURM_JOB_NODELIST", "s[0-2]"}};
  const NodeEnvironment t = resolved({}, both);
  EXPECT_EQ(t.nnodes, 2);
  EXPECT_EQ(t.node_rank, 1);
  EXPECT_EQ(t.master_addr, "t0");
  const NodeEnvironment f = resolved({.nnodes = 3, .node_rank = 0, .master = "m:1234"}, both);
  EXPECT_EQ(f.nnodes, 3);
  EXPECT_EQ(f.node_rank, 0);
  EXPECT_EQ(f.master_addr, "m");
  EXPECT_EQ(f.master_port, 1234);
  EXPECT_EQ(f.source, NodeSource::kFlag);
  // A flag for one value, the environment for the others (an sbatch script that sets MASTER_ADDR itself).
  const NodeEnvironment mixed = resolved({.nnodes = std::nullopt, .node_rank = std::nullopt, .master = "head:2000"},
                                         {{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "1"}});
  EXPECT_EQ(mixed.nnodes, 2);
  EXPECT_EQ(mixed.node_rank, 1);
  EXPECT_EQ(mixed.master_addr, "head");
  EXPECT_EQ(mixed.source, NodeSource::kSlurm);
  const NodeEnvironment sbatch =
      resolved({}, {{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "0"}, {"MASTER_ADDR", "head"}, {"SLURM_NODELIST", "n1"}});
  EXPECT_EQ(sbatch.master_addr, "head");
}

TEST(NodeEnvironment, ErrorsNameTheVariable) {
  EXPECT_NE(refused({}, {{"WORLD_SIZE", "two"}}).find("WORLD_SIZE=two"), std::string::npos);
  EXPECT_NE(refused({}, {{"WORLD_SIZE", "2"}, {"RANK", "2"}, {"MASTER_ADDR", "h"}}).find("RANK=2"), std::string::npos);
  EXPECT_NE(
      refused({}, {{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "-1"}, {"SLURM_NODELIST", "h"}}).find("SLURM_PROCID=-1"),
      std::string::npos);
  EXPECT_NE(refused({}, {{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}})
                .find("MASTER_PORT=70000"),
            std::string::npos);
  EXPECT_NE(refused({}, {{"WORLD_SIZE", "8"}, {"RANK", "0"}, {"MASTER_ADDR", "h"}, {"LOCAL_WORLD_SIZE", "4"}})
                .find("LOCAL_WORLD_SIZE=4"),
            std::string::npos);
  EXPECT_NE(refused({}, {{"SLURM_NTASKS", "8"}, {"SLURM_NNODES", "2"}, {"SLURM_PROCID", "0"}}).find("SLURM_NTASKS=8"),
            std::string::npos);
  EXPECT_NE(refused({}, {{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "0"}, {"SLURM_JOB_NODELIST", "n[01-02"}})
                .find("SLURM_JOB_NODELIST=n[01-02"),
            std::string::npos);
  EXPECT_NE(refused({}, {{"WORLD_SIZE", "2"}, {"RANK", "0"}}).find("no master"), std::string::npos);
  EXPECT_NE(refused({}, {{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}).find("no node rank"), std::string::npos);
  EXPECT_EQ(resolved({.nnodes = 2, .node_rank = std::nullopt, .master = "h:1"}, {}).node_rank, 0);  // as before
  EXPECT_NE(refused({.nnodes = std::nullopt, .node_rank = std::nullopt, .master = "nohost"}, {})
                .find("--master nohost: expected ADDR:PORT"),
            std::string::npos);
  EXPECT_NE(refused({.nnodes = std::nullopt, .node_rank = std::nullopt, .master = "h:0"}, {}).find("--master h:0"),
            std::string::npos);
}

TEST(NodeEnvironment, SlurmHostLists) {
  struct Case {
    const char* list;
    const char* first;
  };
  for (const Case& c :
       {Case{"node01", "node01"}, Case{"n[01-04,07]", "n01"}, Case{"n[7,1-3],gpu2", "n7"}, Case{"gpu2,n[1-2]", "gpu2"},
        Case{"rack[2-3]-node[08-09]", "rack2-node08"}, Case{"a[9]b", "a9b"}}) {
    auto h = first_slurm_host(c.list);
    ASSERT_TRUE(h.is_ok()) << c.list << ": " << h.status().message();
    EXPECT_EQ(*h, c.first) << c.list;
  }
  for (const char* bad : {"", "n[", "n]", "n[]", ",n1", "n[[1]]"}) EXPECT_FALSE(first_slurm_host(bad).is_ok()) << bad;
}

TEST(NodeEnvironment, ApplyToCopiesThePlacement) {
  NodeOptions nodes;
  nodes.bind_addr = "10.0.0.2";
  resolved({}, {{"NNODES", "2"}, {"NODE_RANK", "1"}, {"MASTER_ADDR", "10.0.0.1"}}).apply_to(nodes);
  EXPECT_EQ(nodes.nnodes, 2);
  EXPECT_EQ(nodes.node_rank, 1);
  EXPECT_EQ(nodes.master_addr, "10.0.0.1");
  EXPECT_EQ(nodes.master_port, kDefaultMasterPort);
  EXPECT_EQ(nodes.bind_addr, "10.0.0.2");
}

}  // namespace
}  // namespace omnilearn::emulator
