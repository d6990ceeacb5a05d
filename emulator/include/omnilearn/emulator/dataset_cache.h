// Fashion-MNIST as shipped by Debian's dataset-fashion-mnist package (gzip'd IDX files), decompressed once into
// a cache folder that LibTorch code can read. Safe to call from several processes at once (atomic renames).
#pragma once

#include <string>

#include "omnilearn/base/status.h"

namespace omnilearn::emulator {

// The default cache folder: $XDG_CACHE_HOME/omnilearn/fashion-mnist, else $HOME/.cache/omnilearn/fashion-mnist.
std::string default_dataset_cache_dir();

// Makes sure `cache_dir` holds the four decompressed IDX files of `source_dir` (train-images-idx3-ubyte, ...)
// and returns `cache_dir`. A missing source names the package to install.
Result<std::string> prepare_fashion_mnist(const std::string& source_dir, const std::string& cache_dir);

}  // namespace omnilearn::emulator
