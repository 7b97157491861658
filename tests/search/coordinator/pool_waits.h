// Reading a WorkerPool's snapshot from tests: one worker's entry, and waiting until a
// worker is blocked in lease() (its long poll has reached the pool).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "search/coordinator/worker_pool.h"

namespace stipple::coordinator {

inline const WorkerInfo& info(const PoolSnapshot& s, const std::string& id) {
  for (const WorkerInfo& w : s.workers)
    if (w.id == id) return w;
  throw std::runtime_error("no worker " + id);
}

/// Until the worker is blocked in lease(), so that what follows must wake it. Use with
/// ASSERT_NO_FATAL_FAILURE where the test must not go on without it.
inline void wait_until_polling(WorkerPool& pool, const std::string& worker) {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!info(pool.snapshot(), worker).polling) {
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << worker << " never blocked in lease()";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace stipple::coordinator
