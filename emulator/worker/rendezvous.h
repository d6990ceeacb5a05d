// The worker's rendezvous store (Torch). One host: a c10d FileStore in the run folder (no network listener at
// all; LibTorch 1.13's TCPStore server cannot bind to loopback only). Several hosts: rank 0 serves a TCPStore on
// the master port, and every rank passes the shared-secret join check (join_secret.h) before Gloo connects.
// Called once per worker process, from its main thread.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>

#include "worker_options.h"

namespace omnilearn::emulator::worker {

// The store of `world_size` ranks for this one (`serves`: rank 0 of the TCPStore). Throws std::runtime_error with
// the reason (rendezvous timeout, a failed join check naming the rank) as c10d does.
c10::intrusive_ptr<c10d::Store> open_store(const WorkerOptions& o, int rank, int world_size, bool serves);

// Gloo's timeout per collective or message: follows emulator.stall_timeout_s (gloo_timeout_s).
std::chrono::milliseconds gloo_timeout(const WorkerOptions& o);

}  // namespace omnilearn::emulator::worker
