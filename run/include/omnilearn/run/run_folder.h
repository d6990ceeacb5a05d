// RunFolder: the ownership of one run folder for the lifetime of a run (sim, emulate, a sweep's root). One owner at a
// time: the owner holds an flock on `<dir>/.omnilearn.lock` (which records its pid), so a second run into the same
// folder is refused instead of interleaving its files with the first's. A folder that already holds anything is
// refused unless the caller asks to replace what the tool writes there (--force) or to keep it (sweep --resume).
// Not thread-safe; the lock is per open file, so it also excludes other threads and processes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "omnilearn/base/atomic_file.h"
#include "omnilearn/base/status.h"

namespace omnilearn::run {

// The lock file's name inside a run folder.
inline constexpr const char* kRunFolderLock = ".omnilearn.lock";

// The files a run folder may hold, as RunWriter and JobsRunFolder write them (kReplace also removes the temporary
// file of each one's atomic write, atomic_temp_path).
const std::vector<std::string>& run_folder_files();

enum class FolderReuse {
  kRefuse,   // a folder that holds anything (besides a lock file) is an error naming what it holds
  kReplace,  // --force: remove the known files (run_folder_files, `own_files`, `own_folders`) and their temporary
            // files, then go on
  kKeep,     // --resume, --gather: keep everything; only take the lock
};

struct RunFolderOptions {
  FolderReuse reuse = FolderReuse::kRefuse;
  // More file names this tool writes into the folder (a sweep's sweep.csv, its index, its points' logs).
  std::vector<std::string> own_files;
  // Sub-folders this tool wrote (a sweep's point folders, from its index): kReplace removes the known files inside
  // each (run_folder_files), then the sub-folder itself when that leaves it empty. Never anything else.
  std::vector<std::string> own_folders;
  // Entries that neither make the folder non-empty nor are removed (another host's part of the same run).
  std::function<bool(const std::string& name)> ignore;
  // The end of kRefuse's message: what the user can do instead.
  std::string remedy =
      "pass --force to replace an earlier run's files there (only the files omnilearn writes), or "
      "choose another --out";
};

class RunFolder {
 public:
  // Creates `dir` (and parents) and takes its lock. Errors: the folder cannot be created; another process holds
  // the lock (the message names the folder and the holder's pid); the folder is not empty and `reuse` is kRefuse
  // (the message names up to three entries and suggests --force); a known file cannot be removed.
  static Result<std::unique_ptr<RunFolder>> claim(const std::string& dir, const RunFolderOptions& options = {});
  // Releases the lock and removes the lock file.
  ~RunFolder();
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

  const std::string& dir() const { return dir_; }

 private:
  RunFolder() = default;
  std::string dir_;
  int fd_ = -1;
};

// The one atomic writer (base/atomic_file.h), by the name the run layer's callers know.
using omnilearn::write_file_atomically;

}  // namespace omnilearn::run
