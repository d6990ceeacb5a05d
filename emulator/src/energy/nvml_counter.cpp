// The NVML EnergyCounter (energy_counter.h): NVIDIA's management library loaded with dlopen, so that the testbed builds
// and runs without it. Only the functions below are used; their C signatures are NVML's (nvml.h, "Device Queries" and
// "Initialization and Cleanup"): every call returns an nvmlReturn_t, 0 for success.
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "omnilearn/emulator/energy_counter.h"

namespace omnilearn::emulator {
namespace {

using NvmlReturn = int;                       // nvmlReturn_t: an enum; NVML_SUCCESS = 0
using NvmlDevice = struct NvmlDeviceOpaque*;  // nvmlDevice_t: an opaque handle
constexpr unsigned kNameBytes = 96;           // NVML_DEVICE_NAME_V2_BUFFER_SIZE

using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using CountFn = NvmlReturn (*)(unsigned*);
using HandleFn = NvmlReturn (*)(unsigned, NvmlDevice*);
using EnergyFn = NvmlReturn (*)(NvmlDevice, unsigned long long*);
using NameFn = NvmlReturn (*)(NvmlDevice, char*, unsigned);
using ErrorStringFn = const char* (*)(NvmlReturn);

// The loaded library (dlclose on destruction) and its functions.
struct NvmlLibrary {
  std::string path;
  void* handle = nullptr;
  InitFn init = nullptr;
  ShutdownFn shutdown = nullptr;
  CountFn count = nullptr;
  HandleFn device = nullptr;
  EnergyFn energy = nullptr;
  NameFn name = nullptr;
  ErrorStringFn error_string = nullptr;
  bool initialised = false;

  NvmlLibrary() = default;
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
  ~NvmlLibrary() {
    if (initialised) shutdown();
    if (handle != nullptr) ::dlclose(handle);
  }

  // "nvmlInit_v2 failed: <NVML's string> (NVML error N)".
  Status failed(const std::string& call, NvmlReturn rc) const {
    const char* text = error_string(rc);
    return Status::io_error(call + " failed: " + (text != nullptr ? text : "no error string") + " (NVML error " +
                            std::to_string(rc) + ", " + path + ")");
  }
};

template <typename Fn>
Status resolve(NvmlLibrary& lib, const char* symbol, Fn& fn) {
  ::dlerror();
  void* p = ::dlsym(lib.handle, symbol);
  if (p == nullptr) {
    return Status::not_found("the NVML library " + lib.path + " has no function " + symbol +
                             "; expected the driver's libnvidia-ml (R450 or later)");
  }
  fn = reinterpret_cast<Fn>(p);
  return Status::ok();
}

class NvmlCounter final : public EnergyCounter {
 public:
  struct Device {
    NvmlDevice handle = nullptr;
    std::string name;
    unsigned long long last_mj = 0;
  };
  NvmlCounter(std::unique_ptr<NvmlLibrary> lib, std::vector<Device> devices)
      : lib_(std::move(lib)), devices_(std::move(devices)) {}

  std::string description() const override {
    std::string d = "NVML";
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      d.append(i == 0 ? " " : ", ").append("GPU " + std::to_string(i) + " (" + devices_[i].name + ")");
    }
    return d;
  }

  Result<double> joules() override {
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      Device& d = devices_[i];
      unsigned long long now = 0;
      if (const NvmlReturn rc = lib_->energy(d.handle, &now); rc != 0) {
        return lib_->failed("nvmlDeviceGetTotalEnergyConsumption of GPU " + std::to_string(i) + " (" + d.name + ")",
                            rc);
      }
      if (now < d.last_mj) {
        return Status::io_error("the NVML energy counter of GPU " + std::to_string(i) + " (" + d.name +
                                ") went backwards: " + std::to_string(now) + " mJ after " + std::to_string(d.last_mj) +
                                " mJ; expected it to count up from the driver's load (was the driver reloaded?)");
      }
      total_mj_ += now - d.last_mj;
      d.last_mj = now;
    }
    return static_cast<double>(total_mj_) * 1e-3;
  }

 private:
  std::unique_ptr<NvmlLibrary> lib_;
  std::vector<Device> devices_;
  std::uint64_t total_mj_ = 0;
};

// The library loaded and its functions resolved, NVML not yet initialised.
Result<std::unique_ptr<NvmlLibrary>> load(const std::string& path) {
  auto lib = std::make_unique<NvmlLibrary>();
  lib->path = path;
  lib->handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == nullptr) {
    const char* why = ::dlerror();
    return Status::not_found("cannot load the NVML library " + path + ": " + (why != nullptr ? why : "dlopen failed") +
                             " (no NVIDIA driver on this host?)");
  }
  OMNI_RETURN_IF_ERROR(resolve(*lib, "nvmlErrorString", lib->error_string));
  OMNI_RETURN_IF_ERROR(resolve(*lib, "nvmlInit_v2", lib->init));
  OMNI_RETURN_IF_ERROR(resolve(*lib, "nvmlShutdown", lib->shutdown));
  OMNI_RETURN_IF_ERROR(resolve(*lib, "nvmlDeviceGetCount_v2", lib->count));
  OMNI_RETURN_IF_ERROR(resolve(*lib, "nvmlDeviceGetHandleByIndex_v2", lib->device));
  OMNI_RETURN_IF_ERROR(resolve(*lib, "nvmlDeviceGetTotalEnergyConsumption", lib->energy));
  OMNI_RETURN_IF_ERROR(resolve(*lib, "nvmlDeviceGetName", lib->name));
  return lib;
}

}  // namespace

Result<std::unique_ptr<EnergyCounter>> open_nvml(const std::string& library) {
  auto loaded = load(library);
  if (!loaded) return loaded.status();
  std::unique_ptr<NvmlLibrary> lib = std::move(loaded).value();
  if (const NvmlReturn rc = lib->init(); rc != 0) return lib->failed("nvmlInit_v2", rc);
  lib->initialised = true;
  unsigned count = 0;
  if (const NvmlReturn rc = lib->count(&count); rc != 0) return lib->failed("nvmlDeviceGetCount_v2", rc);
  if (count == 0) return Status::not_found("NVML (" + library + ") sees no GPU on this host");
  std::vector<NvmlCounter::Device> devices(count);
  for (unsigned i = 0; i < count; ++i) {
    NvmlCounter::Device& d = devices[i];
    const std::string which = " of GPU " + std::to_string(i);
    if (const NvmlReturn rc = lib->device(i, &d.handle); rc != 0) {
      return lib->failed("nvmlDeviceGetHandleByIndex_v2" + which, rc);
    }
    char name[kNameBytes] = {};
    if (const NvmlReturn rc = lib->name(d.handle, name, kNameBytes); rc != 0) {
      return lib->failed("nvmlDeviceGetName" + which, rc);
    }
    d.name.assign(name, ::strnlen(name, kNameBytes));
    if (const NvmlReturn rc = lib->energy(d.handle, &d.last_mj); rc != 0) {
      return lib->failed("nvmlDeviceGetTotalEnergyConsumption" + which + " (" + d.name + ")", rc);
    }
  }
  return std::unique_ptr<EnergyCounter>(std::make_unique<NvmlCounter>(std::move(lib), std::move(devices)));
}

}  // namespace omnilearn::emulator
