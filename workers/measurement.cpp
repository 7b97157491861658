#include "workers/measurement.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "compiler_core/codegen/backend.h"
#include "compiler_core/codegen/jit.h"
#include "compiler_core/codegen/run_lowered.h"
#include "compiler_core/image/bayer.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/image/metrics.h"
#include "compiler_core/interp/work_limits.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/runtime/thread_pool.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/support/content_hash.h"
#include "compiler_core/support/files.h"
#include "compiler_core/support/host_probe.h"
#include "workers/file_cache.h"
#include "workers/reference_cache.h"

namespace stipple::workers {

namespace {

/// What identifies the code computing reference outputs: the running executable's size
/// and modification time. A rebuilt evaluator (another compiler, another lowering) does
/// not read the references of the old one, whose float results may differ.
std::string build_identity() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "unknown";
  const auto size = std::filesystem::file_size(self, ec);
  const auto time = std::filesystem::last_write_time(self, ec);
  if (ec) return "unknown";
  return std::to_string(size) + "@" + std::to_string(time.time_since_epoch().count());
}

/// SHA-256 over the output's type, extents and bytes: equal digests, equal outputs.
std::string output_digest(const Buffer& b) {
  std::string bytes = to_string(b.type());
  for (int d = 0; d < b.dimensions(); ++d) bytes += " " + std::to_string(b.extent(d));
  bytes += "\n";
  bytes.append(static_cast<const char*>(b.data()), b.size_in_bytes());
  return sha256_hex(bytes);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

InputImages inputs_for_photo(const Pipeline& p, const std::string& path) {
  Buffer photo = read_image(path);
  InputImages inputs;
  for (const InputDecl& in : p.inputs) {
    const bool mosaic = in.dim_names.size() == 2 && photo.dimensions() == 3 && photo.extent(2) >= 3;
    inputs[in.name] = photo_to_input(mosaic ? rgb8_to_bayer_rggb(photo) : photo, in, path);
  }
  return inputs;
}

Measurement::Measurement(const EvaluationSetup& setup, MeasurementGate gate,
                         std::string reference_cache)
    : setup_(setup),
      pipeline_(compile_pipeline(setup.pipeline_source, setup.pipeline_file)),
      gate_(std::move(gate)),
      reference_cache_(std::move(reference_cache)) {
  for (const auto& [name, value] : setup_.params) {
    if (!pipeline_.find_param(name)) {
      throw UserError("pipeline '" + pipeline_.name + "' has no param named '" + name + "'");
    }
  }
  if (setup_.threads > 0) ThreadPool::set_global_threads(setup_.threads);
  // Every photo and reference now, so that a bad setup fails before any candidate.
  for (const auto& [split, paths] : setup_.images) photos(split);
}

Measurement::~Measurement() = default;

std::string Measurement::target() const {
  const codegen::HostCpu host = codegen::jit_host_cpu();
  return host_target_key(host.cpu, host.features);
}

std::vector<Measurement::Photo>& Measurement::photos(const std::string& split) {
  auto it = photos_.find(split);
  if (it != photos_.end()) return it->second;
  auto found = setup_.images.find(split);
  if (found == setup_.images.end() || found->second.empty()) {
    throw UserError("no photos for the '" + split + "' split");
  }
  // The reference outputs: the default exact schedule, compiled once when one is not in
  // the cache. Without the gate: a reference may run up to the deadline, and the host's
  // benchmark lock is for candidates' compiles and timed runs.
  LoweredFunction lowered;
  std::shared_ptr<codegen::CompiledFunction> exact;
  std::vector<Photo> loaded;
  // What every reference of this process depends on besides its photo: computed once.
  const std::string target_and_build =
      reference_cache_.empty() ? std::string() : target() + " " + build_identity();
  for (const std::string& path : found->second) {
    Photo ph;
    ph.inputs = inputs_for_photo(pipeline_, path);
    ph.extents = output_extents(pipeline_, ph.inputs, setup_.params);
    // A pipeline whose run on this photo is too big fails the setup now, with the
    // numbers, rather than the reference computation running for minutes.
    WorkLimits limits;
    limits.memory_option = limits.work_option = "";  // fixed for tuning
    check_compiled_run(pipeline_, ph.inputs, setup_.params, ph.extents, limits);
    std::string cached;
    if (!reference_cache_.empty()) {
      cached = reference_cache_ + "/" +
               reference_key(setup_.pipeline_source, setup_.params,
                             sha256_hex(read_text_file(path, "photo", kMaxImageFileBytes)),
                             target_and_build);
      if (std::optional<Buffer> b = read_reference(cached);
          b && b->dimensions() == int(ph.extents.size())) {
        bool same_shape = true;
        for (int d = 0; d < b->dimensions(); ++d)
          same_shape &= b->extent(d) == ph.extents[size_t(d)];
        if (same_shape) {
          ph.reference = std::move(*b);
          ++references_read_;
          touch_cache_file(cached);  // recently used: the worker's cache trim keeps it
          loaded.push_back(std::move(ph));
          continue;
        }
      }
    }
    if (!exact) {
      lowered = lower(pipeline_, Schedule{});
      exact = codegen::compile_for_host(lowered);
    }
    ph.reference = run_lowered(*exact, lowered, pipeline_, ph.inputs, setup_.params, ph.extents);
    if (!cached.empty()) {
      try {
        std::filesystem::create_directories(reference_cache_);
        write_reference(cached, ph.reference);
      } catch (const std::exception& e) {
        // A cache that cannot be written costs time, not results.
        std::fprintf(stderr, "stipple-evaluator: cannot cache a reference output in %s: %s\n",
                     reference_cache_.c_str(), e.what());
      }
    }
    loaded.push_back(std::move(ph));
  }
  return photos_[split] = std::move(loaded);
}

EvaluationResult Measurement::measure(const CodeRequest& request, const std::string& split,
                                      double give_up_ms) {
  std::vector<Photo>& set = photos(split);
  EvaluationResult r;
  const std::string& text = request.schedule;
  const std::string key =
      request.object.empty() ? text : text + "\n# code " + sha256_hex(request.object);
  auto cached = std::find_if(compiled_.begin(), compiled_.end(),
                             [&](const Compiled& c) { return c.key == key; });
  if (cached == compiled_.end()) {
    Compiled c;
    c.key = key;
    call(gate_.before_compile);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      Schedule s = compile_schedule(text, "<candidate>", pipeline_);
      c.lowered = lower(pipeline_, s);
      c.function = request.object.empty() ? codegen::compile_for_host(c.lowered)
                                          : codegen::load_for_host(request.object, request.symbol);
    } catch (const UserError& e) {
      r.status = EvaluationStatus::CompileError;
      r.reason = e.what();
      return r;
    }
    c.compile_ms = ms_since(t0);
    if (compiled_.size() == kCompiledKept) compiled_.pop_front();
    compiled_.push_back(std::move(c));
  } else {
    // The most recently used last: what goes when the cache is full is the least.
    Compiled c = std::move(*cached);
    compiled_.erase(cached);
    compiled_.push_back(std::move(c));
  }
  cached = std::prev(compiled_.end());
  // Nothing changes compiled_ until this measurement returns.
  const Compiled& one = *cached;
  const LoweredFunction& lowered = one.lowered;
  const codegen::CompiledFunction* compiled = one.function.get();
  r.compile_ms = one.compile_ms;
  if (request.keep_code) {
    r.object = compiled->object();
    r.symbol = compiled->symbol();
  }
  call(gate_.before_timing);
  // after_timing on every way out, exceptions included.
  const std::unique_ptr<const MeasurementGate, void (*)(const MeasurementGate*)> timing_over(
      &gate_, [](const MeasurementGate* g) { call(g->after_timing); });
  for (const Photo& ph : set) {
    auto run = [&] {
      return run_lowered(*compiled, lowered, pipeline_, ph.inputs, setup_.params, ph.extents);
    };
    const auto warm_start = std::chrono::steady_clock::now();
    Buffer out = run();  // the warm-up; its output is the one compared
    const double warm_ms = ms_since(warm_start);
    std::vector<double> times;
    const bool give_up = give_up_ms > 0 && warm_ms > give_up_ms;
    if (give_up) times.push_back(warm_ms);
    // The timed runs compute into one buffer allocated here: allocating, zeroing and
    // faulting in the output each run is no part of the schedule's time (run_lowered.h),
    // and as a fixed cost it shrank every speedup the search saw (a fifth of two_pass_blur's
    // time at 820x614).
    Buffer again;
    if (!give_up) again = Buffer(out.type(), ph.extents);
    double timed_ms = 0;
    for (int k = 0; !give_up && (k < std::max(1, setup_.runs) ||
                                 (timed_ms < setup_.min_timed_ms && k < kMaxTimedRuns));
         ++k) {
      const auto start = std::chrono::steady_clock::now();
      run_lowered_into(*compiled, lowered, pipeline_, ph.inputs, setup_.params, again);
      times.push_back(ms_since(start));
      timed_ms += times.back();
    }
    std::sort(times.begin(), times.end());
    ErrorReport e = compare_outputs(out, ph.reference);
    if (e.has_nan) {
      r.status = EvaluationStatus::NaN;
      r.reason = "the output has NaN or infinite values";
      r.images.clear();
      return r;
    }
    ImageMeasurement m;
    if (setup_.output_digests) m.output_digest = output_digest(out);
    m.time_ms = times[times.size() / 2];
    m.min_time_ms = times.front();
    m.error = metric_value(e, pipeline_.output.metric);
    m.psnr = e.psnr;
    r.images.push_back(m);
  }
  r.aggregate();
  return r;
}

}  // namespace stipple::workers
