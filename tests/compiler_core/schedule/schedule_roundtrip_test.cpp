// Property tests over random legal schedules of real pipelines: each passes the checker,
// prints and parses back equal (and prints identically again), and survives the proto
// codec unchanged. Plus the codec's validation of hostile messages and bytes.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/random_schedule.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_parser.h"
#include "compiler_core/schedule/schedule_printer.h"
#include "proto/schedule_codec.h"

namespace stipple {
namespace {

Pipeline load(const std::string& name) {
  return load_pipeline_file(std::string(STIPPLE_SOURCE_DIR) + "/datasets/pipelines/" + name +
                            ".stp");
}

const char* kUpdates = R"(pipeline p
input in : f32[x, y, c]
func A(x, y, c) = in(x - 1, y, c) + in(x + 1, y, c)
func B(x, y, c) = A(x, y - 1, c) + A(x, y + 1, c)
func scan(x, y) = in(x, y, 0)
scan(r, y) = scan(r, y) + scan(r - 1, y) for r in 1..in.width-1
func hist(i) = 0
hist(clamp(i32(in(x, y, 0) * 255.0), 0, 255)) += 1 for x in in, y in in
func out(x, y, c) = B(x, y, c) + scan(x, y) + f32(hist(clamp(x, 0, 255)))
output out
)";

class RandomSchedules : public ::testing::TestWithParam<std::string> {};

TEST_P(RandomSchedules, CheckPrintParseAndProtoRoundTrip) {
  Pipeline p =
      GetParam() == "updates" ? compile_pipeline(kUpdates, "updates.stp") : load(GetParam());
  std::mt19937_64 rng(std::hash<std::string>()(GetParam()));
  std::map<std::string, int> seen;  // how often each feature occurs, so the test is not vacuous
  for (int i = 0; i < 150; ++i) {
    Schedule s = random_schedule(p, rng);
    EXPECT_NO_THROW(check_schedule(s, p));
    std::string text = print_schedule(s, p);
    Schedule back = compile_schedule(text, "random.sched", p);
    ASSERT_EQ(back, s) << text;
    EXPECT_EQ(print_schedule(back, p), text);
    EXPECT_EQ(parse_schedule_bytes(serialize_schedule(s)), s) << text;
    for (const char* word :
         {"compute_at", "store_at", "compute_root", "compute_inline", "store_root", "split", "tile",
          "reorder", "vectorize", "parallel", "unroll", ".update("}) {
      if (text.find(word) != std::string::npos) ++seen[word];
    }
  }
  for (const char* word : {"compute_at", "compute_root", "split", "tile", "reorder", "vectorize",
                           "parallel", "unroll"}) {
    EXPECT_GT(seen[word], 0) << word << " never drawn";
  }
  if (GetParam() != "updates") {
    EXPECT_GT(seen["store_at"] + seen["store_root"], 0);
  } else {
    EXPECT_GT(seen[".update("], 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, RandomSchedules,
                         ::testing::Values("two_pass_blur", "unsharp_mask", "camera_pipe",
                                           "bilateral_grid", "updates"));

TEST(ScheduleCodec, HandWrittenRoundTrip) {
  Schedule s = parse_schedule(
      "out.tile(x, y, xo, yo, xi, yi, 256, 32, guard_with_if).parallel(yo).vectorize(xi, 8)\n"
      "A.compute_at(out, yi).store_at(out, yo).vectorize(x, 8)\n"
      "D.compute_at(hist.update(1), x).store_root()\n"
      "C.compute_inline()\n"
      "hist.update(0).parallel(y).reorder(x, y, z)\n"
      "hist.update(1).atomic().gpu_tile(x, y, xo, yo, xi, yi, 16, 16)\n",
      "s");
  proto::Schedule m = to_proto(s);
  EXPECT_EQ(m.format_version(), kScheduleFormatVersion);
  EXPECT_EQ(m.funcs_size(), 5);
  EXPECT_EQ(from_proto(m), s);
  EXPECT_EQ(parse_schedule_bytes(serialize_schedule(s)), s);
}

TEST(ScheduleCodec, GenericArgumentsRoundTrip) {
  // Arguments of every kind, as future directives (perforate(...)) will carry them: the
  // printer and the codec keep them exactly.
  ScheduleArg call;
  call.kind = ScheduleArgKind::Call;
  call.name = "adaptive";
  ScheduleArg kw;
  kw.kind = ScheduleArgKind::Keyword;
  kw.name = "f";
  ScheduleArg fl;
  fl.kind = ScheduleArgKind::Float;
  fl.float_value = 0.1;
  kw.args.push_back(fl);
  call.args = {kw, ScheduleArg::make_int(-3)};
  ScheduleArg stage;
  stage.kind = ScheduleArgKind::Stage;
  stage.name = "hist";
  stage.int_value = 2;
  EXPECT_EQ(to_string(call), "adaptive(f = 0.1, -3)");
  EXPECT_EQ(to_string(stage), "hist.update(2)");
  for (double v : {1.0, -0.0, 1e300, 5e-324, -2.5, 0.30000000000000004}) {
    fl.float_value = v;
    std::string t = to_string(fl);
    EXPECT_TRUE(t.find_first_of(".e") != std::string::npos) << t;
  }
}

// Funcs in name order: A (a level), hist (update(0): unroll), out (split, parallel).
proto::Schedule valid() {
  return to_proto(parse_schedule(
      "out.split(x, xo, xi, 8).parallel(xo)\nA.compute_at(out, xo)\nhist.update(0).unroll(x, 2)",
      "s"));
}

TEST(ScheduleCodec, RejectsMalformedMessages) {
  auto expect_bad = [](proto::Schedule m, const std::string& what) {
    try {
      from_proto(m);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  EXPECT_NO_THROW(from_proto(valid()));
  proto::Schedule m = valid();
  m.set_format_version(2);
  expect_bad(m, "format version 2");
  m = valid();
  m.mutable_funcs(0)->set_func("1bad");
  expect_bad(m, "is not an identifier");
  m = valid();
  *m.add_funcs() = m.funcs(0);
  expect_bad(m, "scheduled twice");
  m = valid();
  m.mutable_funcs(0)->mutable_compute()->set_kind(proto::LEVEL_KIND_UNSPECIFIED);
  expect_bad(m, "unknown level kind 0");
  m = valid();
  m.mutable_funcs(0)->mutable_compute()->set_var("");
  expect_bad(m, "level loop");
  m = valid();
  m.mutable_funcs(0)->mutable_store()->set_kind(proto::LEVEL_KIND_INLINE);
  expect_bad(m, "inline store level");
  m = valid();
  m.mutable_funcs(1)->mutable_stages(0)->mutable_directives(0)->set_name("frobnicate");
  expect_bad(m, "unknown directive 'frobnicate'");
  m = valid();
  m.mutable_funcs(1)->mutable_stages(0)->mutable_directives(0)->set_name("compute_root");
  expect_bad(m, "compute_root takes 0 arguments");
  m = valid();
  m.mutable_funcs(2)->mutable_stages(0)->mutable_directives(0)->mutable_args(3)->set_kind(
      proto::SCHEDULE_ARG_KIND_NAME);
  expect_bad(m, "name '' is not an identifier");
  m = valid();
  m.mutable_funcs(2)->mutable_stages(0)->mutable_directives(0)->mutable_args(3)->set_int_value(
      int64_t{1} << 40);
  expect_bad(m, "does not fit in 32 bits");
  m = valid();
  {  // bound(x, 0, 4) on hist.update(0): a whole-func directive, as from the parser
    proto::Directive* d = m.mutable_funcs(1)->mutable_stages(0)->mutable_directives(0);
    d->set_name("bound");
    d->mutable_args(1)->set_int_value(0);
    proto::ScheduleArg* extent = d->add_args();
    extent->set_kind(proto::SCHEDULE_ARG_KIND_INT);
    extent->set_int_value(4);
  }
  expect_bad(m, "bound applies to the whole func; it belongs to stage 0");
  m = valid();
  m.mutable_funcs(1)->mutable_stages(0)->clear_directives();
  expect_bad(m, "without directives");
  m = valid();
  *m.mutable_funcs(1)->add_stages() = m.funcs(1).stages(0);
  expect_bad(m, "given twice");
  m = valid();
  m.mutable_funcs(1)->mutable_stages(0)->set_stage(-1);
  expect_bad(m, "out of range");
  m = valid();
  m.mutable_funcs(2)->clear_stages();
  expect_bad(m, "with nothing scheduled");
  m = valid();
  proto::ScheduleArg* a =
      m.mutable_funcs(1)->mutable_stages(0)->mutable_directives(0)->mutable_args(0);
  for (int i = 0; i < 40; ++i) {
    a->set_kind(proto::SCHEDULE_ARG_KIND_CALL);
    a->set_name("g");
    a = a->add_args();
  }
  a->set_kind(proto::SCHEDULE_ARG_KIND_NAME);
  a->set_name("x");
  expect_bad(m, "nested more than 32 deep");
}

TEST(ScheduleCodec, MutatedBytesNeverCrash) {
  std::string bytes = serialize_schedule(from_proto(valid()));
  std::mt19937 rng(11);
  int accepted = 0;
  for (int trial = 0; trial < 5000; ++trial) {
    std::string b = bytes;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % b.size();
      switch (rng() % 3) {
        case 0: b[at] = static_cast<char>(rng()); break;
        case 1: b.erase(at, 1 + rng() % 3); break;
        default: b.insert(at, 1, static_cast<char>(rng())); break;
      }
      if (b.empty()) b = "x";
    }
    try {
      Schedule s = parse_schedule_bytes(b);
      ++accepted;
      // Whatever is accepted prints and parses back equal.
      EXPECT_EQ(parse_schedule(print_schedule(s), "again"), s);
    } catch (const UserError&) {
    }
  }
  EXPECT_THROW(parse_schedule_bytes("\xff\xff\xff"), UserError);
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace stipple
