// The NVML energy counter (energy_counter.h, open_nvml) over a fake libnvidia-ml (fake_nvml.cpp), loaded by path:
// joules summed over the devices from the moment of opening, a missing library or function named, NVML's error
// string on a failed call, a counter going backwards reported, NVML shut down with the counter.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "omnilearn/emulator/energy_counter.h"

namespace omnilearn::emulator {
namespace {

// The fake library's scripting functions, reached through dlopen of the same path open_nvml() loads, so that both see
// one copy of its state.
class FakeNvml {
 public:
  FakeNvml() : handle_(::dlopen(OMNILEARN_FAKE_NVML, RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ == nullptr) return;
    reset_ = reinterpret_cast<void (*)(unsigned, int)>(::dlsym(handle_, "fake_nvml_reset"));
    set_ =
        reinterpret_cast<void (*)(unsigned, unsigned long long, unsigned long long)>(::dlsym(handle_, "fake_nvml_set"));
    fail_energy_ = reinterpret_cast<void (*)(int)>(::dlsym(handle_, "fake_nvml_fail_energy"));
    initialised_ = reinterpret_cast<int (*)()>(::dlsym(handle_, "fake_nvml_initialised"));
  }
  ~FakeNvml() {
    if (handle_ != nullptr) ::dlclose(handle_);
  }
  bool loaded() const { return reset_ && set_ && fail_energy_ && initialised_; }
  void reset(unsigned devices, int init_rc = 0) { reset_(devices, init_rc); }
  void set(unsigned index, unsigned long long energy_mj, unsigned long long step_mj) {
    set_(index, energy_mj, step_mj);
  }
  void fail_energy(int rc) { fail_energy_(rc); }
  int initialised() { return initialised_(); }

 private:
  void* handle_;
  void (*reset_)(unsigned, int) = nullptr;
  void (*set_)(unsigned, unsigned long long, unsigned long long) = nullptr;
  void (*fail_energy_)(int) = nullptr;
  int (*initialised_)() = nullptr;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(NvmlCounter, SumsEveryDeviceFromTheMomentOfOpening) {
  FakeNvml fake;
  ASSERT_TRUE(fake.loaded()) << ::dlerror();
  fake.reset(/*devices=*/2);
  fake.set(0, /*energy_mj=*/5'000'000, /*step_mj=*/1'500);  // 1.5 J a reading
  fake.set(1, /*energy_mj=*/7'000'000, /*step_mj=*/250);    // 0.25 J a reading
  {
    auto counter = open_nvml(OMNILEARN_FAKE_NVML);
    ASSERT_TRUE(counter.is_ok()) << counter.status().message();
    EXPECT_EQ(fake.initialised(), 1);
    EXPECT_EQ((*counter)->description(), "NVML GPU 0 (Fake GPU 0), GPU 1 (Fake GPU 1)");
    // Opening read 5,000,000 and 7,000,000 mJ; the first reading 5,001,500 and 7,000,250: 1.75 J since then.
    auto first = (*counter)->joules();
    ASSERT_TRUE(first.is_ok()) << first.status().message();
    EXPECT_DOUBLE_EQ(*first, 1.75);
    auto second = (*counter)->joules();
    ASSERT_TRUE(second.is_ok()) << second.status().message();
    EXPECT_DOUBLE_EQ(*second, 3.5);
  }
  EXPECT_EQ(fake.initialised(), 0) << "the counter's destruction shuts NVML down";
}

TEST(NvmlCounter, AMissingLibraryOrFunctionIsNamed) {
  auto absent = open_nvml("/nonexistent/omnilearn/libnvidia-ml.so.1");
  ASSERT_FALSE(absent.is_ok());
  EXPECT_TRUE(
      contains(absent.status().message(), "cannot load the NVML library /nonexistent/omnilearn/libnvidia-ml.so.1"))
      << absent.status().message();
  auto old = open_nvml(OMNILEARN_FAKE_NVML_WITHOUT_ENERGY);
  ASSERT_FALSE(old.is_ok());
  EXPECT_TRUE(contains(old.status().message(), "has no function nvmlDeviceGetTotalEnergyConsumption"))
      << old.status().message();
  EXPECT_TRUE(contains(old.status().message(), OMNILEARN_FAKE_NVML_WITHOUT_ENERGY)) << old.status().message();
}

TEST(NvmlCounter, AnNvmlErrorGivesItsErrorString) {
  FakeNvml fake;
  ASSERT_TRUE(fake.loaded()) << ::dlerror();
  fake.reset(/*devices=*/1, /*init_rc=*/9);
  auto no_driver = open_nvml(OMNILEARN_FAKE_NVML);
  ASSERT_FALSE(no_driver.is_ok());
  EXPECT_TRUE(contains(no_driver.status().message(), "nvmlInit_v2 failed: Driver Not Loaded (NVML error 9"))
      << no_driver.status().message();

  fake.reset(/*devices=*/1);
  fake.fail_energy(3);  // a GPU older than Volta has no energy counter
  auto unsupported = open_nvml(OMNILEARN_FAKE_NVML);
  ASSERT_FALSE(unsupported.is_ok());
  EXPECT_TRUE(contains(unsupported.status().message(),
                       "nvmlDeviceGetTotalEnergyConsumption of GPU 0 (Fake GPU 0) failed: Not Supported (NVML error 3"))
      << unsupported.status().message();
  EXPECT_EQ(fake.initialised(), 0) << "a failed open shuts NVML down";

  fake.reset(/*devices=*/0);
  auto none = open_nvml(OMNILEARN_FAKE_NVML);
  ASSERT_FALSE(none.is_ok());
  EXPECT_TRUE(contains(none.status().message(), "sees no GPU")) << none.status().message();

  fake.reset(/*devices=*/1);
  auto counter = open_nvml(OMNILEARN_FAKE_NVML);
  ASSERT_TRUE(counter.is_ok()) << counter.status().message();
  fake.fail_energy(999);
  auto later = (*counter)->joules();
  ASSERT_FALSE(later.is_ok());
  EXPECT_TRUE(contains(later.status().message(), "failed: Unknown Error (NVML error 999")) << later.status().message();
}

TEST(NvmlCounter, ACounterGoingBackwardsIsReported) {
  FakeNvml fake;
  ASSERT_TRUE(fake.loaded()) << ::dlerror();
  fake.reset(/*devices=*/2);
  fake.set(0, 1'000, 0);
  fake.set(1, 9'000, 0);
  auto counter = open_nvml(OMNILEARN_FAKE_NVML);
  ASSERT_TRUE(counter.is_ok()) << counter.status().message();
  fake.set(1, 8'000, 0);  // the driver reloaded, say
  auto back = (*counter)->joules();
  ASSERT_FALSE(back.is_ok());
  EXPECT_TRUE(contains(back.status().message(),
                       "the NVML energy counter of GPU 1 (Fake GPU 1) went backwards: 8000 mJ after 9000 mJ"))
      << back.status().message();
}

}  // namespace
}  // namespace omnilearn::emulator
