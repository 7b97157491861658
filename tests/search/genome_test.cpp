// The search space: every genome decodes to a schedule the checker accepts (on every
// benchmark pipeline, random genomes, mutations and crossovers), decoding is idempotent on
// the repaired genome, exact-only spaces never produce an approximation, encode finds the
// hand schedules' choices, and decoded exact schedules compute the reference evaluator's
// output bit for bit.
#include "search/genome.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <set>

#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/approximation.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple::search {
namespace {

std::string source_path(const std::string& rel) {
  return std::string(STIPPLE_SOURCE_DIR) + "/" + rel;
}

std::vector<std::string> pipeline_names() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(source_path("datasets/pipelines"))) {
    if (e.path().extension() == ".stp") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(Genome, EveryRandomGenomeDecodesToACheckedScheduleOnEveryPipeline) {
  std::mt19937_64 rng(42);
  for (const std::string& name : pipeline_names()) {
    Pipeline p = load_pipeline_file(source_path("datasets/pipelines/" + name + ".stp"));
    SearchSpace space(p);
    int perforated = 0;
    for (int i = 0; i < 10; ++i) {
      Genome g = space.random_genome(rng);
      space.mutate(g, rng);
      Genome other = space.random_genome(rng);
      auto [c, d] = space.crossover(g, other, rng);
      for (const Genome* x : {&g, &c, &d}) {
        ASSERT_EQ(x->stages.size(), p.funcs.size());
        Decoded dec = space.decode(*x);
        // The text is a schedule the checker accepts, and it is what `schedule` is.
        Schedule s;
        ASSERT_NO_THROW(s = compile_schedule(dec.text, "<decoded>", p)) << name << "\n" << dec.text;
        EXPECT_EQ(s, dec.schedule) << name;
        // Decoding the repaired genome drops nothing more and gives the same text.
        Decoded again = space.decode(dec.genome);
        EXPECT_EQ(again.text, dec.text) << name;
        EXPECT_EQ(again.dropped, 0) << name << "\n" << dec.text;
        EXPECT_EQ(again.genome, dec.genome) << name;
        perforated += has_approximation(dec.schedule) ? 1 : 0;
      }
    }
    // A third of the stage genes carry a perforation: some survive legalisation.
    EXPECT_GT(perforated, 0) << name;
  }
}

// An exact space's schedules compute the exact values: no approximation but integer
// narrowing, which the checker accepts only where it changes no value (camera_pipe has
// narrowable stages, two_pass_blur none).
TEST(Genome, ExactSpacesNeverApproximate) {
  for (const char* name : {"two_pass_blur.stp", "camera_pipe.stp"}) {
    std::mt19937_64 rng(3);
    Pipeline p = load_pipeline_file(source_path(std::string("datasets/pipelines/") + name));
    SearchSpaceOptions o;
    o.allow_perforation = false;
    SearchSpace space(p, o);
    int narrowed = 0;
    for (int i = 0; i < 100; ++i) {
      Genome g = space.random_genome(rng);
      for (int k = 0; k < 5; ++k) space.mutate(g, rng);
      const Schedule s = space.decode(g).schedule;
      EXPECT_FALSE(approximates(s)) << name;
      narrowed += has_approximation(s);
    }
    EXPECT_EQ(narrowed > 0, std::string(name) == "camera_pipe.stp") << name;
  }
}

// Vector widths are drawn for the target's registers (issue #33): a NEON run's widths
// are one to four 128-bit registers (or half of one), an AVX-512 run's the same counts of
// 512-bit ones; neither carries the other's, and mutation stays on the target's ladder.
TEST(Genome, VectorWidthsAreDrawnForTheTargetsRegisters) {
  EXPECT_EQ(vector_width_ladder(16), (std::vector<int>{0, 2, 4, 8, 16}));
  EXPECT_EQ(vector_width_ladder(32), (std::vector<int>{0, 4, 8, 16, 32}));
  EXPECT_EQ(vector_width_ladder(64), (std::vector<int>{0, 8, 16, 32, 64}));
  Pipeline p = load_pipeline_file(source_path("datasets/pipelines/unsharp.stp"));
  for (int bytes : {16, 64}) {
    SearchSpaceOptions o;
    o.vector_bytes = bytes;
    SearchSpace space(p, o);
    const std::vector<int> ladder = vector_width_ladder(bytes);
    auto on_ladder = [&](const Genome& g) {
      for (const StageGene& s : g.stages) {
        if (std::find(ladder.begin(), ladder.end(), s.fusion.vector_width) == ladder.end()) {
          return false;
        }
      }
      return true;
    };
    // The exact starting point vectorises by one native register.
    bool one_register = false;
    for (const StageGene& s : space.exact_genome().stages) {
      one_register |= s.fusion.vector_width == bytes / 4;
    }
    EXPECT_TRUE(one_register) << bytes;
    std::mt19937_64 rng(11);
    std::set<int> drawn;
    for (int i = 0; i < 200; ++i) {
      Genome g = space.random_genome(rng);
      for (int k = 0; k < 4; ++k) space.mutate(g, rng);
      ASSERT_TRUE(on_ladder(g)) << bytes << ": " << g.key();
      for (const StageGene& s : g.stages) drawn.insert(s.fusion.vector_width);
    }
    EXPECT_EQ(drawn, std::set<int>(ladder.begin(), ladder.end())) << bytes;
  }
}

TEST(Genome, EachPerforationKindDecodesToItsDirective) {
  Pipeline p = load_pipeline_file(source_path("datasets/pipelines/two_pass_blur.stp"));
  SearchSpace space(p);
  Genome g = space.exact_genome();
  auto stage = [&](const std::string& f) -> StageGene& {
    for (StageGene& s : g.stages) {
      if (s.func == f) return s;
    }
    throw std::runtime_error("no stage " + f);
  };
  PerforationGene grid;
  grid.kind = PerforationKind::Grid;
  grid.spacing_x = 4;
  grid.spacing_y = 1;
  grid.on_demand = true;
  stage("A").perforation = grid;
  PerforationGene adaptive;
  adaptive.kind = PerforationKind::Adaptive;
  adaptive.k = 3;
  adaptive.fraction = 0.25;
  adaptive.reconstruction = ReconstructionKind::VaryingGaussian;
  adaptive.sigma = 0.9;
  stage("out").perforation = adaptive;
  Decoded d = space.decode(g);
  const size_t a_line = d.text.find("\nA.");
  ASSERT_NE(a_line, std::string::npos) << d.text;
  const std::string a_chain = d.text.substr(a_line + 1, d.text.find('\n', a_line + 1) - a_line - 1);
  EXPECT_NE(a_chain.find(".perforate(grid(4, 1), linear, on_demand)"), std::string::npos) << d.text;
  EXPECT_NE(d.text.find("perforate(adaptive(k = 3, f = 0.25), varying_gaussian(sigma0 = 0.9))"),
            std::string::npos)
      << d.text;
  FuncApproximation a = func_approximation(d.schedule, p, *p.find_func("out"), SourceText("", ""));
  ASSERT_TRUE(a.perforation);
  EXPECT_EQ(a.perforation->sampling, SamplingKind::Adaptive);
  EXPECT_EQ(a.perforation->k, 3);
  EXPECT_DOUBLE_EQ(a.perforation->fraction, 0.25);

  PerforationGene reduction;
  reduction.kind = PerforationKind::Reduction;
  reduction.reduction_stride = 2;
  stage("out").perforation = reduction;
  d = space.decode(g);
  EXPECT_NE(d.text.find("perforate_reduction(i, grid(2))"), std::string::npos) << d.text;

  // Precision lowering, and back from the schedule by encode.
  PerforationGene store;
  store.kind = PerforationKind::StoreF16;
  stage("out").perforation = PerforationGene{};
  stage("A").perforation = store;
  d = space.decode(g);
  EXPECT_EQ(d.dropped, 0) << d.text;
  EXPECT_NE(d.text.find(".store_as(f16)"), std::string::npos) << d.text;
  Genome back = space.encode(d.schedule);
  for (const StageGene& s : back.stages) {
    EXPECT_EQ(s.perforation.kind == PerforationKind::StoreF16, s.func == "A") << s.func;
  }
}

TEST(Genome, EncodeFindsTheHandSchedulesChoices) {
  Pipeline p = load_pipeline_file(source_path("datasets/pipelines/two_pass_blur.stp"));
  // For AVX-512, where its vectors(4) is 64 f32 lanes.
  Schedule hand = load_schedule_file(source_path("datasets/pipelines/two_pass_blur.sched"), p,
                                     ScheduleTarget::Cpu, 64);
  SearchSpace space(p);
  Genome g = space.encode(hand);
  const StageGene* out = nullptr;
  const StageGene* a = nullptr;
  for (const StageGene& s : g.stages) {
    if (s.func == "out") out = &s;
    if (s.func == "A") a = &s;
  }
  ASSERT_TRUE(out && a);
  // out.tile(x, y, xo, yo, xi, yi, 256, 135)...vectorize(xi, 64).parallel(yo)
  EXPECT_EQ(out->fusion.tile_x, 256);
  EXPECT_EQ(out->fusion.tile_y, 135);
  EXPECT_EQ(out->fusion.vector_width, 64);
  EXPECT_TRUE(out->fusion.parallel);
  // A.compute_at(out, xo): xo is the third loop of out's nest (xi, yi, xo, c, yo).
  EXPECT_EQ(a->fusion.compute, ComputeChoice::At);
  EXPECT_EQ(a->fusion.compute_loop, 2);
  Decoded d = space.decode(g);
  EXPECT_NE(d.text.find("A.compute_at(out, xo)"), std::string::npos) << d.text;
  EXPECT_NE(d.text.find("tile(x, y, xo, yo, xi, yi, 256, 135)"), std::string::npos) << d.text;
}

// A benchmark pipeline on a fixture photo, and the evaluator's output for it.
struct ReferenceRun {
  Pipeline p;
  InputImages inputs;
  Buffer reference;
  std::vector<int64_t> extents;

  ReferenceRun(const std::string& pipeline, const std::string& photo)
      : p(load_pipeline_file(source_path("datasets/pipelines/" + pipeline))) {
    inputs["in"] =
        photo_to_input(read_image(source_path("datasets/fixtures/" + photo)), p.inputs[0], photo);
    reference = evaluate_pipeline(p, inputs, {});
    extents = output_extents(p, inputs, {});
  }
  /// Compiles d's schedule and expects the reference's bytes.
  void expect_reference(codegen::JitCompiler& jit, const Decoded& d) const {
    LoweredFunction f = lower(p, d.schedule);
    Buffer out = run_lowered(*jit.compile(f), f, p, inputs, {}, extents);
    ASSERT_EQ(out.size_in_bytes(), reference.size_in_bytes());
    EXPECT_EQ(std::memcmp(out.data(), reference.data(), out.size_in_bytes()), 0) << d.text;
  }
};

TEST(Genome, DecodedExactSchedulesComputeTheReferenceOutput) {
  ReferenceRun run("two_pass_blur.stp", "natural-high-64x48.png");
  SearchSpaceOptions o;
  o.allow_perforation = false;
  SearchSpace space(run.p, o);
  std::mt19937_64 rng(11);
  auto jit = codegen::JitCompiler::create();
  for (int i = 0; i < 8; ++i) run.expect_reference(*jit, space.decode(space.random_genome(rng)));
}

// The narrow gene (issue #28, integer narrowing): camera_pipe's raw mosaic, its denoised
// copy, the deinterleaved channels, their copies and the greens interpolated at red and
// blue sites are proved to fit in u16 as a chain (each proof rests on its producers'
// narrowing) and are stored so; the reds and blues interpolated with a green correction
// are not provable (a difference added can leave [0, 65535]). Narrowing is exact, so an
// exact space draws it, and every decoded genome with it computes the reference output
// bit for bit; encode reads it back.
TEST(Genome, NarrowedStorageIsProvedAsAChainAndIsExact) {
  ReferenceRun run("camera_pipe.stp", "bayer-rggb-64x48.png");
  SearchSpaceOptions o;
  o.allow_perforation = false;
  SearchSpace space(run.p, o);

  Genome all = space.exact_genome();
  for (StageGene& s : all.stages) s.fusion.narrow = true;
  Decoded d = space.decode(all);
  std::set<std::string> narrowed;
  for (const StageGene& s : d.genome.stages) {
    if (s.fusion.narrow) narrowed.insert(s.func);
  }
  const std::set<std::string> provable = {"raw", "denoised", "deinterleaved", "g_gr", "r_r",
                                          "b_b", "g_gb",     "g_r",           "g_b",  "green"};
  EXPECT_EQ(narrowed, provable) << d.text;
  const std::string text = "\n" + d.text;
  for (const std::string& name : provable) {
    const size_t at = text.find("\n" + name + ".");
    ASSERT_NE(at, std::string::npos) << name;
    const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
    EXPECT_NE(line.find(".store_as(u16)"), std::string::npos) << line;
  }
  EXPECT_EQ(space.encode(d.schedule), d.genome);

  auto jit = codegen::JitCompiler::create();
  std::mt19937_64 rng(28);
  std::vector<Genome> genomes = {d.genome};
  for (int i = 0; i < 5; ++i) genomes.push_back(space.random_genome(rng));
  int with_narrowing = 0;
  for (const Genome& g : genomes) {
    Decoded dg = space.decode(g);
    with_narrowing += dg.text.find("store_as(u16)") != std::string::npos;
    run.expect_reference(*jit, dg);
  }
  EXPECT_GE(with_narrowing, 3);
}

}  // namespace
}  // namespace stipple::search
