// The machine model read from this host (search/reuse/machine_model.h), and the parsing
// behind it.
#include "search/reuse/machine_model.h"

#include <gtest/gtest.h>

namespace stipple::search {
namespace {

TEST(MachineModel, ReadFromThisHost) {
  MachineModel m = MachineModel::host();
  std::printf("host: %s\n", m.describe().c_str());
  EXPECT_GE(m.cores, 1);
  EXPECT_GT(m.l1_bytes, 0);
  EXPECT_GT(m.l2_bytes, 0);
  EXPECT_GT(m.llc_bytes, 0);
  EXPECT_GE(m.llc_bytes, m.l2_bytes);
  EXPECT_EQ(m.cache_line, 64);
  EXPECT_TRUE(m.vector_bytes == 16 || m.vector_bytes == 32 || m.vector_bytes == 64)
      << m.vector_bytes;
}

TEST(MachineModel, ParsesSysfsSizes) {
  EXPECT_EQ(parse_cache_size("48K"), 48 << 10);
  EXPECT_EQ(parse_cache_size("1024K"), 1 << 20);
  EXPECT_EQ(parse_cache_size("32M"), 32 << 20);
  EXPECT_EQ(parse_cache_size("512"), 512);
  EXPECT_EQ(parse_cache_size(""), 0);
  EXPECT_EQ(parse_cache_size("K"), 0);
  EXPECT_EQ(parse_cache_size("12Q"), 0);
}

TEST(MachineModel, VectorWidthFromFeatures) {
  EXPECT_EQ(vector_bytes_from_features(true, true, true, false), 64);
  EXPECT_EQ(vector_bytes_from_features(false, true, true, false), 32);
  EXPECT_EQ(vector_bytes_from_features(false, false, true, false), 32);
  EXPECT_EQ(vector_bytes_from_features(false, false, false, true), 16);
  EXPECT_EQ(vector_bytes_from_features(false, false, false, false), 16);
}

}  // namespace
}  // namespace stipple::search
