// Packed speeds: the nearest measured pair answers in the order asked, pairs measured at 0 or never measured are not
// packed, bad tables are refused with file:line, and the shipped table loads.
#include "omnilearn/traces/packed_speeds.h"

#include <gtest/gtest.h>

#include <string>

namespace omnilearn::traces {
namespace {

constexpr const char* kPairs =
    "# pairs\n"
    "device,model_a,batch_a,model_b,batch_b,fraction_a,fraction_b\n"
    "v100,m,16,n,32,0.8,0.5\n"
    "v100,m,64,n,32,0.6,0.7\n"
    "v100,m,16,m,16,0.55,0.55\n"
    "v100,n,256,n,256,0,0\n"
    "k80,m,16,n,32,0.4,0.3\n";

PackedSpeedTable table() {
  auto pairs = parse_packed_pairs(kPairs, "p.csv");
  EXPECT_TRUE(pairs.is_ok()) << pairs.status().message();
  auto t = PackedSpeedTable::create(std::move(pairs).value());
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return std::move(t).value();
}

TEST(PackedSpeedsTest, NearestBatchesInTheOrderAsked) {
  const PackedSpeedTable t = table();
  auto f = t.fractions("v100", "m", 16, "n", 32);
  ASSERT_TRUE(f.has_value());
  EXPECT_DOUBLE_EQ(f->first, 0.8);
  EXPECT_DOUBLE_EQ(f->second, 0.5);
  auto swapped = t.fractions("v100", "n", 32, "m", 16);
  ASSERT_TRUE(swapped.has_value());
  EXPECT_DOUBLE_EQ(swapped->first, 0.5);
  EXPECT_DOUBLE_EQ(swapped->second, 0.8);
  // m at 48: |log(48/64)| < |log(48/16)|, so the batch-64 pair answers.
  auto near64 = t.fractions("v100", "m", 48, "n", 30);
  ASSERT_TRUE(near64.has_value());
  EXPECT_DOUBLE_EQ(near64->first, 0.6);
  // m at 31: |log(31/16)| = 0.661 < |log(31/64)| = 0.725.
  EXPECT_DOUBLE_EQ(t.fractions("v100", "m", 31, "n", 32)->first, 0.8);
  EXPECT_DOUBLE_EQ(t.fractions("k80", "m", 16, "n", 32)->first, 0.4);
  EXPECT_DOUBLE_EQ(t.fractions("v100", "m", 16, "m", 16)->second, 0.55);
}

TEST(PackedSpeedsTest, UnmeasuredOrZeroPairsAreNotPacked) {
  const PackedSpeedTable t = table();
  EXPECT_FALSE(t.fractions("v100", "n", 256, "n", 256).has_value());  // measured 0: does not fit
  EXPECT_FALSE(t.fractions("v100", "n", 200, "n", 300).has_value());
  EXPECT_FALSE(t.fractions("p100", "m", 16, "n", 32).has_value());  // kind not measured
  EXPECT_FALSE(t.fractions("v100", "m", 16, "x", 32).has_value());  // model not measured
}

TEST(PackedSpeedsTest, BadTablesAreRefusedWithFileAndLine) {
  auto wrong_header = parse_packed_pairs("device,a,b\nv100,m,1\n", "p.csv");
  ASSERT_FALSE(wrong_header.is_ok());
  EXPECT_NE(wrong_header.status().message().find("p.csv:1"), std::string::npos);
  auto bad_fraction = parse_packed_pairs(std::string(kPackedSpeedsHeader) + "\nv100,m,1,n,1,2,0.5\n", "p.csv");
  ASSERT_FALSE(bad_fraction.is_ok());
  EXPECT_NE(bad_fraction.status().message().find("p.csv:2: fraction_a"), std::string::npos);
  auto bad_batch = parse_packed_pairs(std::string(kPackedSpeedsHeader) + "\nv100,m,0,n,1,1,0.5\n", "p.csv");
  ASSERT_FALSE(bad_batch.is_ok());
  EXPECT_FALSE(parse_packed_pairs(std::string(kPackedSpeedsHeader) + "\n", "p.csv").is_ok());
  // The same pair twice, in either order.
  EXPECT_FALSE(
      PackedSpeedTable::create({{"v100", "m", 1, "n", 2, 0.5, 0.5}, {"v100", "n", 2, "m", 1, 0.5, 0.5}}).is_ok());
  EXPECT_TRUE(
      PackedSpeedTable::create({{"v100", "m", 1, "n", 2, 0.5, 0.5}, {"k80", "n", 2, "m", 1, 0.5, 0.5}}).is_ok());
}

TEST(PackedSpeedsTest, ShippedTableLoads) {
  const std::string data = std::string(OMNILEARN_TRACES_DATA) + "/../devices";
  auto t = read_packed_speed_table(data + "/packed-speeds.csv");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  // Gavel's ResNet-18 (batch 32) with ResNet-50 (batch 16) on one K80, read back.
  auto f = t->fractions("k80", "resnet18", 32, "resnet50", 16);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->first, 0.496418, 1e-6);
  EXPECT_NEAR(f->second, 0.504975, 1e-6);
  EXPECT_FALSE(t->fractions("k80", "resnet50", 128, "resnet18", 16).has_value());  // 0 in Gavel's data
}

}  // namespace
}  // namespace omnilearn::traces
