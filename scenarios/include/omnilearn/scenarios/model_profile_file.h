// The model-profile file: a ModelProfile (a model's compute and gradient cost, with the optional measured law and
// CPU-testbed terms) as YAML, which a scenario names as `workload.model: FILE`. `omnilearn calibrate` and
// `omnilearn validate` write it, the scenario parser reads it; this header is the one owner of its keys. Stateless
// functions: thread-safe.
#pragma once

#include <string>

#include "omnilearn/base/status.h"
#include "omnilearn/scenarios/scenario.h"

namespace omnilearn::scenarios {

// Reads a profile file (YAML, or JSON, which YAML reads too). A profile without `name` takes the file's stem.
// Unknown keys and values out of range are errors naming the file, line and key.
Result<ModelProfile> load_model_profile(const std::string& path);

// The profile as the YAML that load_model_profile reads back to an equal ModelProfile: `comment` first (each of its
// lines as a `# ` comment; "" for none), then name, parameters, flops_per_sample, flops_per_iteration, and every
// other field whose value differs from what the parser assumes when its key is absent (gradient_bytes other than 4
// bytes per parameter, the measured law, the testbed terms and their share tables); a testbed profile (with
// host_core_flops) always states quota_period_s, quota_holds_comm and allreduce_fixed_s. Numbers are written in the
// shortest text that reads back as the same double, in printf's %g style. Requires finite numbers; the parser's
// rules (e.g. compute_noise needs host_core_flops) are the caller's to keep.
std::string model_profile_yaml(const ModelProfile& profile, const std::string& comment = "");

}  // namespace omnilearn::scenarios
