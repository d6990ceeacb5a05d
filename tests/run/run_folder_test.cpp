// RunFolder and write_file_atomically: one owner per run folder (across threads and processes), non-empty folders
// refused unless replaced (only the tool's own files) or kept, and files replaced whole or not at all.
#include "omnilearn/run/run_folder.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "omnilearn/run/run_writer.h"
#include "temp_dir.h"

namespace omnilearn::run {
namespace {

namespace fs = std::filesystem;
using scenarios::testing::read_file;
using scenarios::testing::TempDir;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(RunFolder, ASecondClaimIsRefusedNamingTheFolderAndTheHolder) {
  TempDir tmp;
  const std::string dir = (tmp.path() / "run").string();
  {
    auto first = RunFolder::claim(dir);
    ASSERT_TRUE(first.is_ok()) << first.status().message();
    EXPECT_TRUE(fs::exists(fs::path(dir) / kRunFolderLock));
    auto second = RunFolder::claim(dir);
    ASSERT_FALSE(second.is_ok());
    const std::string& m = second.status().message();
    EXPECT_TRUE(contains(m, dir)) << m;
    EXPECT_TRUE(contains(m, "in use by another omnilearn run (pid " + std::to_string(::getpid()))) << m;
  }
  EXPECT_FALSE(fs::exists(fs::path(dir) / kRunFolderLock));  // released and removed
  EXPECT_TRUE(RunFolder::claim(dir).is_ok());
}

TEST(RunFolder, AnotherProcessHoldingTheFolderIsNamedByPid) {
  TempDir tmp;
  const std::string dir = (tmp.path() / "run").string();
  int ready[2], release[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(release), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto held = RunFolder::claim(dir);
    const char ok = held.is_ok() ? '1' : '0';
    (void)!::write(ready[1], &ok, 1);
    char c = 0;
    (void)!::read(release[0], &c, 1);
    ::_exit(0);
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1');
  auto refused = RunFolder::claim(dir);
  const char go = 'x';
  (void)!::write(release[1], &go, 1);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_TRUE(contains(refused.status().message(), "pid " + std::to_string(child))) << refused.status().message();
  EXPECT_TRUE(RunFolder::claim(dir).is_ok());  // the child's lock died with it
  for (int fd : {ready[0], ready[1], release[0], release[1]}) ::close(fd);
}

TEST(RunFolder, ANonEmptyFolderIsRefusedUnlessReplacedAndReplaceRemovesOnlyRunFiles) {
  TempDir tmp;
  tmp.write("run/summary.json", "{}");
  tmp.write("run/timeline.json", "{\"traceEvents\":[");
  tmp.write("run/notes.txt", "mine");
  const std::string dir = (tmp.path() / "run").string();
  auto refused = RunFolder::claim(dir);
  ASSERT_FALSE(refused.is_ok());
  const std::string& m = refused.status().message();
  EXPECT_TRUE(contains(m, dir + ": not empty (holds notes.txt, summary.json, timeline.json)")) << m;
  EXPECT_TRUE(contains(m, "--force")) << m;
  EXPECT_TRUE(fs::exists(tmp.path() / "run" / "summary.json"));  // refusing touches nothing

  RunFolderOptions replace;
  replace.reuse = FolderReuse::kReplace;
  ASSERT_TRUE(RunFolder::claim(dir, replace).is_ok());
  EXPECT_FALSE(fs::exists(tmp.path() / "run" / "summary.json"));
  EXPECT_FALSE(fs::exists(tmp.path() / "run" / "timeline.json"));
  EXPECT_EQ(read_file(tmp.path() / "run" / "notes.txt"), "mine");
}

TEST(RunFolder, ReplaceClearsOwnFoldersButNothingOutsideOrForeign) {
  TempDir tmp;
  tmp.write("sweep/sweep.csv", "x");
  tmp.write("sweep/p1/manifest.json", "{}");
  tmp.write("sweep/p1/iterations.csv", "x");
  tmp.write("sweep/p2/summary.json", "{}");
  tmp.write("sweep/p2/keep.txt", "mine");
  tmp.write("outside/summary.json", "{}");
  RunFolderOptions replace;
  replace.reuse = FolderReuse::kReplace;
  replace.own_files = {"sweep.csv", "../outside/summary.json"};
  replace.own_folders = {"p1", "p2", "..", "../outside"};
  ASSERT_TRUE(RunFolder::claim((tmp.path() / "sweep").string(), replace).is_ok());
  EXPECT_FALSE(fs::exists(tmp.path() / "sweep" / "sweep.csv"));
  EXPECT_FALSE(fs::exists(tmp.path() / "sweep" / "p1"));
  EXPECT_FALSE(fs::exists(tmp.path() / "sweep" / "p2" / "summary.json"));
  EXPECT_TRUE(fs::exists(tmp.path() / "sweep" / "p2" / "keep.txt"));
  EXPECT_TRUE(fs::exists(tmp.path() / "outside" / "summary.json"));
}

TEST(RunFolder, KeepTakesTheLockAndTouchesNothing) {
  TempDir tmp;
  tmp.write("run/summary.json", "{}");
  RunFolderOptions keep;
  keep.reuse = FolderReuse::kKeep;
  auto held = RunFolder::claim((tmp.path() / "run").string(), keep);
  ASSERT_TRUE(held.is_ok()) << held.status().message();
  EXPECT_TRUE(fs::exists(tmp.path() / "run" / "summary.json"));
  EXPECT_FALSE(RunFolder::claim((tmp.path() / "run").string(), keep).is_ok());
}

TEST(RunFolder, IgnoredEntriesDoNotMakeTheFolderNonEmpty) {
  TempDir tmp;
  tmp.write("run/node1/iterations.csv", "x");
  RunFolderOptions options;
  options.ignore = [](const std::string& name) { return name == "node1"; };
  EXPECT_TRUE(RunFolder::claim((tmp.path() / "run").string(), options).is_ok());
  EXPECT_FALSE(RunFolder::claim((tmp.path() / "run").string()).is_ok());
}

// Issue 12 #4: two writers into one folder interleaved their rows; the second is now refused.
TEST(RunWriterFolder, TwoWritersIntoOneFolderTheSecondIsRefused) {
  TempDir tmp;
  const std::string dir = (tmp.path() / "run").string();
  auto first = RunWriter::open(dir, "{}", /*timeline=*/true);
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  auto second = RunWriter::open(dir, "{}", /*timeline=*/true);
  ASSERT_FALSE(second.is_ok());
  EXPECT_TRUE(contains(second.status().message(), "in use by another omnilearn run")) << second.status().message();
  ASSERT_TRUE((*first)->finish(RunSummary{}).is_ok());
}

// Issue 12 #5: a re-run without timeline kept the previous run's timeline.json.
TEST(RunWriterFolder, AReRunWithoutTimelineLeavesNoTimelineAfterReplace) {
  TempDir tmp;
  const std::string dir = (tmp.path() / "run").string();
  {
    auto w = RunWriter::open(dir, "{}", /*timeline=*/true);
    ASSERT_TRUE(w.is_ok());
    ASSERT_TRUE((*w)->finish(RunSummary{}).is_ok());
  }
  EXPECT_FALSE(RunWriter::open(dir, "{}", /*timeline=*/false).is_ok());  // not empty: refused
  RunFolderOptions replace;
  replace.reuse = FolderReuse::kReplace;
  auto w = RunWriter::open(dir, "{}", /*timeline=*/false, replace);
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  EXPECT_FALSE(fs::exists(fs::path(dir) / "summary.json"));  // the old one is gone before any new row
  ASSERT_TRUE((*w)->finish(RunSummary{}).is_ok());
  EXPECT_FALSE(fs::exists(fs::path(dir) / "timeline.json"));
  EXPECT_TRUE(fs::exists(fs::path(dir) / "summary.json"));
}

TEST(RunWriterFolder, CloseKeepsRowsAndTimelineValidWithoutSummary) {
  TempDir tmp;
  const std::string dir = (tmp.path() / "run").string();
  auto w = RunWriter::open(dir, "{}", /*timeline=*/true);
  ASSERT_TRUE(w.is_ok());
  (*w)->add(IterationRecord{0, 1, 0, 0.0, 0.1, 0.0, 0.0, 8, {}, {}, {}});
  (*w)->span(0, "compute", 0.0, 0.1);
  ASSERT_TRUE((*w)->close().is_ok());
  EXPECT_FALSE((*w)->close().is_ok());  // twice is an error
  EXPECT_EQ(nlohmann::json::parse(read_file(fs::path(dir) / "timeline.json"))["traceEvents"].size(), 2u);
  EXPECT_EQ(read_file(fs::path(dir) / "iterations.csv").back(), '\n');
  EXPECT_FALSE(fs::exists(fs::path(dir) / "summary.json"));
}

// A full disk, imitated by a file-size limit: writes past it fail with EFBIG (SIGXFSZ ignored).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit limited = old_;
    limited.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limited);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  void (*old_handler_)(int) = nullptr;
};

TEST(WriteFileAtomically, ReplacesWholeOrLeavesTheOldFile) {
  TempDir tmp;
  const std::string path = tmp.write("summary.json", "old");
  ASSERT_TRUE(write_file_atomically(path, "new text").is_ok());
  EXPECT_EQ(read_file(path), "new text");
  Status st;
  {
    FileSizeLimit full(16);
    st = write_file_atomically(path, std::string(1000, 'x'));
  }
  ASSERT_FALSE(st.is_ok());
  EXPECT_TRUE(contains(st.message(), path)) << st.message();
  EXPECT_TRUE(contains(st.message(), "write failed")) << st.message();
  EXPECT_EQ(read_file(path), "new text");
  EXPECT_FALSE(fs::exists(tmp.path() / ".summary.json.tmp"));
  EXPECT_FALSE(write_file_atomically((tmp.path() / "no_such_dir" / "f.json").string(), "x").is_ok());
}

TEST(WriteFileAtomically, WritesItsPiecesInOrder) {
  TempDir tmp;
  const std::string path = tmp.write("manifest.json", "old");
  const std::string large(100000, 'x');
  ASSERT_TRUE(write_file_atomically(path, {"{", large, "", "}\n"}).is_ok());
  EXPECT_EQ(read_file(path), "{" + large + "}\n");
}

// Issue 12: a full disk left a 0-byte summary.json and finish() said nothing.
TEST(WriteFileAtomically, AFullDiskLeavesNoSummaryAndReportsIt) {
  TempDir tmp;
  const std::string dir = (tmp.path() / "run").string();
  auto w = RunWriter::open(dir, "{}", /*timeline=*/false);
  ASSERT_TRUE(w.is_ok());
  RunSummary s;
  s.policy = "omnilearn";
  Status st;
  {
    FileSizeLimit full(64);  // the headers fit; summary.json (about 300 bytes) does not
    st = (*w)->finish(s);
  }
  ASSERT_FALSE(st.is_ok());
  EXPECT_TRUE(contains(st.message(), "summary.json")) << st.message();
  EXPECT_FALSE(fs::exists(fs::path(dir) / "summary.json"));
}

}  // namespace
}  // namespace omnilearn::run
