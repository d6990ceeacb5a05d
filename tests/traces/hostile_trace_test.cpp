// Hostile trace input (issue 12): worker names that need CSV quoting round-trip through the writer and the
// reader (RFC 4180), and generators refuse sizes that would exhaust memory before they allocate anything.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "omnilearn/base/input_limits.h"
#include "omnilearn/traces/trace_file.h"
#include "omnilearn/traces/trace_generators.h"

namespace omnilearn::traces {
namespace {

TEST(HostileTrace, NamesWithQuotesCommasAndNewlinesRoundTrip) {
  const std::vector<std::string> names{"say \"hi\"",           "a,b",  "two\nlines", "\"", "x\r\ny",
                                       "in \" side, \"\" all", "plain"};
  std::vector<WorkerSeries> workers;
  for (const std::string& name : names) workers.push_back({name, {{0.0, 1.0}, {5.0, 0.25}}});
  auto trace = AvailabilityTrace::create(workers, 10.0);
  ASSERT_TRUE(trace.is_ok()) << trace.status().message();
  const std::string text = format_trace(*trace, "names that need quoting");
  EXPECT_NE(text.find("0,\"say \"\"hi\"\"\",1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("0,plain,1\n"), std::string::npos) << text;  // quoted only when needed
  auto back = parse_trace(text, "q.csv");
  ASSERT_TRUE(back.is_ok()) << back.status().message() << "\n" << text;
  ASSERT_EQ(back->worker_count(), names.size());
  for (std::size_t k = 0; k < names.size(); ++k) {
    EXPECT_EQ(back->worker_name(k), names[k]);
    EXPECT_EQ(back->fraction_at(k, 6.0), 0.25);
  }
  EXPECT_EQ(format_trace(*back, "names that need quoting"), text);  // byte-identical the second time
}

TEST(HostileTrace, QuotedFieldsKeepInnerWhitespaceAndLinesCountAcrossQuotedNewlines) {
  auto t = parse_trace("time_s,worker,fraction\n0, \" a, b \" ,1\n0,\"c\nd\",1\n1,\"c\nd\",2\n", "q.csv");
  ASSERT_FALSE(t.is_ok());
  // The bad row starts on line 5: the quoted newline on line 3-4 is counted.
  EXPECT_EQ(t.status().message().rfind("q.csv:5: fraction '2'", 0), 0u) << t.status().message();
  auto ok = parse_trace("time_s,worker,fraction\n0, \" a, b \" ,1\n", "q.csv");
  ASSERT_FALSE(ok.is_ok());  // surrounding whitespace inside quotes is kept, and such a name is refused
  EXPECT_NE(ok.status().message().find("surrounding whitespace"), std::string::npos) << ok.status().message();
}

TEST(HostileTrace, AnUnclosedQuoteNamesItsLine) {
  auto t = parse_trace("time_s,worker,fraction\n0,a,1\n0,\"b,1\n5,a,0\n", "q.csv");
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.status().message(), "q.csv:3: a quoted field is never closed; expected a closing '\"' for each "
            "opening one");
}

TEST(HostileTrace, GeneratorsRefuseTooManyPointsBeforeAllocating) {
  RandomWalkOptions walk;
  walk.workers = 1;
  walk.step_s = 1e-6;
  walk.duration_s = 86400.0;  // 8.64e10 points: over 1 GB before, and then bad_alloc
  auto w = generate_random_walk(walk);
  ASSERT_FALSE(w.is_ok());
  EXPECT_NE(w.status().message().find("expected at most 10000000"), std::string::npos) << w.status().message();
  DiurnalOptions diurnal;
  diurnal.step_s = 1e-3;
  auto d = generate_diurnal(diurnal);
  ASSERT_FALSE(d.is_ok());
  EXPECT_NE(d.status().message().find("diurnal: step_s 0.001"), std::string::npos) << d.status().message();
  MarkovOptions markov;
  markov.mtbf_s = markov.mttr_s = 1e-6;
  auto m = generate_markov_on_off(markov);
  ASSERT_FALSE(m.is_ok());
  EXPECT_NE(m.status().message().find("markov"), std::string::npos) << m.status().message();
  MarkovOptions many;
  many.workers = limits::kMaxWorkers + 1;
  EXPECT_FALSE(generate_markov_on_off(many).is_ok());
}

}  // namespace
}  // namespace omnilearn::traces
