// AspDriver: asynchronous data parallelism on a SimGrid platform. Each worker actor computes, pushes its gradient
// to the parameter-server actor over the network and pulls the parameters back, at its own pace; the server
// applies every update as it arrives, counts its staleness, feeds the controller and hands each worker its next
// batch with the parameters. workload.asp varies this: a rule may drop a push (Ringmaster) or hold its reply (SSP's
// bound, the epoch barrier of pull: per-epoch, whose replies between barriers carry no parameters); the server then
// answers when run::AspSchedule lets the worker go on. Where the server's link is the only resource the pushes and
// pulls share (a star whose backbone cannot saturate, CM02 with its defaults), they cross an analytic model of that
// link (FairShareLink, one per direction) that the server actor times, instead of being SimGrid flows, whose solver
// revisits every flow on the link at each start and end. Not thread-safe: lives in the simulation thread and must
// not move after start().
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "omnilearn/base/status.h"
#include "omnilearn/run/asp_schedule.h"
#include "omnilearn/run/run_writer.h"
#include "asp_run_log.h"
#include "run_context.h"
#include "server_link_model.h"
#include "training_progress.h"

namespace omnilearn::sim {

// The server link's analytic spec when `scenario`'s pushes and pulls may use it (more workers than
// SimOptions.asp_flow_max_workers, a star whose backbone cannot saturate, SimGrid's network set to CM02 without
// cross-traffic, latency or bandwidth factors or weight-S); nullopt when they are SimGrid flows. Call inside the
// engine, after the platform is built: it reads the engine's settings.
std::optional<ServerLinkSpec> asp_server_link(const scenarios::Scenario& scenario, const SimOptions& options);
// "asp-server-link-analytic" or "asp-push-pull" (flows): the path asp_server_link chooses, for the manifest.
std::string asp_link_path(const scenarios::Scenario& scenario, const SimOptions& options);

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
  // pull: per-epoch: barriers.csv (AspRunLog), into the run folder. Call after the engine ran.
  Status write_files() const;

 private:
  struct Push {  // a gradient on its way to the server
    WorkerId worker = 0;
    BatchSize batch = 0;
    Seconds compute_s = 0.0;
    Seconds start_s = 0.0;  // when its computation started
  };
  struct Reply {  // the parameters on their way back, with the worker's next batch
    BatchSize batch = 0;
    std::int64_t update = 0;              // the server's update count after applying this worker's gradient
    std::int64_t staleness = 0;           // other workers' updates applied since this worker's previous pull
    std::optional<BatchOutcome> outcome;  // virtual-time training: what the pushed batch computed
    Seconds held_s = 0.0;                 // how long the server held it (SSP, the epoch barrier)
  };
  struct Slot {
    simgrid::s4u::ExecPtr exec;
    Push push;
    Reply reply;
    simgrid::s4u::Mailbox* inbox = nullptr;  // where the server sends this worker's parameters
    simgrid::s4u::SemaphorePtr arrived;      // analytic link: released when the pull has arrived
    simgrid::s4u::SemaphorePtr turn;         // flows: released when this worker's push may be posted
    bool at_server = false;                  // analytic link: the push has arrived, not yet applied
    Seconds held_since_s = 0.0;              // when the server began holding its reply
  };
  // The analytic path: both directions of the server's link, timed by the server actor.
  struct AnalyticLink {
    AnalyticLink(ServerLinkSpec link_spec, FairShareLink push_link, FairShareLink pull_link)
        : spec(std::move(link_spec)), push(std::move(push_link)), pull(std::move(pull_link)) {}
    ServerLinkSpec spec;
    FairShareLink push;  // worker to server
    FairShareLink pull;  // server to worker
    simgrid::s4u::MutexPtr mutex;
    simgrid::s4u::ConditionVariablePtr wake;  // a push joins before the server's next event
    // The pushes in the order they were sent. The server applies them in that order, as the flows' server takes
    // them from its mailbox: a push that arrives before an earlier one waits for it.
    std::deque<WorkerId> sent;
    // Pushes posted since the server last ran, (time, worker): it sends them in that order (post_in_order()).
    struct Posted {
      Seconds time_s;
      WorkerId worker;
      double bytes;
      bool operator<(const Posted& o) const { return std::tie(time_s, worker) < std::tie(o.time_s, o.worker); }
    };
    std::vector<Posted> posted;
    Seconds next_event_s = std::numeric_limits<double>::infinity();
    std::vector<std::int64_t> finished;
  };

  void worker(WorkerId k);
  // Sends k's gradient to the server and returns its reply once the parameters are back.
  const Reply& exchange(WorkerId k);
  // Posts k's push (slot.push, `bytes`) to the server. Pushes posted at one instant go in worker order, not in the
  // order SimGrid happens to wake their workers: SimGrid breaks ties between events due at one date (speed
  // profiles' among them) by their addresses in memory, which differ from one machine, or allocator state, to
  // another, and the same scenario and seed must give the same bytes anywhere. Flows: the first worker to post at
  // an instant yields until the group stops growing, so that every worker woken with it joins, then the group posts
  // one by one in worker order (Slot::turn). The analytic link: the server sends what was posted (AnalyticLink::posted) in
  // (time, worker) order when it next runs.
  void post_in_order(WorkerId k, std::uint64_t bytes);
  void take_turn(WorkerId k, std::uint64_t bytes);  // flows: k's turn in its group: posts, hands the turn on
  void send_posted(Seconds t);  // analytic link: the pushes posted so far join the link, in order
  // The server's work on k's push when it has arrived: applies it, reports it, plans, fills k's reply, and appends
  // to `replies` the workers whose replies go now (k at once, unless the schedule holds replies).
  void apply_push(WorkerId k, std::vector<WorkerId>& replies);
  // k is down while replies may be held: a push of no batch tells the server (which re-checks who may go on).
  void send_down_notice(WorkerId k);
  // A down worker's notice (a push of no batch, sent only when replies may be held): it holds nobody back now.
  void hear_down(std::vector<WorkerId>& replies);
  // The held replies the schedule lets go now (all of them once the run is done); at the epoch barrier's opening,
  // the epoch's batch decision first, and a pull in each.
  void release_held(std::vector<WorkerId>& replies);
  // k's reply: its next batch, and (`pull`) the server's parameters, which k computes its next iteration on.
  void fill_reply(WorkerId k, bool pull);
  // Bytes of the reply to k: the parameters, or a header when the reply carries none (pull: per-epoch).
  std::uint64_t reply_bytes(WorkerId k) const;
  // A platform file's links with figures (ctx_.links) carry the reply to worker k (its pushes: post_in_order).
  void charge_reply(WorkerId k);
  void plan(Seconds t);
  // The joules of `push`'s computation when the run meters energy (energy: section with figures), else nullopt.
  std::optional<double> compute_joules(const Push& push) const;
  void server();       // flows: receives the pushes, sends the pulls
  void link_server();  // analytic link: wakes at each of the link's events
  void serve_link_events(Seconds t);
  BatchSize batch_for(WorkerId k) const;
  void fail(const Status& status);

  RunContext& ctx_;
  TrainingProgress progress_;
  std::vector<Slot> slots_;
  run::AspStaleness staleness_;  // each worker's last pull and own updates since
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr wake_;        // a worker came back up, or the run ended
  simgrid::s4u::Mailbox* server_inbox_ = nullptr;  // flows: where the workers push
  std::int64_t waiting_ = 0;                       // workers blocked on wake_
  std::int64_t updates_ = 0;
  std::int64_t dropped_ = 0;                       // pushes the rule dropped (Ringmaster)
  run::AspSchedule schedule_;
  std::vector<WorkerId> replies_;                  // the server's scratch: replies to send after a push
  std::vector<WorkerId> group_;                    // flows: the workers posting at this instant (post_in_order)
  std::size_t group_next_ = 0;                     // the position in group_ whose turn it is
  bool group_sorted_ = false;                      // group_ is in worker order (its first worker has yielded)
  std::vector<simgrid::s4u::CommPtr> push_comms_;  // flows: each worker's push on its way
  std::vector<bool> pulls_;                        // whether k's pending reply carries the parameters
  std::vector<bool> barrier_pull_;                 // k was held when the epoch barrier opened: its reply pulls
  const bool per_epoch_;                           // workload.asp.pull: per-epoch
  const bool ceil_epochs_;                         // workload.asp.epochs: ceil (the barrier's epoch count)
  AspRunLog log_;
  bool done_ = false;
  Seconds end_time_s_ = 0.0;
  Status status_;
  std::optional<AnalyticLink> link_;
};

}  // namespace omnilearn::sim
