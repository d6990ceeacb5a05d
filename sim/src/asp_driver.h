// AspDriver: asynchronous data parallelism on a SimGrid platform. Each worker actor computes, pushes its gradient
// to the parameter-server actor over the network and pulls the parameters back, at its own pace; the server
// applies every update as it arrives, counts its staleness, feeds the controller and hands each worker its next
// batch with the parameters. Not thread-safe: lives in the simulation thread and must not move after start().
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include "omnilearn/base/status.h"
#include "omnilearn/run/run_writer.h"
#include "run_context.h"
#include "training_progress.h"

namespace omnilearn::sim {

class AspDriver {
 public:
  explicit AspDriver(RunContext& context);

  // Creates the actors. Call once, before the engine runs.
  void start();
  // An availability change, already recorded and reported to the controller: a worker that goes down loses the
  // iteration it is computing and idles until it returns.
  void on_availability(WorkerId worker, double fraction);
  const Status& status() const { return status_; }
  run::RunSummary summary() const;

 private:
  struct Push {  // a gradient on its way to the server
    WorkerId worker = 0;
    BatchSize batch = 0;
    Seconds compute_s = 0.0;
  };
  struct Reply {  // the parameters on their way back, with the worker's next batch
    BatchSize batch = 0;
    std::int64_t update = 0;     // the server's update count after applying this worker's gradient
    std::int64_t staleness = 0;  // updates applied between this worker's previous pull and this push
    std::optional<BatchOutcome> outcome;  // virtual-time training: what the pushed batch computed
  };
  struct Slot {
    simgrid::s4u::ExecPtr exec;
    Push push;
    Reply reply;
    std::int64_t pulled = 0;  // server update count when this worker last pulled
    simgrid::s4u::Mailbox* inbox = nullptr;  // where the server sends this worker's parameters
  };

  void worker(WorkerId k);
  void server();
  BatchSize batch_for(WorkerId k) const;
  void fail(const Status& status);

  RunContext& ctx_;
  TrainingProgress progress_;
  std::vector<Slot> slots_;
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr wake_;  // a worker came back up, or the run ended
  std::int64_t waiting_ = 0;  // workers blocked on wake_
  std::int64_t updates_ = 0;
  bool done_ = false;
  Seconds end_time_s_ = 0.0;
  Status status_;
};

}  // namespace omnilearn::sim
