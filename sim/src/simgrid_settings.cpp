#include "simgrid_settings.h"

#include <malloc.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <xbt/config.hpp>

namespace omnilearn::sim {

Status check_simgrid_args(const std::vector<std::string>& args) {
  static const std::map<std::string, std::vector<std::string>> kModels = {
      {"network/model", {"LV08", "Constant", "SMPI", "IB", "CM02", "ns-3"}},
      {"cpu/model", {"Cas01"}},
      {"host/model", {"default", "compound", "ptask_L07"}},
      {"disk/model", {"S19"}},
      {"contexts/factory", {"thread", "raw", "ucontext", "boost"}},
      {"network/optim", {"Full", "Lazy"}},
      {"cpu/optim", {"Full", "TI", "Lazy"}},
  };
  static const std::vector<std::string> kLogSettings = {"thres", "threshold", "fmt", "app", "appender", "add",
                                                        "additivity"};
  static const std::vector<std::string> kLevels = {"trace", "debug", "verbose", "info", "warning", "error",
                                                   "critical"};
  auto one_of = [](const std::string& v, const std::vector<std::string>& set) {
    return std::find(set.begin(), set.end(), v) != set.end();
  };
  auto join = [](const std::vector<std::string>& set) {
    std::string out;
    for (const std::string& v : set) out += (out.empty() ? "" : ", ") + v;
    return out;
  };
  for (const std::string& arg : args) {
    if (arg.rfind("--cfg=", 0) == 0) {
      const std::string setting = arg.substr(6);
      const auto colon = setting.find(':');
      if (colon == std::string::npos || colon == 0) {
        return Status::invalid_argument("SimGrid setting '" + arg + "': expected --cfg=name:value");
      }
      const std::string name = setting.substr(0, colon), value = setting.substr(colon + 1);
      const auto models = kModels.find(name);
      if (models != kModels.end() && !one_of(value, models->second)) {
        return Status::invalid_argument("SimGrid setting '" + arg + "': " + name + " must be one of " +
                                        join(models->second));
      }
    } else if (arg.rfind("--log=", 0) == 0) {
      // category.setting:value, several separated by spaces; or no_loc.
      std::istringstream words(arg.substr(6));
      bool any = false;
      for (std::string word; words >> word;) {
        any = true;
        if (word == "no_loc") continue;
        const auto colon = word.find(':');
        const auto dot = word.rfind('.', colon);
        const std::string setting =
            dot == std::string::npos || colon == std::string::npos ? "" : word.substr(dot + 1, colon - dot - 1);
        if (dot == 0 || !one_of(setting, kLogSettings)) {
          return Status::invalid_argument("SimGrid log setting '" + arg + "': expected --log=category.setting:value "
                                          "with setting one of " + join(kLogSettings) +
                                          " (e.g. --log=root.thres:info)");
        }
        const std::string value = word.substr(colon + 1);
        if ((setting == "thres" || setting == "threshold") && !one_of(value, kLevels)) {
          return Status::invalid_argument("SimGrid log setting '" + arg + "': the threshold must be one of " +
                                          join(kLevels));
        }
      }
      if (!any) return Status::invalid_argument("SimGrid log setting '" + arg + "': empty");
    } else {
      return Status::invalid_argument("SimGrid argument '" + arg +
                                      "': only --cfg=name:value and --log=category.setting:value are passed on");
    }
  }
  return Status::ok();
}

namespace {

// Linux's limit on a process's memory mappings (vm.max_map_count), 65,530 when it cannot be read.
std::size_t max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  std::size_t n = 0;
  return in >> n ? n : 65530;
}

}  // namespace

Result<std::vector<std::string>> effective_simgrid_args(const SimOptions& options, std::size_t actors,
                                                        bool profiles_repeat) {
  // SimGrid's trace-integration CPU model asserts (aborts) on a speed profile that does not repeat.
  std::string cpu_optim;
  for (const std::string& arg : options.simgrid_args) {
    if (arg.rfind("--cfg=cpu/optim:", 0) == 0) cpu_optim = arg.substr(16);
  }
  if (cpu_optim == "TI" && !profiles_repeat) {
    return Status::invalid_argument("--cfg=cpu/optim:TI: SimGrid's trace integration needs availability that "
                                    "repeats (a looping trace); this run's speed profiles do not");
  }
  const std::size_t limit = options.max_map_count > 0 ? options.max_map_count : max_map_count();
  const std::size_t needed = 2 * actors + 4096;
  std::vector<std::string> args = options.simgrid_args;
  if (needed <= limit) return args;
  for (const std::string& arg : args) {
    if (arg.rfind("--cfg=contexts/guard-size:", 0) == 0 && arg != "--cfg=contexts/guard-size:0") {
      return Status::invalid_argument(arg + ": " + std::to_string(actors) + " actors with guarded stacks need " +
                                      std::to_string(needed) + " memory mappings, over vm.max_map_count (" +
                                      std::to_string(limit) + "): run `sysctl -w vm.max_map_count=" +
                                      std::to_string(needed) + "` as root, or leave the guard size to omnilearn");
    }
  }
  args.insert(args.begin(), "--cfg=contexts/guard-size:0");
  // Unguarded stacks come from malloc: mapped on their own above this size, they cost only the pages they touch
  // (from the heap, each 512 KiB stack is zeroed: 2,048 ASP workers took 330 MB instead of 70 MB).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  return args;
}

bool cpu_is_default_lazy_cas01() {
  namespace cfg = simgrid::config;
  return cfg::get_value<std::string>("cpu/model") == "Cas01" && cfg::get_value<std::string>("cpu/optim") == "Lazy" &&
         cfg::get_value<std::string>("host/model") != "ptask_L07" &&
         cfg::get_value<double>("maxmin/precision") == 1e-5 && cfg::get_value<double>("surf/precision") == 1e-9;
}

bool network_is_plain_cm02() {
  namespace cfg = simgrid::config;
  return cfg::get_value<std::string>("network/model") == "CM02" &&
         cfg::get_value<std::string>("host/model") != "ptask_L07" && !cfg::get_value<bool>("network/crosstraffic") &&
         cfg::get_value<double>("network/latency-factor") == 1.0 &&
         cfg::get_value<double>("network/bandwidth-factor") == 1.0 &&
         cfg::get_value<double>("network/weight-S") == 0.0 && cfg::get_value<std::string>("network/solver") == "maxmin";
}

}  // namespace omnilearn::sim
