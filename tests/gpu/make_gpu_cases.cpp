// Writes the files of the GPU device check (device_check.sh) for every benchmark pipeline:
//   NAME.case        the harness's description of the buffers and params (harness.cpp)
//   NAME.ref.cpp     the pipeline under its CPU hand schedule, C++ source back end: the
//                    reference, run here (it equals the evaluator bit for bit)
//   NAME.VARIANT.cu  the pipeline under a GPU schedule, CUDA back end, and its .sched:
//                    `gpu` (gpu_schedule_from the hand schedule, or the hand GPU schedule
//                    datasets/pipelines/gpu/NAME.sched where there is one), `derived`
//                    (gpu_schedule_from, beside a hand one), `randomK`, and VARIANT for
//                    each STIPPLE_GPU_EXTRA_SCHEDULES/NAME.VARIANT.sched (experiments)
//   skipped.txt      what could not be generated, and why
//
//   make_gpu_cases PIPELINE_DIR OUT_DIR RANDOM_SCHEDULES SEED [PIPELINE...]
// (the named pipelines only, when some are named)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>

#include "compiler_core/codegen/cpp_source.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/gpu_schedule.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/schedule/schedule_parser.h"
#include "compiler_core/schedule/schedule_printer.h"

namespace fs = std::filesystem;
using namespace stipple;

namespace {

void write(const fs::path& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

std::string case_text(const Pipeline& p, const LoweredFunction& lowered) {
  std::string t;
  for (const InputDecl& in : p.inputs) {
    t += "input " + to_string(in.type) + " " + std::to_string(in.dim_names.size()) + "\n";
  }
  const ExternalBuffer* out = nullptr;
  for (const ExternalBuffer& b : lowered.buffers) {
    if (b.name == p.output.func) out = &b;
  }
  if (!out || lowered.buffers.size() != 1) throw UserError("the output is not the only buffer");
  int64_t channels = 3;
  if (p.output.extents.size() >= 3) {
    if (const IntImm* imm = p.output.extents[2].as<IntImm>()) channels = imm->value;
  }
  t += "output " + to_string(out->type) + " " + std::to_string(out->dimensions) + " " +
       std::to_string(channels) + "\n";
  for (const ParamDecl& prm : p.params) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", prm.default_value);
    t += std::string("param ") + buf + "\n";
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: make_gpu_cases PIPELINE_DIR OUT_DIR RANDOM_SCHEDULES SEED [PIPELINE...]\n";
    return 2;
  }
  const fs::path dir = argv[1], out_dir = argv[2];
  // Schedules to try beside the hand ones (experiments): DIR/NAME.VARIANT.sched.
  const char* extra = std::getenv("STIPPLE_GPU_EXTRA_SCHEDULES");
  const fs::path extra_dir = extra ? extra : "";
  const int randoms = std::atoi(argv[3]);
  std::mt19937 rng(static_cast<uint32_t>(std::atoi(argv[4])));
  fs::create_directories(out_dir);
  std::string skipped;
  std::vector<fs::path> files;
  const std::vector<std::string> only(argv + 5, argv + argc);
  for (const auto& e : fs::directory_iterator(dir)) {
    const bool named =
        only.empty() || std::find(only.begin(), only.end(), e.path().stem().string()) != only.end();
    if (e.path().extension() == ".stp" && named) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  codegen::AotOptions opt;
  opt.symbol = "pipeline";
  opt.target = "cuda-sm_90";
  for (const fs::path& file : files) {
    const std::string name = file.stem().string();
    try {
      const Pipeline p = load_pipeline_file(file.string());
      fs::path cpu_path = file;
      cpu_path.replace_extension(".sched");
      const Schedule cpu =
          fs::exists(cpu_path) ? load_schedule_file(cpu_path.string(), p) : Schedule{};
      const LoweredFunction ref = lower(p, cpu);
      opt.pipeline_file = file.string();
      opt.output_name = p.output.func;
      write(out_dir / (name + ".case"), case_text(p, ref));
      write(out_dir / (name + ".ref.cpp"), codegen::cpp_source(ref, opt));
      std::vector<std::pair<std::string, Schedule>> variants;
      const fs::path hand = dir / "gpu" / (name + ".sched");
      variants.push_back({"gpu", fs::exists(hand) ? load_schedule_file(hand.string(), p)
                                                  : gpu_schedule_from(p, cpu)});
      // Beside a hand GPU schedule, the derived one it improves on.
      if (fs::exists(hand)) variants.push_back({"derived", gpu_schedule_from(p, cpu)});
      if (!extra_dir.empty()) {
        for (const auto& e : fs::directory_iterator(extra_dir)) {
          const std::string f = e.path().filename().string();
          const std::string prefix = name + ".", suffix = ".sched";
          if (f.size() > prefix.size() + suffix.size() && f.rfind(prefix, 0) == 0 &&
              f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0) {
            variants.push_back({f.substr(prefix.size(), f.size() - prefix.size() - suffix.size()),
                                load_schedule_file(e.path().string(), p)});
          }
        }
      }
      for (int k = 0; k < randoms; ++k) {
        variants.push_back({"random" + std::to_string(k), random_gpu_schedule(p, cpu, rng)});
      }
      for (const auto& [variant, s] : variants) {
        const std::string text = print_schedule(s, p);
        try {
          const Schedule checked =
              compile_schedule(text, name + "." + variant + ".sched", p, ScheduleTarget::Gpu);
          write(out_dir / (name + "." + variant + ".sched"), text);
          opt.schedule_file = name + "." + variant + ".sched";
          write(out_dir / (name + "." + variant + ".cu"),
                codegen::cuda_source(lower(p, checked), opt));
        } catch (const std::exception& e) {
          skipped += name + "." + variant + ": " + e.what() + "\n";
        }
      }
    } catch (const std::exception& e) {
      skipped += name + ": " + e.what() + "\n";
    }
  }
  write(out_dir / "skipped.txt", skipped);
  std::cout << skipped;
  return 0;
}
