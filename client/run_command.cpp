// `stipple run FILE.stp --input in=PHOTO [--param k=v] --output OUT.png`: runs a pipeline
// on photographs and writes the output image. By default it compiles the pipeline to
// native code under its schedule (`--schedule S.sched`, else the default schedule) with
// the LLVM JIT; `--interp` uses the reference evaluator instead. `--time N` prints the
// median of N runs after a warm-up; `--compare REF.png` prints the error metrics against
// a reference image.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>

#include "client/commands.h"
#include "client/load_pipeline.h"
#include "compiler_core/codegen/backend.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/image/metrics.h"
#include "compiler_core/interp/evaluator.h"
#include "compiler_core/interp/work_limits.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/perforation/apply_perforation.h"
#include "compiler_core/runtime/thread_pool.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple::cli {

namespace {

struct RunOptions {
  std::string pipeline;
  std::vector<std::string> inputs;
  std::vector<std::string> params;
  std::string output;
  std::string compare;
  std::string schedule;
  bool interp = false;
  int time_runs = 0;
  int threads = 0;  // 0: one per core
  double max_memory_gib = WorkLimits{}.max_buffer_bytes / double(int64_t{1} << 30);
  double max_work = WorkLimits{}.max_points;
};

std::pair<std::string, std::string> split_assignment(const std::string& s, const char* option) {
  size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
    throw UserError(std::string("bad ") + option + " '" + s + "': expected NAME=VALUE");
  }
  return {s.substr(0, eq), s.substr(eq + 1)};
}

double parse_number(const std::string& name, const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(v)) {
    throw UserError("bad --param " + name + "=" + text + ": the value is not a number");
  }
  return v;
}

std::string describe_shape(const Buffer& b) {
  std::string s;
  for (int d = 0; d < b.dimensions(); ++d) s += (d ? "x" : "") + std::to_string(b.extent(d));
  return s;
}

int run(const RunOptions& opt) {
  // The output is a PNG: a name that says otherwise is refused rather than honoured with
  // PNG bytes under a JPEG name.
  std::string extension = std::filesystem::path(opt.output).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension != ".png") {
    throw UserError("--output '" + opt.output +
                    "': the output is written as a PNG; give a name ending in .png");
  }
  Pipeline p = load_pipeline_reporting(opt.pipeline);
  InputImages inputs;
  for (const std::string& spec : opt.inputs) {
    auto [name, path] = split_assignment(spec, "--input");
    const InputDecl* decl = p.find_input(name);
    if (!decl) throw UserError("pipeline '" + p.name + "' has no input named '" + name + "'");
    if (inputs.count(name)) throw UserError("--input " + name + " is given twice");
    inputs[name] = photo_to_input(read_image(path), *decl, path);
  }
  for (const InputDecl& in : p.inputs) {
    if (!inputs.count(in.name)) {
      throw UserError("missing --input " + in.name + "=PHOTO (pipeline '" + p.name +
                      "' reads input '" + in.name + "')");
    }
  }
  ParamValues params;
  for (const std::string& spec : opt.params) {
    auto [name, text] = split_assignment(spec, "--param");
    if (!p.find_param(name))
      throw UserError("pipeline '" + p.name + "' has no param named '" + name + "'");
    params[name] = parse_number(name, text);
  }

  // Everything that can be known before computing is checked first: the output's size
  // against the PNG it is written to, the run's buffers and work against the limits.
  const std::vector<int64_t> extents = output_extents(p, inputs, params);
  const Func* out_func = p.find_func(p.output.func);
  if (std::string why = output_image_problem(out_func->type.code, extents); !why.empty()) {
    throw UserError(why);
  }
  WorkLimits limits;
  limits.max_buffer_bytes = opt.max_memory_gib * double(int64_t{1} << 30);
  limits.max_points = opt.max_work;
  if (opt.interp) {
    check_work_limits(estimate_work(p, inputs, params, extents), limits);
  } else {
    check_compiled_run(p, inputs, params, extents, limits);
  }

  // One way to compute the output, chosen once, and to compute it again into the same
  // buffer for --time (the output's allocation is not timed: run_lowered.h).
  std::function<Buffer()> compute;
  std::function<void(Buffer&)> recompute;
  std::shared_ptr<codegen::CompiledFunction> compiled;
  LoweredFunction lowered;
  Schedule schedule = opt.schedule.empty() ? Schedule{} : load_schedule_file(opt.schedule, p);
  Pipeline reference;
  if (opt.interp) {
    // The evaluator computes what the schedule's approximations compute (its loop
    // directives do not change values).
    reference = perforation::apply_perforation(p, schedule).pipeline;
    spdlog::info("evaluating {} with the reference evaluator", p.name);
    compute = [&] { return evaluate_pipeline(reference, inputs, params); };
    recompute = [&](Buffer& out) { out = compute(); };
  } else {
    spdlog::info("compiling {} under {}", p.name,
                 opt.schedule.empty() ? std::string("the default schedule") : opt.schedule);
    if (opt.threads > 0) ThreadPool::set_global_threads(opt.threads);
    lowered = lower(p, schedule);
    compiled = codegen::compile_for_host(lowered);
    const codegen::CompileStats& stats = compiled->stats();
    spdlog::info(
        "compiled in {:.1f} ms (LLVM IR {:.1f}, optimise {:.1f}, machine code {:.1f}, link "
        "{:.1f}); parallel loops run on {} thread(s)",
        stats.total_ms, stats.generate_ms, stats.optimize_ms, stats.codegen_ms, stats.link_ms,
        ThreadPool::global_threads());
    compute = [&, extents] { return run_lowered(*compiled, lowered, p, inputs, params, extents); };
    recompute = [&](Buffer& out) { run_lowered_into(*compiled, lowered, p, inputs, params, out); };
  }

  auto start = std::chrono::steady_clock::now();
  Buffer out = compute();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (opt.time_runs > 0) {
    std::vector<double> times;
    for (int i = 0; i < opt.time_runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      recompute(out);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    std::cout << "median of " << opt.time_runs << " runs: " << times[times.size() / 2] * 1e3
              << " ms (min " << times.front() * 1e3 << " ms, max " << times.back() * 1e3
              << " ms)\n";
  }

  Buffer photo = output_to_photo(out);
  write_png(opt.output, photo);
  std::cout << "wrote " << opt.output << " (" << describe_shape(out) << " "
            << to_string(Type(out.type())) << ", " << (photo.type() == ScalarType::UInt16 ? 16 : 8)
            << "-bit PNG) in " << seconds << " s"
            << (opt.interp ? " with the reference evaluator" : " as native code") << "\n";

  if (!opt.compare.empty()) {
    // In the units tune and front use: a float output's PNG (16 bits of [0, 1]) is read
    // back as [0, 1], so an RMSE here is the RMSE a front shows for the same variant.
    Buffer reference = read_image(opt.compare);
    Buffer written = read_image(opt.output);
    const bool float_output = Type(out.type()).is_float();
    if (float_output) {
      auto unit_scale = [](const Buffer& photo, const std::string& path) {
        InputDecl as_float;
        as_float.name = "compare";
        as_float.type = Float32();
        as_float.dim_names = photo.dimensions() == 2 ? std::vector<std::string>{"x", "y"}
                                                     : std::vector<std::string>{"x", "y", "c"};
        return photo_to_input(photo, as_float, path);
      };
      reference = unit_scale(reference, opt.compare);
      written = unit_scale(written, opt.output);
    }
    ErrorReport r = compare_outputs(written, reference);
    const std::string metric = metric_label(p.output.metric);
    std::cout << "against " << opt.compare << " (the pipeline's metric: " << metric
              << "; output units, " << (float_output ? "0 to 1" : "the output type's") << "): ";
    if (!std::isnan(r.delta_e)) std::cout << "mean Lab dE " << r.delta_e << ", ";
    std::cout << "rmse " << r.rmse << ", psnr " << r.psnr << " dB, max abs " << r.max_abs << "\n";
  }
  return kExitOk;
}

}  // namespace

CommandRunner add_run_command(CLI::App& app) {
  CLI::App* cmd =
      app.add_subcommand("run", "Run a pipeline on photographs and write the output image");
  auto opt = std::make_shared<RunOptions>();
  cmd->add_option("FILE", opt->pipeline, "the .stp pipeline")->required();
  cmd->add_option("-i,--input", opt->inputs,
                  "NAME=PHOTO for each input of the pipeline (PNG or JPEG); none for a pipeline "
                  "without inputs");
  cmd->add_option("-p,--param", opt->params, "NAME=VALUE to override a param's default");
  cmd->add_option("-o,--output", opt->output, "the PNG to write")->required();
  cmd->add_option("--compare", opt->compare,
                  "a reference image of the same shape: print mean Lab dE, RMSE, PSNR and max "
                  "error against it");
  cmd->add_option("-s,--schedule", opt->schedule, "a .sched file; without it the default schedule");
  cmd->add_flag("--interp", opt->interp,
                "use the reference evaluator instead of native code (with --schedule, of "
                "the schedule's approximations)");
  cmd->add_option("--time", opt->time_runs,
                  "after the first run, run N more times and print the median time (native "
                  "code computes into the first run's output buffer; the evaluator allocates)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--threads", opt->threads,
                  "threads for the native code's parallel loops (default: one per core)")
      ->check(CLI::Range(1, 1024))
      ->excludes(cmd->get_option("--interp"));
  cmd->add_option("--max-memory", opt->max_memory_gib,
                  "refuse a run whose buffers would exceed this many GiB, before computing it")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-work", opt->max_work,
                  "refuse a run that would compute more points than this (pixels of every "
                  "func, update and reduction step), before computing it")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  return [opt]() { return run(*opt); };
}

}  // namespace stipple::cli
