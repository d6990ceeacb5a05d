#include "omnilearn/emulator/dataset_cache.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace omnilearn::emulator {
namespace {

namespace fs = std::filesystem;
constexpr const char* kFiles[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                                  "t10k-labels-idx1-ubyte"};

Status gunzip(const fs::path& from, const fs::path& to) {
  gzFile in = gzopen(from.c_str(), "rb");
  if (in == nullptr) return Status::io_error("cannot open " + from.string());
  const fs::path tmp = to.string() + ".tmp" + std::to_string(::getpid());
  std::ofstream out(tmp, std::ios::binary);
  std::vector<char> buf(1 << 16);
  int n = 0;
  while ((n = gzread(in, buf.data(), static_cast<unsigned>(buf.size()))) > 0) out.write(buf.data(), n);
  const bool failed = n < 0;
  gzclose(in);
  out.close();
  if (failed || !out) {
    std::error_code ec;
    fs::remove(tmp, ec);
    return Status::io_error("cannot decompress " + from.string() + " into " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, to, ec);
  if (ec) return Status::io_error("cannot rename " + tmp.string() + ": " + ec.message());
  return Status::ok();
}

}  // namespace

std::string default_dataset_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/omnilearn/fashion-mnist";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home != '\0' ? home : "/tmp") + "/.cache/omnilearn/fashion-mnist";
}

Result<std::string> prepare_fashion_mnist(const std::string& source_dir, const std::string& cache_dir) {
  for (const char* name : kFiles) {
    const fs::path src = fs::path(source_dir) / (std::string(name) + ".gz");
    if (!fs::is_regular_file(src)) {
      return Status::not_found("Fashion-MNIST not found: " + src.string() +
                               " is missing (install the Debian package dataset-fashion-mnist)");
    }
  }
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec) return Status::io_error("cannot create the dataset cache " + cache_dir + ": " + ec.message());
  for (const char* name : kFiles) {
    const fs::path dst = fs::path(cache_dir) / name;
    if (fs::is_regular_file(dst) && fs::file_size(dst) > 0) continue;
    OMNI_RETURN_IF_ERROR(gunzip(fs::path(source_dir) / (std::string(name) + ".gz"), dst));
  }
  return cache_dir;
}

}  // namespace omnilearn::emulator
