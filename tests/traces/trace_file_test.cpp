#include "omnilearn/traces/trace_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "omnilearn/traces/text_file.h"

namespace omnilearn::traces {
namespace {

TEST(TraceFileTest, ParsesCommentsDirectivesAndWorkersInOrder) {
  const std::string text =
      "# a comment\n"
      "# loop_after_s=100\n"
      "time_s, worker, fraction\r\n"
      "\n"
      "0,gpu1,1\n"
      "0,gpu0,0.5   # not allowed? no: trailing text is part of the field\n";
  // The last row carries garbage after the number: rejected with its line.
  auto bad = parse_trace(text, "t.csv");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message().rfind("t.csv:6: fraction '0.5   # not allowed?", 0), 0u) << bad.status().message();

  auto t = parse_trace("# loop_after_s=100\ntime_s,worker,fraction\n0,gpu1,1\n0,gpu0,0.5\n50,gpu1,0\n", "t.csv");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->worker_count(), 2u);
  EXPECT_EQ(t->worker_name(0), "gpu1");
  EXPECT_EQ(t->loop_after_s(), 100.0);
  EXPECT_EQ(t->fraction_at(0, 160.0), 0.0);
  EXPECT_EQ(t->fraction_at(1, 160.0), 0.5);
}

struct RejectCase {
  const char* text;
  const char* message_prefix;  // the message must start with this
};

TEST(TraceFileTest, RejectsWithFileAndLine) {
  const std::vector<RejectCase> cases{
      {"", "f.csv:0: no header"},
      {"# only a comment\n", "f.csv:1: no header"},
      {"time,worker,fraction\n0,a,1\n", "f.csv:1: header 'time,worker,fraction' is wrong; expected"},
      {"time_s,worker,fraction\n", "f.csv:1: no rows"},
      {"time_s,worker,fraction\n0,a\n", "f.csv:2: row has 2 fields; expected 3"},
      {"time_s,worker,fraction\n0,a,1,2\n", "f.csv:2: row has 4 fields; expected 3"},
      {"time_s,worker,fraction\nzero,a,1\n", "f.csv:2: time 'zero' is not valid; expected"},
      {"time_s,worker,fraction\n-1,a,1\n", "f.csv:2: time '-1' is not valid"},
      {"time_s,worker,fraction\n0,,1\n", "f.csv:2: worker name '' is not valid"},
      {"time_s,worker,fraction\n0,a,1.5\n", "f.csv:2: fraction '1.5' is not valid; expected a number in [0,1]"},
      {"time_s,worker,fraction\n0,a,-0.1\n", "f.csv:2: fraction '-0.1' is not valid"},
      {"time_s,worker,fraction\n0,a,nan\n", "f.csv:2: fraction 'nan' is not valid"},
      {"time_s,worker,fraction\n0,a,1\n5,b,1\n5,a,0\n3,a,1\n",
       "f.csv:5: time 3 for worker 'a' is not after its previous change at 5 (line 4); expected strictly"},
      {"time_s,worker,fraction\n0,a,1\n0,a,0\n", "f.csv:3: time 0 for worker 'a' is not after"},
      {"# loop_after_s=abc\ntime_s,worker,fraction\n0,a,1\n", "f.csv:1: 'loop_after_s=abc' has a bad value"},
      {"# loop_after_s=5\n# loop_after_s=6\ntime_s,worker,fraction\n0,a,1\n", "f.csv:2: loop_after_s given twice"},
      {"# loop_after_s=5\ntime_s,worker,fraction\n0,a,1\n5,a,0\n",
       "f.csv:1: loop_after_s=5 is not after the last change at 5 (line 4)"},
      {"# duration_s=4\ntime_s,worker,fraction\n0,a,1\n5,a,0\n", "f.csv:1: duration_s=4 is before the last change"},
  };
  for (const RejectCase& c : cases) {
    auto t = parse_trace(c.text, "f.csv");
    ASSERT_FALSE(t.is_ok()) << c.text;
    EXPECT_EQ(t.status().code(), StatusCode::kParseError) << c.text;
    EXPECT_EQ(t.status().message().rfind(c.message_prefix, 0), 0u) << "got: " << t.status().message();
  }
}

TEST(TraceFileTest, CommentLinesPrefixEveryLineOfTheComment) {
  EXPECT_EQ(comment_lines(""), "");
  EXPECT_EQ(comment_lines("one"), "# one\n");
  EXPECT_EQ(comment_lines("one\n"), "# one\n");
  EXPECT_EQ(comment_lines("one\n\ntwo"), "# one\n# \n# two\n");
}

TEST(TraceFileTest, FormatRoundTripsExactly) {
  auto t = AvailabilityTrace::create({{"a", {{0.0, 0.1}, {0.3, 1.0 / 3.0}}}, {"b", {{0.2, 0.0}}}}, 7.5, 8.0);
  ASSERT_TRUE(t.is_ok());
  const std::string text = format_trace(*t, "line one\nline two");
  EXPECT_EQ(text.rfind("# line one\n# line two\n# duration_s=7.5\n# loop_after_s=8\ntime_s,worker,fraction\n", 0), 0u)
      << text;
  auto back = parse_trace(text, "mem");
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(format_trace(*back, "line one\nline two"), text);
  EXPECT_EQ(back->changes(0), t->changes(0));
  EXPECT_EQ(back->duration(), 7.5);
}

TEST(TraceFileTest, WritesAtomicallyAndReportsFailures) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "omnilearn_trace_file_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.csv").string();
  { std::ofstream(path) << "old content"; }
  auto t = AvailabilityTrace::create({{"a", {{0.0, 0.5}}}});
  ASSERT_TRUE(t.is_ok());
  ASSERT_TRUE(write_trace_file(*t, path).is_ok());
  EXPECT_FALSE(std::filesystem::exists(dir / ".t.csv.tmp"));  // omnilearn::atomic_temp_path, renamed into place
  auto back = read_trace_file(path);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->fraction_at(0, 0.0), 0.5);

  const std::string missing = (dir / "no-such-dir" / "t.csv").string();
  const Status st = write_trace_file(*t, missing);
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_FALSE(std::filesystem::exists(missing));
  EXPECT_EQ(read_trace_file(missing).status().code(), StatusCode::kIoError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace omnilearn::traces
