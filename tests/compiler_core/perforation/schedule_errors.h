// The checker's refusals of approximation directives, shared by the perforation tests:
// each schedule text is refused with a CompileError at "FILE:LINE:COL: error: " whose
// message contains the expected words.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler_core/ir/error.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple::perforation {

struct RefusedSchedule {
  const char* text;
  const char* where;    // "line:col"
  const char* message;  // a part of the message
};

inline void expect_refused(const Pipeline& p, const std::vector<RefusedSchedule>& cases) {
  for (const RefusedSchedule& b : cases) {
    SCOPED_TRACE(b.text);
    try {
      compile_schedule(b.text, "t.sched", p);
      ADD_FAILURE() << "accepted";
    } catch (const CompileError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(std::string("t.sched:") + b.where + ": error: "), std::string::npos) << m;
      EXPECT_NE(m.find(b.message), std::string::npos) << m;
    }
  }
}

}  // namespace stipple::perforation
