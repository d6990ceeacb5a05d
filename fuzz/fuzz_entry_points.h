// FuzzEntryPoints: what each libFuzzer target does with one input, shared with the GoogleTest that replays
// fuzz/regressions/ in the normal build. Each entry point must return for any bytes: no abort, no exception,
// no unbounded memory. One call at a time per process (the sweep and importer entry points write a scratch
// file in a folder of their own).
#pragma once

#include <cstddef>
#include <cstdint>

namespace omnilearn::fuzz {

// The scenario parser on the bytes as a YAML file; leading "#set path=value" lines are also applied as
// overrides. A parsed scenario is also written as JSON.
void fuzz_scenario(const std::uint8_t* data, std::size_t size);
// The sweep parser on the bytes as a sweep file beside a valid base scenario `s.yaml`; a loaded sweep is
// expanded and its first point's scenario loaded.
void fuzz_sweep(const std::uint8_t* data, std::size_t size);
// The trace file reader; a trace that reads is written and read back, and must come back identical.
void fuzz_trace(const std::uint8_t* data, std::size_t size);
// The importers (traces/): the first byte picks the format, the rest is the raw file; an imported trace must
// write and read back identical.
void fuzz_importer(const std::uint8_t* data, std::size_t size);

// The readers of several-job workloads (traces/): the first byte picks one (the job file, the Pollux and Philly
// job importers, the device kinds and speeds, the metric curves, the packed pairs), the rest is the file. A job file
// that reads must write and read back identical; every error message must name the file.
void fuzz_jobs(const std::uint8_t* data, std::size_t size);

// The Chakra execution trace reader on the bytes as one rank's file: every error must name the file and a byte
// offset; a rank that reads must hold known node types and dependencies on its own ids only.
void fuzz_chakra(const std::uint8_t* data, std::size_t size);

// The GPU power table reader (traces/gpu_power_table.h) on the bytes as a table file: every error must name the file
// and a line; rows that read must make a table whose measured points read back exactly.
void fuzz_gpu_power_table(const std::uint8_t* data, std::size_t size);

}  // namespace omnilearn::fuzz
