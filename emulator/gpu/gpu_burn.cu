// gpu_burn: a tiny CUDA client for checking GPU shares (no Torch). It launches a compute-bound kernel on a grid
// large enough to fill every SM the client may use, many times, and prints one JSON line: kernels completed per
// second and achieved FMA throughput. Under CUDA MPS with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE the client gets a
// fraction of the SMs, so its throughput scales with that percentage.
//   gpu_burn [--seconds S] [--start-at UNIX_TIME_S] [--blocks-per-sm N]
// --start-at: after creating the context and a warm-up launch, wait until this wall-clock time (so that several
// clients measure the same window). Exit 0 with JSON on stdout, 1 with {"error": ...}.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

constexpr int kThreads = 256;
constexpr int kInnerIterations = 4096;

__global__ void burn(float* out, int iterations) {
  float a = 1.0f + threadIdx.x * 1e-6f, b = 0.999f, c = 1e-7f;
  for (int i = 0; i < iterations; ++i) {
    a = fmaf(a, b, c);
    b = fmaf(b, a, c);
  }
  if (a == 42.0f) out[blockIdx.x] = b;  // never true; keeps the loop alive
}

int fail(const char* what, cudaError_t e) {
  std::printf("{\"error\": \"%s: %s\"}\n", what, cudaGetErrorString(e));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5.0, start_at = 0.0;
  int blocks_per_sm = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
    else if (std::strcmp(argv[i], "--start-at") == 0) start_at = std::atof(argv[i + 1]);
    else if (std::strcmp(argv[i], "--blocks-per-sm") == 0) blocks_per_sm = std::atoi(argv[i + 1]);
  }
  cudaDeviceProp prop{};
  cudaError_t e = cudaGetDeviceProperties(&prop, 0);
  if (e != cudaSuccess) return fail("cudaGetDeviceProperties", e);
  const int blocks = prop.multiProcessorCount * blocks_per_sm;
  float* out = nullptr;
  if ((e = cudaMalloc(&out, blocks * sizeof(float))) != cudaSuccess) return fail("cudaMalloc", e);
  burn<<<blocks, kThreads>>>(out, kInnerIterations);  // warm-up (and context creation before the window)
  if ((e = cudaDeviceSynchronize()) != cudaSuccess) return fail("warm-up kernel", e);
  if (start_at > 0.0) {
    const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    if (start_at > now) std::this_thread::sleep_for(std::chrono::duration<double>(start_at - now));
  }
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  long long kernels = 0;
  double elapsed = 0.0;
  while (elapsed < seconds) {
    for (int i = 0; i < 4; ++i) burn<<<blocks, kThreads>>>(out, kInnerIterations);
    if ((e = cudaDeviceSynchronize()) != cudaSuccess) return fail("kernel", e);
    kernels += 4;
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  const double fmas = 2.0 * kInnerIterations * static_cast<double>(blocks) * kThreads * static_cast<double>(kernels);
  const char* pct = std::getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
  std::printf("{\"device\": \"%s\", \"sms\": %d, \"blocks\": %d, \"kernels\": %lld, \"elapsed_s\": %.4f, "
              "\"kernels_per_s\": %.3f, \"gfma_per_s\": %.3f, \"active_thread_percentage\": \"%s\"}\n",
              prop.name, prop.multiProcessorCount, blocks, kernels, elapsed, kernels / elapsed, fmas / elapsed * 1e-9,
              pct ? pct : "");
  cudaFree(out);
  return 0;
}
