// CsvTable: columns by name, typed cells, and errors that name the file, the line and the column.
#include "omnilearn/traces/csv_table.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace omnilearn::traces {
namespace {

std::string write_table(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "omnilearn_csv_table_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(CsvTable, ReadsColumnsByNameAndTypedCells) {
  const std::string path = write_table("jobs.csv", "# a note\njob,jct_s,steps\n\"a,b\",12.5,3\nc,,4\n");
  auto t = CsvTable::open(path);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  auto cols = t->columns({"steps", "job", "jct_s"});
  ASSERT_TRUE(cols.is_ok()) << cols.status().message();
  EXPECT_EQ(*cols, (std::vector<std::size_t>{2, 0, 1}));
  ASSERT_TRUE(t->next());
  EXPECT_EQ(t->text(0), "a,b");
  EXPECT_EQ(t->number(1).value(), 12.5);
  EXPECT_EQ(t->integer(2).value(), 3);
  EXPECT_EQ(t->line_number(), 3u);
  ASSERT_TRUE(t->next());
  EXPECT_FALSE(t->optional_number(1).value().has_value());  // empty: not known
  EXPECT_FALSE(t->number(1).is_ok());
  EXPECT_FALSE(t->next());
  EXPECT_TRUE(t->status().is_ok());
}

TEST(CsvTable, AMissingColumnNamesTheFileAndColumn) {
  const std::string path = write_table("plain.csv", "a,b\n1,2\n");
  auto t = CsvTable::open(path);
  ASSERT_TRUE(t.is_ok());
  EXPECT_FALSE(t->find("c").has_value());
  const auto c = t->columns({"a", "c"});
  ASSERT_FALSE(c.is_ok());
  EXPECT_TRUE(contains(c.status().message(), path + ": no column 'c'")) << c.status().message();
}

TEST(CsvTable, ABadCellNamesFileLineAndColumn) {
  const std::string path = write_table("bad.csv", "step,batch\n1,32\n2,x\n3,4.5\n");
  auto t = CsvTable::open(path);
  ASSERT_TRUE(t.is_ok());
  ASSERT_TRUE(t->next());
  ASSERT_TRUE(t->next());
  const auto v = t->number(1);
  ASSERT_FALSE(v.is_ok());
  EXPECT_TRUE(contains(v.status().message(), path + ":3: batch: expected a number, got 'x'")) << v.status().message();
  ASSERT_TRUE(t->next());
  const auto i = t->integer(1);
  ASSERT_FALSE(i.is_ok());
  EXPECT_TRUE(contains(i.status().message(), path + ":4: batch: expected a whole number")) << i.status().message();
}

TEST(CsvTable, RaggedRowsAreAnErrorOrSkipped) {
  const std::string path = write_table("ragged.csv", "a,b\n1,2\n3\n4,5\n");
  auto strict = CsvTable::open(path);
  ASSERT_TRUE(strict.is_ok());
  ASSERT_TRUE(strict->next());
  EXPECT_FALSE(strict->next());
  ASSERT_FALSE(strict->status().is_ok());
  EXPECT_TRUE(contains(strict->status().message(), path + ":3: 1 fields; the header has 2"))
      << strict->status().message();
  auto lenient = CsvTable::open(path, RaggedRows::kSkip);
  ASSERT_TRUE(lenient.is_ok());
  int rows = 0;
  while (lenient->next()) ++rows;
  EXPECT_EQ(rows, 2);
  EXPECT_TRUE(lenient->status().is_ok());
}

// A quote never closed ends the table with the reader's error (the line where its record began), in a data row
// and in the header: never a shorter table that looks whole.
TEST(CsvTable, AQuoteNeverClosedIsTheTablesError) {
  const std::string path = write_table("open.csv", "job,steps\na,1\n\"b,2\nc,3\n");
  auto t = CsvTable::open(path);
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  ASSERT_TRUE(t->next());
  EXPECT_FALSE(t->next());
  EXPECT_TRUE(contains(t->status().message(), path + ":3: a quoted field is never closed")) << t->status().message();
  const std::string header = write_table("open-header.csv", "\"job,steps\na,1\n");
  auto h = CsvTable::open(header);
  ASSERT_FALSE(h.is_ok());
  EXPECT_TRUE(contains(h.status().message(), header + ":1: a quoted field is never closed")) << h.status().message();
}

TEST(CsvTable, AFileWithoutAHeaderOrMissingIsAnError) {
  const std::string empty = write_table("empty.csv", "# only a comment\n\n");
  const auto t = CsvTable::open(empty);
  ASSERT_FALSE(t.is_ok());
  EXPECT_TRUE(contains(t.status().message(), empty + ": no header")) << t.status().message();
  EXPECT_FALSE(CsvTable::open(empty + ".missing").is_ok());
}

}  // namespace
}  // namespace omnilearn::traces
