// PublishedRun: a training run whose layout and iteration time a paper or a README published (Megatron-LM on A100,
// traces/devices/megatron-published.csv, hand-written with each row's source), the reference a hybrid-parallel
// simulator is checked against (docs/hybrid.md). Plain values: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/status.h"
#include "omnilearn/base/units.h"

namespace omnilearn::traces {

// The columns of megatron-published.csv, in order.
inline constexpr std::string_view kPublishedRunsHeader =
    "source,model,hidden,layers,heads,seq,vocab,tp,pp,dp,gpus,micro_batch,global_batch,recompute,iteration_s,mfu,"
    "device,peak_flops,note";

enum class Recompute {
  kFull,       // every transformer layer's forward is recomputed before its backward
  kSelective,  // only the attention core (Korthikanti et al.), with sequence parallelism
};

// One published run of a GPT model on tp x pp x dp = gpus GPUs.
struct PublishedRun {
  std::string source;  // the table or page it is from (korthikanti2022-table5, megatron-readme)
  std::string model;
  std::int64_t hidden = 0;
  std::int64_t layers = 0;
  std::int64_t heads = 0;
  std::int64_t seq = 0;
  std::int64_t vocab = 0;  // as padded by Megatron
  std::int64_t tp = 0;
  std::int64_t pp = 0;
  std::int64_t dp = 0;
  std::int64_t gpus = 0;
  std::optional<std::int64_t> micro_batch;  // nothing where the source does not say
  std::int64_t global_batch = 0;
  Recompute recompute = Recompute::kFull;
  Seconds iteration_s = 0.0;
  std::optional<double> mfu;  // model FLOPs utilization, a fraction of peak_flops; nothing where not published
  std::string device;         // A100-80, A100-40, or A100 where the source does not say
  double peak_flops = 0.0;    // the device's peak dense FLOP/s at the run's precision
  std::string note;           // how far the row is verified
};

// Parse the table (comments start with '#'; errors read "source:line: field 'value' is not valid; expected ..."), and
// read it from a file. A row is refused when gpus is not tp x pp x dp, hidden not a multiple of heads and of tp,
// layers not a multiple of pp, global_batch not a multiple of dp (and of micro_batch x dp when given), recompute
// neither full nor selective, iteration_s or peak_flops not positive, or mfu outside (0, 1].
Result<std::vector<PublishedRun>> parse_megatron_published(std::string_view text, std::string_view source);
Result<std::vector<PublishedRun>> read_megatron_published(const std::string& path);

}  // namespace omnilearn::traces
