// `stipple export RUN --variant N --format schedule|obj|header|asm|llvm|cpp [-o OUT] [--db PATH]`:
// writes the variant of a run's front a user chose (its number in `stipple front RUN`) as
// its schedule text, or compiled ahead of time for this machine's target as an object
// file and C header to link into their own program (compiler_core/codegen/AOT.md).
#include <filesystem>
#include <iostream>

#include "client/commands.h"
#include "client/front_table.h"
#include "client/load_pipeline.h"
#include "client/open_database.h"
#include "client/output_file.h"
#include "compiler_core/codegen/aot.h"
#include "compiler_core/codegen/backend.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_printer.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/lowering/lower.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "search/tuning_session.h"

namespace stipple::cli {

namespace {

struct ExportOptions {
  int64_t run = 0;
  int variant = -1;
  std::vector<std::string> formats;
  std::string output;
  std::string db = "stipple.db";
  std::string function_name;
  std::string target = "host";
};

int run_export(const ExportOptions& opt) {
  const bool to_stdout = is_standard_output(opt.output);
  if (to_stdout && opt.formats.size() != 1) {
    throw UserError("-o - (standard output) takes a single --format, not " +
                    std::to_string(opt.formats.size()));
  }
  auto db = open_database(opt.db, DatabaseUse::Read);
  const storage::EvaluationRecord chosen = search::front_variant(*db, opt.run, opt.variant);
  std::optional<storage::RunRecord> run = db->find_run(opt.run);
  std::optional<storage::PipelineRecord> stored = db->pipeline(run->pipeline_id);
  const std::string pipeline_file = stored->name + ".stp";
  Pipeline p = compile_pipeline_reporting(stored->source, pipeline_file);
  const std::string base = opt.output.empty() ? stored->name + "_run" + std::to_string(opt.run) +
                                                    "_v" + std::to_string(opt.variant)
                                              : opt.output;

  std::vector<codegen::EmitKind> kinds;
  for (const std::string& f : opt.formats) {
    if (f == "schedule") {
      const std::string path =
          opt.formats.size() == 1 && !opt.output.empty() ? opt.output : base + ".sched";
      write_output_file(path, "# " + stored->name + ": run " + std::to_string(opt.run) +
                                  ", variant " + std::to_string(opt.variant) + " (train " +
                                  std::to_string(chosen.time_ms) + " ms, error " +
                                  std::to_string(chosen.error) + ")\n" + chosen.key.schedule);
      if (!to_stdout) std::cout << "wrote " << path << " (schedule)\n";
    } else {
      kinds.push_back(codegen::parse_emit_kind(f));
    }
  }
  if (kinds.empty()) return kExitOk;
  codegen::AotOptions aot;
  aot.symbol =
      opt.function_name.empty() ? codegen::c_function_name_from(stored->name) : opt.function_name;
  codegen::check_c_function_name(aot.symbol);
  aot.target = opt.target;
  aot.pipeline_file = pipeline_file;
  aot.schedule_file = "run " + std::to_string(opt.run) + " variant " + std::to_string(opt.variant);
  aot.output_name = p.output.func;
  for (const Expr& e : p.output.extents) aot.output_extents.push_back(to_string(e));
  Schedule s = compile_schedule(chosen.key.schedule, aot.schedule_file, p, ScheduleTarget::Cpu,
                                codegen::target_vector_bytes(opt.target));
  const codegen::AotOutputs outputs = codegen::emit_files(lower(p, s), kinds, aot);
  for (codegen::EmitKind k : kinds) {
    const std::string path = kinds.size() == 1 && opt.formats.size() == 1 && !opt.output.empty()
                                 ? opt.output
                                 : base + std::string(codegen::emit_kind_extension(k));
    write_output_file(path, outputs.at(k));
    if (to_stdout) continue;  // no "wrote" line in the middle of the output
    std::cout << "wrote " << path << " (" << codegen::emit_kind_name(k) << ", function "
              << aot.symbol << ")\n";
  }
  return kExitOk;
}

}  // namespace

CommandRunner add_export_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a variant of a run's front as a schedule, or as native code to link");
  auto opt = std::make_shared<ExportOptions>();
  cmd->add_option("RUN", opt->run, "the run (see `stipple runs`)")->required();
  cmd->add_option("--variant", opt->variant, "the variant's number in `stipple front RUN`")
      ->required();
  cmd->add_option("--format", opt->formats,
                  "schedule, obj, header, asm, llvm or cpp (portable C++17 source); repeat it or "
                  "give a list (obj,header)")
      ->required()
      ->delimiter(',')
      ->check(CLI::IsMember({"schedule", "obj", "header", "asm", "llvm", "cpp"}));
  cmd->add_option("-o,--output", opt->output,
                  "the file for one format; for several, the base name each extension goes on "
                  "(default: PIPELINE_runR_vN)");
  cmd->add_option("--db", opt->db, "the SQLite database")->capture_default_str();
  cmd->add_option("--function-name", opt->function_name,
                  "the exported C function (default: the pipeline's name)");
  cmd->add_option("--target", opt->target,
                  "host, x86-64, x86-64-v2, x86-64-v3, x86-64-v4 or aarch64")
      ->check(CLI::IsMember(codegen::aot_target_names()))
      ->capture_default_str();
  return [opt]() { return run_export(*opt); };
}

}  // namespace stipple::cli
