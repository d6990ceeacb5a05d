#include "rendezvous.h"

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "omnilearn/emulator/join_secret.h"

namespace omnilearn::emulator::worker {
namespace {

constexpr std::chrono::seconds kSeveralHostsRendezvous(120);  // hosts are started by hand

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<std::uint8_t>& b) { return {b.begin(), b.end()}; }

// Each rank proves it knows the secret to rank 0, and rank 0 to each rank, through the store (join_secret.h).
void check_secret(c10d::Store& store, int rank, int world_size, const std::string& where) {
  const char* env = std::getenv(kSecretEnv);
  const std::string secret = env == nullptr ? "" : env;
  if (secret.empty()) {
    throw std::runtime_error(std::string("several hosts need the shared secret (the launcher's --secret-file or ") +
                             kSecretEnv + ")");
  }
  if (rank == 0) {
    auto challenge = random_challenge();
    if (!challenge) throw std::runtime_error(challenge.status().message());
    store.set("omnilearn/challenge", bytes(*challenge));
    for (int r = 1; r < world_size; ++r) {
      const std::string nonce = text(store.get("omnilearn/nonce/" + std::to_string(r)));
      store.set("omnilearn/serve/" + std::to_string(r), bytes(serve_proof(secret, *challenge, nonce, r)));
      const std::string proof = text(store.get("omnilearn/join/" + std::to_string(r)));
      // Rank r has read and checked rank 0's answer once it acknowledges: only then may a refusal here end rank 0
      // (and its store), so that rank r's node reports its own side of the failure, not a broken connection.
      (void)store.get("omnilearn/checked/" + std::to_string(r));
      if (!proofs_equal(proof, join_proof(secret, *challenge, r))) {
        throw std::runtime_error("rank " + std::to_string(r) + " failed the shared-secret check (its node has "
                                 "another secret, or it is not one of this run's nodes): refused");
      }
    }
    return;
  }
  auto nonce = random_challenge();
  if (!nonce) throw std::runtime_error(nonce.status().message());
  store.set("omnilearn/nonce/" + std::to_string(rank), bytes(*nonce));
  const std::string challenge = text(store.get("omnilearn/challenge"));
  store.set("omnilearn/join/" + std::to_string(rank), bytes(join_proof(secret, challenge, rank)));
  const std::string served = text(store.get("omnilearn/serve/" + std::to_string(rank)));
  const bool served_ok = proofs_equal(served, serve_proof(secret, challenge, *nonce, rank));
  store.set("omnilearn/checked/" + std::to_string(rank), bytes(served_ok ? "ok" : "refused"));
  if (!served_ok) {
    throw std::runtime_error("the store at " + where + " failed the shared-secret check (node 0 has another "
                             "secret, or it is not this run's node 0): not joining");
  }
}

}  // namespace

std::chrono::milliseconds gloo_timeout(const WorkerOptions& o) {
  return std::chrono::milliseconds(static_cast<long long>(gloo_timeout_s(o.config.settings) * 1000.0));
}

c10::intrusive_ptr<c10d::Store> open_store(const WorkerOptions& o, int rank, int world_size, bool serves) {
  if (!o.config.store_file.empty()) {
    auto store = c10::make_intrusive<c10d::FileStore>(o.config.store_file, world_size);
    store->setTimeout(gloo_timeout(o));
    return store;
  }
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(o.config.port);
  so.isServer = serves;
  so.numWorkers = world_size;
  so.waitWorkers = true;
  so.timeout = std::max<std::chrono::milliseconds>(kSeveralHostsRendezvous, gloo_timeout(o));
  auto store = c10::make_intrusive<c10d::TCPStore>(o.config.store_host, so);
  check_secret(*store, rank, world_size, o.config.store_host + ":" + std::to_string(o.config.port));
  return store;
}

}  // namespace omnilearn::emulator::worker
