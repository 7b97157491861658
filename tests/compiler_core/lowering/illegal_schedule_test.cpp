// Random schedules that are mostly illegal, for every benchmark pipeline: a random legal
// schedule (random_schedule.h) is printed and one to three of its tokens are replaced
// by another name from the same text, a name that exists nowhere, or another number.
// The result must either be rejected by the parser or checker (a CompileError naming
// mutant.sched:LINE:COL) or, when it happens to be legal, lower, compile and run to the
// reference evaluator's output bit for bit. It must never crash or be miscompiled.
#include <gtest/gtest.h>

#include <cctype>
#include <random>
#include <string>
#include <vector>

#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/random_schedule.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_printer.h"
#include "tests/compiler_core/lowering/lowering_harness.h"

namespace stipple {
namespace {

struct Token {
  size_t begin, end;
  bool number;
};

std::vector<Token> tokens_of(const std::string& text) {
  std::vector<Token> out;
  for (size_t i = 0; i < text.size();) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (std::isalpha(ch) || ch == '_' || std::isdigit(ch)) {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) ||
                                 text[j] == '_' || text[j] == '$')) {
        ++j;
      }
      out.push_back({i, j, std::isdigit(ch) != 0});
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

std::string mutate(const std::string& text, std::mt19937_64& rng) {
  std::string t = text;
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    std::vector<Token> toks = tokens_of(t);
    if (toks.empty()) break;
    const Token& at = toks[rng() % toks.size()];
    std::string with;
    if (at.number) {
      // Small numbers only: a legal mutant must stay cheap to compile and run.
      static const char* numbers[] = {"0", "1", "2", "3", "5", "16", "33"};
      with = numbers[rng() % 7];
    } else if (rng() % 4 == 0) {
      with = "nosuch";
    } else {
      std::vector<Token> names;
      for (const Token& k : toks) {
        if (!k.number) names.push_back(k);
      }
      const Token& other = names[rng() % names.size()];
      with = t.substr(other.begin, other.end - other.begin);
    }
    t = t.substr(0, at.begin) + with + t.substr(at.end);
  }
  return t;
}

TEST(IllegalSchedules, RandomMutantsAreRejectedWithALocationOrRunCorrectly) {
  auto jit = codegen::JitCompiler::create();
  int rejected = 0, accepted = 0;
  std::vector<std::string> paths = testing_lowering::benchmark_paths();
  for (size_t k = 0; k < paths.size(); ++k) {
    testing_lowering::Case c(paths[k], 24, 18);
    std::mt19937_64 rng(77 + k);
    for (int i = 0; i < 8; ++i) {
      const std::string text = mutate(print_schedule(random_schedule(c.pipeline, rng)), rng);
      Schedule s;
      try {
        s = compile_schedule(text, "mutant.sched", c.pipeline);
      } catch (const CompileError& e) {
        ++rejected;
        EXPECT_NE(std::string(e.what()).find("mutant.sched:"), std::string::npos)
            << e.what() << "\n"
            << text;
        continue;
      }
      ++accepted;
      std::string why;
      try {
        why = c.check(*jit, s);
      } catch (const std::exception& ex) {
        why = std::string("threw: ") + ex.what();
      }
      EXPECT_EQ(why, "") << c.pipeline.name << " accepted the mutant\n" << text;
    }
  }
  std::printf("%d mutants rejected with a location, %d accepted and checked\n", rejected, accepted);
  EXPECT_GT(rejected, 0);
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace stipple
