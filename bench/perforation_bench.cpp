// Issue #4's benchmark: the image-perforation paper's highlighted results (§7) re-created
// on the image benchmark's test photos at 820x614. For each pipeline three schedules are
// compiled: the best exact schedule of issue #3 (datasets/pipelines/NAME.sched), the
// paper's perforation on top of a comparable fusion schedule
// (bench/perforation/NAME.perforated.sched) and loop perforation at a similar speedup
// (bench/perforation/NAME.loop.sched, whose knob @P@, the fraction of the output's rows
// skipped, is set by bisection on the first train photos so that its speedup over the
// exact schedule is the perforated variant's). Each runs on every test photo; the time of a
// variant is its lowest median of --runs runs over --rounds interleaved rounds (the VM
// is noisy: a slow period only adds time), and its error the mean CIE76 Lab Delta E
// against the exact output, averaged over the photos.
//
//   build-bench/bench/perforation_bench [--threads 1] [--runs 9] [--rounds 3]
//       [--case two_pass_blur] [--images DIR] [--split test] [--size 1920x1080]
//
// --size renders each 820x614 photo at another size first (stb_image_resize, as the
// benchmark's own renderings: centre crop to the aspect ratio, Catmull-Rom when
// enlarging). Enlarged photos are softer than native ones, so their errors are lower
// than a true photo of that size would give; the times are what that size costs.
//
// Prints one Markdown table (bench/README.md keeps the results and the machine).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "compiler_core/codegen/backend.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/image/bayer.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/image/metrics.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/perforation/stage_templates.h"
#include "compiler_core/runtime/thread_pool.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/support/files.h"
#include "datasets/benchmark/manifest.h"
#include "datasets/benchmark/resample.h"

namespace {

using namespace stipple;

struct Case {
  std::string pipeline;
  std::string paper;  // the paper's speedup for its highlighted result, where it gives one
};

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      {"two_pass_blur", "5.6x"}, {"unsharp_mask", "-"}, {"bilateral_grid", "-"},
      {"artistic_blur", "~6x"},  {"median", "~3x"},     {"bilateral_filter", "-"},
      {"demosaic", "-"},
  };
  return kCases;
}

std::string source_path(const std::string& rel) {
  return std::string(STIPPLE_SOURCE_DIR) + "/" + rel;
}

// A schedule compiled once; run() times one call of the generated code.
class Variant {
 public:
  Variant(const Pipeline& p, const std::string& schedule_file)
      : Variant(p, read_text_file(schedule_file), schedule_file) {}
  Variant(const Pipeline& p, const std::string& schedule_text, const std::string& name) : p_(p) {
    auto t0 = std::chrono::steady_clock::now();
    Schedule s = compile_schedule(schedule_text, name, p);
    lowered_ = lower(p, s);
    compiled_ = codegen::compile_for_host(lowered_);
    compile_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  Buffer run(const InputImages& inputs, const std::vector<int64_t>& extents) const {
    return run_lowered(*compiled_, lowered_, p_, inputs, {}, extents);
  }
  // The median of `runs` timed calls (after one untimed call, whose output they compute
  // again: its allocation is not timed), in ms.
  double median_ms(const InputImages& inputs, const std::vector<int64_t>& extents, int runs) const {
    Buffer out = run(inputs, extents);
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      run_lowered_into(*compiled_, lowered_, p_, inputs, {}, out);
      t.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
  double compile_ms() const { return compile_ms_; }

 private:
  const Pipeline& p_;
  LoweredFunction lowered_;
  std::shared_ptr<codegen::CompiledFunction> compiled_;
  double compile_ms_ = 0;
};

// The test (or train) photos of the benchmark manifest at 820x614.
std::vector<std::string> photos(const std::string& images, const std::string& split) {
  const std::string path = source_path("datasets/benchmark/manifest.tsv");
  dataset::Manifest manifest = dataset::parse_manifest(read_text_file(path), path);
  std::vector<std::string> out;
  for (const dataset::ManifestRow& row : manifest.rows) {
    if (row.resolution != "820x614" || (split != "all" && row.split != split)) continue;
    std::string photo = images + "/" + std::filesystem::path(row.output).filename().string();
    if (std::filesystem::exists(photo)) out.push_back(photo);
  }
  return out;
}

// The size photos are rendered at (--size).
int g_width = 820, g_height = 614;

// The inputs of pipeline p for a photo rendered at --size (demosaic reads an RGGB mosaic
// of it, compiler_core/image/bayer.h).
InputImages inputs_for(const Pipeline& p, const std::string& path) {
  Buffer photo = read_image(path);
  if (photo.extent(0) != g_width || photo.extent(1) != g_height)
    photo = dataset::crop_resize_rgb8(photo, g_width, g_height);
  InputImages inputs;
  const InputDecl& in = p.inputs[0];
  inputs[in.name] =
      photo_to_input(in.dim_names.size() == 2 ? rgb8_to_bayer_rggb(photo) : photo, in, path);
  return inputs;
}

// Loop perforation at the perforated variant's speedup: `text` with @P@ set by bisection
// over [0, 0.95] so that exact / loop on the calibration photos is exact / perforated
// there. Returns p, or -1 when the perforated variant is not faster than the exact one
// (no loop perforation is that slow).
double calibrate_loop(const Pipeline& p, const std::string& text, const Variant& exact,
                      const Variant& perforated, const std::vector<std::string>& photos, int runs) {
  std::vector<InputImages> inputs;
  std::vector<std::vector<int64_t>> extents;
  for (const std::string& path : photos) {
    inputs.push_back(inputs_for(p, path));
    extents.push_back(output_extents(p, inputs.back()));
  }
  auto total = [&](const Variant& v) {
    double t = 0;
    for (size_t i = 0; i < inputs.size(); ++i) t += v.median_ms(inputs[i], extents[i], runs);
    return t;
  };
  const double exact_ms = total(exact);
  const double target = exact_ms / total(perforated);
  std::fprintf(stderr, "%s: perforated speedup on %zu train photos %.2fx\n", p.name.c_str(),
               photos.size(), target);
  if (target < 1.02) return -1;
  double lo = 0, hi = 0.95;
  for (int step = 0; step < 8; ++step) {
    const double mid = (lo + hi) / 2;
    Variant loop(p, perforation::fill_template(text, {{"P", perforation::stp_float(mid)}}),
                 "loop.sched");
    const double speedup = exact_ms / total(loop);
    std::fprintf(stderr, "%s: loop perforation p = %.4f: %.2fx\n", p.name.c_str(), mid, speedup);
    (speedup < target ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

struct Row {
  std::string pipeline, paper;
  double loop_p = -1;  // the fraction of rows loop perforation skips; -1: none
  double exact_ms = 1e30, perforated_ms = 1e30, loop_ms = 1e30;
  double perforated_de = 0, loop_de = 0;
  double compile_perforated_ms = 0;
  int images = 0;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "Issue #4's benchmark: image perforation against the best exact schedules "
      "and loop perforation, on the image benchmark's photos at 820x614");
  int threads = 1, runs = 9, rounds = 3;
  std::string only, split = "test";
  std::string images = source_path("datasets/benchmark/images/820x614");
  app.add_option("--threads", threads, "threads for parallel loops")->check(CLI::Range(1, 64));
  app.add_option("--runs", runs, "timed runs per measurement (the median is kept)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--rounds", rounds, "interleaved rounds (the lowest median is kept)")
      ->check(CLI::Range(1, 100));
  app.add_option("--case", only, "only this pipeline");
  app.add_option("--images", images, "folder of the 820x614 benchmark photos");
  app.add_option("--split", split, "test, train or all")
      ->check(CLI::IsMember({"test", "train", "all"}));
  std::string size = "820x614";
  app.add_option("--size", size,
                 "WxH: each photo rendered at this size first (enlarged photos are softer "
                 "than native ones)");
  CLI11_PARSE(app, argc, argv);
  char rest = 0;
  if (std::sscanf(size.c_str(), "%dx%d%c", &g_width, &g_height, &rest) != 2 || g_width < 16 ||
      g_height < 16 || g_width > 8192 || g_height > 8192) {
    std::fprintf(stderr, "perforation_bench: --size takes WxH, 16 to 8192 each, found '%s'\n",
                 size.c_str());
    return 2;
  }

  try {
    std::vector<std::string> paths = photos(images, split);
    if (paths.empty()) {
      std::fprintf(stderr,
                   "perforation_bench: no %s photos in %s; build them with "
                   "datasets/benchmark/build-benchmark.sh\n",
                   split.c_str(), images.c_str());
      return 2;
    }
    ThreadPool::set_global_threads(threads);
    std::vector<Row> rows;
    for (const Case& c : cases()) {
      if (!only.empty() && c.pipeline != only) continue;
      Pipeline p = load_pipeline_file(source_path("datasets/pipelines/" + c.pipeline + ".stp"));
      Variant exact(p, source_path("datasets/pipelines/" + c.pipeline + ".sched"));
      Variant perforated(p, source_path("bench/perforation/" + c.pipeline + ".perforated.sched"));
      const std::string loop_text =
          read_text_file(source_path("bench/perforation/" + c.pipeline + ".loop.sched"));
      std::vector<std::string> calibration = photos(images, "train");
      calibration.resize(std::min<size_t>(calibration.size(), 3));
      const double loop_p =
          calibrate_loop(p, loop_text, exact, perforated, calibration, std::max(3, runs / 2));
      // Without a setting as slow as the perforated variant, the mildest one is shown.
      Variant loop(p,
                   perforation::fill_template(
                       loop_text, {{"P", perforation::stp_float(std::max(loop_p, 0.02))}}),
                   "loop.sched");
      Row row;
      row.loop_p = loop_p;
      row.pipeline = c.pipeline;
      row.paper = c.paper;
      row.compile_perforated_ms = perforated.compile_ms();
      double exact_total = 0, perforated_total = 0, loop_total = 0;
      for (const std::string& path : paths) {
        InputImages inputs = inputs_for(p, path);
        std::vector<int64_t> extents = output_extents(p, inputs);
        Buffer reference = exact.run(inputs, extents);
        row.perforated_de += mean_delta_e(perforated.run(inputs, extents), reference);
        row.loop_de += mean_delta_e(loop.run(inputs, extents), reference);
        std::vector<double> t(3, 1e30);
        for (int r = 0; r < rounds; ++r) {
          t[0] = std::min(t[0], exact.median_ms(inputs, extents, runs));
          t[1] = std::min(t[1], perforated.median_ms(inputs, extents, runs));
          t[2] = std::min(t[2], loop.median_ms(inputs, extents, runs));
        }
        exact_total += t[0];
        perforated_total += t[1];
        loop_total += t[2];
        ++row.images;
        std::fprintf(stderr, "%s %s: exact %.2f ms, perforated %.2f ms, loop %.2f ms\n",
                     c.pipeline.c_str(), std::filesystem::path(path).filename().c_str(), t[0], t[1],
                     t[2]);
      }
      row.exact_ms = exact_total / row.images;
      row.perforated_ms = perforated_total / row.images;
      row.loop_ms = loop_total / row.images;
      row.perforated_de /= row.images;
      row.loop_de /= row.images;
      rows.push_back(row);
    }
    std::printf(
        "%d %s photos at %dx%d, %d thread(s), mean over photos of the lowest median of "
        "%d runs in %d rounds\n\n",
        rows.empty() ? 0 : rows[0].images, split.c_str(), g_width, g_height, threads, runs, rounds);
    std::printf(
        "| pipeline | exact (#3) ms | perforated ms | speedup | mean Lab dE | loop "
        "perforation: rows skipped | ms | speedup | mean Lab dE | paper |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (const Row& r : rows) {
      char skipped[64];
      if (r.loop_p < 0) {
        std::snprintf(skipped, sizeof skipped, "2%% (none as slow)");
      } else {
        std::snprintf(skipped, sizeof skipped, "%.1f%%", 100 * r.loop_p);
      }
      std::printf("| %s | %.2f | %.2f | %.2fx | %.2f | %s | %.2f | %.2fx | %.2f | %s |\n",
                  r.pipeline.c_str(), r.exact_ms, r.perforated_ms, r.exact_ms / r.perforated_ms,
                  r.perforated_de, skipped, r.loop_ms, r.exact_ms / r.loop_ms, r.loop_de,
                  r.paper.c_str());
    }
    if (rows.size() > 1) {
      double log_sum = 0;
      for (const Row& r : rows) log_sum += std::log(r.exact_ms / r.perforated_ms);
      std::printf("\ngeometric mean of the perforated speedups: %.2fx\n",
                  std::exp(log_sum / static_cast<double>(rows.size())));
    }
    return 0;
  } catch (const UserError& e) {
    std::fprintf(stderr, "perforation_bench: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "perforation_bench: %s\n", e.what());
    return 1;
  }
}
