// The machine model read from this host (search/reuse/machine_model.h).
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

}  // namespace
}  // namespace stipple::search
