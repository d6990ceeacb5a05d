// A fake libnvidia-ml for the NVML counter's tests (nvml_counter_test.cpp): the NVML functions open_nvml() resolves,
// with C linkage, over scripted devices, and fake_nvml_* functions the tests call through dlsym on the same loaded
// library to script them. Built twice: as is, and with FAKE_NVML_WITHOUT_ENERGY (no
// nvmlDeviceGetTotalEnergyConsumption, as a driver older than R450). Not thread-safe.
#include <cstdio>
#include <cstring>

namespace {

constexpr int kMaxDevices = 8;

struct FakeDevice {
  unsigned long long energy_mj = 0;
  unsigned long long step_mj = 0;  // added after each reading
};

struct FakeState {
  unsigned devices = 0;
  int init_rc = 0;
  int energy_rc = 0;
  int initialised = 0;  // nvmlInit_v2 calls less nvmlShutdown calls
  FakeDevice device[kMaxDevices];
};

FakeState state;

}  // namespace

struct nvmlDevice_st {
  int index;
};

namespace {
nvmlDevice_st handles[kMaxDevices] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
}

extern "C" {

// The scripting functions.
void fake_nvml_reset(unsigned devices, int init_rc) {
  state = FakeState{};
  state.devices = devices < kMaxDevices ? devices : kMaxDevices;
  state.init_rc = init_rc;
}
void fake_nvml_set(unsigned index, unsigned long long energy_mj, unsigned long long step_mj) {
  if (index < kMaxDevices) state.device[index] = {energy_mj, step_mj};
}
void fake_nvml_fail_energy(int rc) { state.energy_rc = rc; }
int fake_nvml_initialised() { return state.initialised; }

// NVML's functions (nvml.h's signatures, nvmlReturn_t as int).
int nvmlInit_v2() {
  if (state.init_rc != 0) return state.init_rc;
  ++state.initialised;
  return 0;
}
int nvmlShutdown() {
  --state.initialised;
  return 0;
}
const char* nvmlErrorString(int rc) {
  switch (rc) {
    case 0:
      return "Success";
    case 3:
      return "Not Supported";
    case 9:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}
int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = state.devices;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_st** device) {
  if (index >= state.devices) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = &handles[index];
  return 0;
}
int nvmlDeviceGetName(nvmlDevice_st* device, char* name, unsigned length) {
  std::snprintf(name, length, "Fake GPU %d", device->index);
  return 0;
}
#ifndef FAKE_NVML_WITHOUT_ENERGY
int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_st* device, unsigned long long* energy_mj) {
  if (state.energy_rc != 0) return state.energy_rc;
  FakeDevice& d = state.device[device->index];
  *energy_mj = d.energy_mj;
  d.energy_mj += d.step_mj;
  return 0;
}
#endif

}  // extern "C"
