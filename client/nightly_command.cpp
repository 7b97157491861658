// `stipple nightly add|list|remove`: the registry of pipelines for nightly regression tuning
// (issue #29): what a user ships — a pipeline, the variant of it they ship (a schedule file,
// or a point of a run's front), the photos it is measured on and the targets it ships to —
// kept in the database beside the runs. `nightly run`, which re-measures and re-tunes what
// is registered, is not built yet.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "client/commands.h"
#include "client/front_table.h"
#include "client/load_pipeline.h"
#include "client/open_database.h"
#include "client/photo_args.h"
#include "compiler_core/codegen/jit.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/support/files.h"
#include "compiler_core/support/host_probe.h"
#include "search/tuning_session.h"
#include "storage/database.h"

namespace stipple::cli {
namespace {

namespace fs = std::filesystem;

struct NightlyAddOptions {
  std::string pipeline, name, schedule, variant, size, db = "stipple.db";
  std::vector<std::string> images, test_images, targets;
};

// "RUN:N": a run and the number of a variant of its front (`stipple front RUN`).
std::pair<int64_t, int> parse_variant(const std::string& text) {
  long long run = 0;
  int variant = 0;
  char rest = 0;
  if (std::sscanf(text.c_str(), "%lld:%d%c", &run, &variant, &rest) != 2 || run < 1 ||
      variant < 0) {
    throw UserError(
        "--variant takes RUN:N, a run and the number of a variant in `stipple front "
        "RUN` (e.g. 3:0), not '" +
        text + "'");
  }
  return {run, variant};
}

// "WxH", 16 to 8192 each.
std::pair<int, int> parse_size(const std::string& text) {
  int w = 0, h = 0;
  char rest = 0;
  if (std::sscanf(text.c_str(), "%dx%d%c", &w, &h, &rest) != 2 || w < 16 || h < 16 || w > 8192 ||
      h > 8192) {
    throw UserError("--size takes WxH, 16 to 8192 each (e.g. 1920x1080), not '" + text + "'");
  }
  return {w, h};
}

std::string already_registered(const std::string& name, const std::string& db) {
  return "'" + name + "' is registered already in " + db + " (`stipple nightly remove " + name +
         "` first)";
}

std::string this_host_target() {
  const codegen::HostCpu host = codegen::jit_host_cpu();
  return host_target_key(host.cpu, host.features);
}

// A target key as host_probe.h and the GPU probe write them: letters, digits, '_' and '.',
// in parts joined by '-' (x86_64-znver4-1a2b3c4d, cuda-sm_90-13).
bool is_target_key(const std::string& t) {
  if (t.find('-') == std::string::npos || t.front() == '-' || t.back() == '-') return false;
  return std::all_of(t.begin(), t.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

int run_add(const NightlyAddOptions& opt) {
  // Everything is checked before the database is opened: the pipeline, the name, the
  // schedule or the variant's form, the targets, the size and the photos.
  const std::string source = read_text_file(opt.pipeline, "pipeline");
  const Pipeline p = compile_pipeline_reporting(source, opt.pipeline);
  const std::string name = opt.name.empty() ? p.name : opt.name;
  if (name.empty() || name.find_first_of(" \t\n") != std::string::npos) {
    throw UserError("--name takes a name without spaces, not '" + name + "'");
  }
  if (opt.schedule.empty() == opt.variant.empty()) {
    throw UserError("nightly add: give the variant that ships, --schedule FILE or --variant RUN:N");
  }
  storage::NightlyRecord r;
  r.name = name;
  std::optional<std::pair<int64_t, int>> from_run;
  if (!opt.schedule.empty()) {
    r.schedule = read_text_file(opt.schedule, "schedule");
    compile_schedule(r.schedule, opt.schedule, p);  // a bad one is bad input
    r.variant = "schedule " + fs::path(opt.schedule).filename().string();
  } else {
    from_run = parse_variant(opt.variant);
  }
  std::set<std::string> targets(opt.targets.begin(), opt.targets.end());
  for (const std::string& t : targets) {
    if (!is_target_key(t)) {
      throw UserError(
          "--target takes a target key, parts of letters, digits and '_' joined by "
          "'-' (`stipple workers` lists the cluster's), not '" +
          t + "'");
    }
  }
  std::tie(r.width, r.height) = opt.size.empty() ? std::pair{0, 0} : parse_size(opt.size);
  const PhotoSets photos = choose_photos(opt.images, opt.test_images);

  // A variant of a run needs the database that has the run: it is not created.
  auto db = open_database(opt.db, from_run ? DatabaseUse::Read : DatabaseUse::Write);
  if (db->find_nightly(name)) throw UserError(already_registered(name, opt.db));
  if (from_run) {
    const auto [run_id, variant] = *from_run;
    const std::optional<storage::RunRecord> run = db->find_run(run_id);
    if (!run) throw UserError("no run " + std::to_string(run_id) + " in " + opt.db);
    const storage::PipelineRecord tuned = db->pipeline(run->pipeline_id).value();
    if (tuned.ir_hash != search::pipeline_ir_hash(p)) {
      throw UserError("run " + std::to_string(run_id) + " tuned " + tuned.name + ", not " +
                      opt.pipeline + " (or another version of it)");
    }
    // A front still being found would move under the variant's number.
    if (run->state != "done") {
      throw UserError("run " + std::to_string(run_id) + " is " + storage::run_state_label(*run) +
                      ", not done: its front may still change (register a variant of a "
                      "finished run)");
    }
    r.schedule = front_variant(*db, run_id, variant).key.schedule;
    r.variant = "run " + std::to_string(run_id) + " variant " + std::to_string(variant);
    r.run_id = r.source_run = run_id;
    // By default it ships to the target it was tuned on.
    if (targets.empty()) targets.insert(run->target);
  }
  if (targets.empty()) targets.insert(this_host_target());
  r.targets.assign(targets.begin(), targets.end());
  // The pipeline's and the photos' rows are keyed by content and shared with runs: if the
  // registration itself fails after them, they stay, harmless and reused.
  r.dataset_id = search::store_photos(*db, photos.train, photos.test);
  r.pipeline_id = search::store_pipeline(*db, p, source);
  if (!db->add_nightly(r)) throw UserError(already_registered(name, opt.db));  // lost a race
  std::set<std::string> all(photos.train.begin(), photos.train.end());         // one may be both
  all.insert(photos.test.begin(), photos.test.end());
  std::cout << "registered " << name << ": " << p.name << ", " << r.variant << ", " << all.size()
            << (all.size() == 1 ? " photo" : " photos")
            << (r.width > 0 ? " at " + opt.size : std::string()) << ", targets";
  for (const std::string& t : r.targets) std::cout << " " << t;
  std::cout << "\n";
  return kExitOk;
}

int run_list(const std::string& db_path) {
  auto db = open_database(db_path, DatabaseUse::Read);
  const std::vector<storage::NightlyRecord> all = db->list_nightly();
  if (all.empty()) {
    std::cout << "no pipelines registered for nightly tuning in " << db_path << "\n";
    return kExitOk;
  }
  char line[512];
  std::snprintf(line, sizeof line, "%-20s %-20s %-30s %6s %-10s %-20s  %s\n", "name", "pipeline",
                "variant", "photos", "size", "registered (UTC)", "targets");
  std::cout << line;
  for (const storage::NightlyRecord& r : all) {
    const std::string size =
        r.width > 0 ? std::to_string(r.width) + "x" + std::to_string(r.height) : "as is";
    std::string variant = r.variant;
    if (r.source_run && !r.run_id) variant += " (run deleted)";
    std::string targets;
    for (const std::string& t : r.targets) targets += (targets.empty() ? "" : " ") + t;
    std::snprintf(line, sizeof line, "%-20s %-20s %-30s %6lld %-10s %-20s  %s\n", r.name.c_str(),
                  r.pipeline_name.c_str(), variant.c_str(), static_cast<long long>(r.images),
                  size.c_str(), r.created_at.c_str(), targets.c_str());
    std::cout << line;
  }
  return kExitOk;
}

int run_remove(const std::string& db_path, const std::string& name) {
  auto db = open_database(db_path, DatabaseUse::Read);
  if (!db->remove_nightly(name)) {
    throw UserError("nothing is registered as '" + name + "' in " + db_path +
                    " (`stipple nightly list`)");
  }
  std::cout << "removed " << name << " from nightly tuning; its runs and measurements stay\n";
  return kExitOk;
}

}  // namespace

CommandRunner add_nightly_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "nightly",
      "Register pipelines for nightly regression tuning: add, list, remove (the nightly run "
      "itself is not built yet)");
  cmd->require_subcommand(1);
  auto add_opt = std::make_shared<NightlyAddOptions>();
  auto db_path = std::make_shared<std::string>("stipple.db");
  auto remove_name = std::make_shared<std::string>();

  CLI::App* add = cmd->add_subcommand(
      "add", "Register a pipeline: the variant it ships, its photos and its targets");
  add->add_option("FILE", add_opt->pipeline, "the .stp pipeline")->required();
  add->add_option("--name", add_opt->name,
                  "what the registration is called (default: the pipeline's name)");
  auto* schedule = add->add_option("--schedule", add_opt->schedule,
                                   "the variant that ships: a .sched file (its hand schedule)");
  add->add_option("--variant", add_opt->variant,
                  "the variant that ships: RUN:N, variant N of a finished run's front (`stipple "
                  "front RUN`); its targets default to the run's")
      ->excludes(schedule);
  add->add_option("--images", add_opt->images,
                  "photos to measure on (files or folders; repeatable). Every third is held out "
                  "for the test unless --test-images is given. Default: the bundled photos");
  add->add_option("--test-images", add_opt->test_images, "the held-out photos (files or folders)");
  add->add_option("--size", add_opt->size,
                  "WxH: each photo rendered at this size first (default: as it is)");
  add->add_option("--target", add_opt->targets,
                  "a target key it ships to (repeatable; `stipple workers` lists the cluster's). "
                  "Default: this host's");
  add->add_option("--db", add_opt->db, "the SQLite database")->capture_default_str();

  CLI::App* list = cmd->add_subcommand("list", "List the registered pipelines");
  list->add_option("--db", *db_path, "the SQLite database")->capture_default_str();

  CLI::App* remove = cmd->add_subcommand(
      "remove", "Remove a registration (its runs and measurements stay in the database)");
  remove->add_option("NAME", *remove_name, "the registration's name (`stipple nightly list`)")
      ->required();
  remove->add_option("--db", *db_path, "the SQLite database")->capture_default_str();

  return [add, list, add_opt, db_path, remove_name]() {
    if (add->parsed()) return run_add(*add_opt);
    if (list->parsed()) return run_list(*db_path);
    return run_remove(*db_path, *remove_name);
  };
}

}  // namespace stipple::cli
