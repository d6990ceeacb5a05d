// locate_install_layout on fake trees in a temporary folder: an installed prefix (share/omnilearn, libexec or
// lib/omnilearn), a build tree with its marker, a copied marker (refused), neither; and the env overrides.
#include "omnilearn/base/install_layout.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace omnilearn {
namespace {

namespace fs = std::filesystem;

class InstallLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("omnilearn_layout_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path touch(const fs::path& relative, const std::string& text = "") {
    const fs::path p = root_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }
  fs::path root_;
};

TEST_F(InstallLayoutTest, InstalledPrefixIsFoundFromTheExecutable) {
  const fs::path exe = touch("prefix/bin/omnilearn");
  touch("prefix/share/omnilearn/analysis/omnilearn_analysis/__init__.py");
  touch("prefix/share/omnilearn/scenarios/examples/quick.yaml");
  const fs::path worker = touch("prefix/libexec/omnilearn/omnilearn-emulate-worker");
  const InstallLayout layout = locate_install_layout(exe);
  EXPECT_EQ(layout.kind, InstallLayout::Kind::kInstalled);
  EXPECT_EQ(layout.data_dir, root_ / "prefix/share/omnilearn");
  EXPECT_TRUE(fs::equivalent(layout.analysis_dir, root_ / "prefix/share/omnilearn/analysis"));
  EXPECT_TRUE(fs::equivalent(layout.worker, worker));
  EXPECT_TRUE(fs::equivalent(worker_executable(exe, layout), worker));
}

TEST_F(InstallLayoutTest, WorkerInLibOmnilearnAndNextToTheExecutable) {
  const fs::path exe = touch("prefix/bin/omnilearn");
  touch("prefix/share/omnilearn/scenarios/x.yaml");
  const fs::path in_lib = touch("prefix/lib/omnilearn/omnilearn-emulate-worker");
  EXPECT_TRUE(fs::equivalent(worker_executable(exe, locate_install_layout(exe)), in_lib));
  const fs::path beside = touch("prefix/bin/omnilearn-emulate-worker");
  EXPECT_TRUE(fs::equivalent(worker_executable(exe, locate_install_layout(exe)), beside));
}

TEST_F(InstallLayoutTest, BuildTreeMarkerNamesTheSourceAndTheWorker) {
  touch("src/analysis/omnilearn_analysis/__init__.py");
  const fs::path worker = touch("build/emulator/omnilearn-emulate-worker");
  touch("build/omnilearn-build-tree.txt", "build_dir=" + (root_ / "build").string() + "\nsource_dir=" +
                                              (root_ / "src").string() + "\nworker=" + worker.string() + "\n");
  for (const char* exe : {"build/cli/omnilearn", "build/tests/emulator/some_test"}) {
    const InstallLayout layout = locate_install_layout(touch(exe));
    EXPECT_EQ(layout.kind, InstallLayout::Kind::kBuildTree) << exe;
    EXPECT_EQ(layout.data_dir, root_ / "src") << exe;
    EXPECT_EQ(layout.analysis_dir, root_ / "src/analysis") << exe;
    EXPECT_EQ(layout.worker, worker) << exe;
  }
}

TEST_F(InstallLayoutTest, ACopiedMarkerOrNoTreeGivesNothing) {
  touch("copy/omnilearn-build-tree.txt", "build_dir=" + (root_ / "build").string() + "\nsource_dir=/nowhere\n");
  const fs::path exe = touch("copy/cli/omnilearn");
  const InstallLayout copied = locate_install_layout(exe);
  EXPECT_EQ(copied.kind, InstallLayout::Kind::kUnknown);
  EXPECT_TRUE(copied.analysis_dir.empty());
  EXPECT_EQ(worker_executable(exe, copied), "omnilearn-emulate-worker");  // then PATH decides
  EXPECT_EQ(locate_install_layout(touch("lonely/bin/omnilearn")).kind, InstallLayout::Kind::kUnknown);
}

TEST_F(InstallLayoutTest, EnvironmentOverridesAndDefaults) {
  InstallLayout layout;
  layout.analysis_dir = "/opt/x/share/omnilearn/analysis";
  EXPECT_EQ(analysis_dir(layout, {}), "/opt/x/share/omnilearn/analysis");
  EXPECT_EQ(analysis_dir(layout, {{"OMNILEARN_ANALYSIS_DIR", "/mine"}}), "/mine");
  EXPECT_EQ(analysis_dir(InstallLayout{}, {}), std::nullopt);
  EXPECT_EQ(python_interpreter("", {}), "/usr/bin/python3");
  EXPECT_EQ(python_interpreter("", {{"OMNILEARN_PYTHON", "/venv/bin/python"}}), "/venv/bin/python");
  EXPECT_EQ(python_interpreter("python3.12", {{"OMNILEARN_PYTHON", "/venv/bin/python"}}), "python3.12");
}

TEST_F(InstallLayoutTest, ThisTestBinaryRunsFromTheBuildTree) {
  const InstallLayout layout = current_install_layout();
  ASSERT_EQ(layout.kind, InstallLayout::Kind::kBuildTree);
  EXPECT_TRUE(fs::exists(layout.data_dir / "scenarios/examples/quick.yaml"));
  EXPECT_TRUE(fs::exists(layout.analysis_dir / "omnilearn_analysis/__init__.py"));
}

}  // namespace
}  // namespace omnilearn
