// `stipple nightly add|list|remove|run`: nightly regression tuning (issue #29). The registry
// holds what a user ships — a pipeline, the variant of it they ship (a schedule file, or a
// point of a run's front), the photos it is measured on and the targets it ships to — beside
// the runs; `nightly run` re-tunes, re-measures and re-checks each registration on this host
// (search/nightly/night.h), keeps the history, and reports (search/nightly/report.h).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "client/cache_dir.h"
#include "client/cluster_cli.h"
#include "client/cluster_evaluator.h"
#include "client/commands.h"
#include "client/front_table.h"
#include "client/load_pipeline.h"
#include "client/open_database.h"
#include "client/output_file.h"
#include "client/photo_args.h"
#include "compiler_core/codegen/jit.h"
#include "compiler_core/image/image_io.h"
#include "compiler_core/image/resize.h"
#include "compiler_core/ir/error.h"
#include "compiler_core/schedule/schedule_checker.h"
#include "compiler_core/support/files.h"
#include "compiler_core/support/host_probe.h"
#include "proto/capabilities_codec.h"
#include "search/nightly/html_report.h"
#include "search/nightly/night.h"
#include "search/nightly/report.h"
#include "search/tuning_session.h"
#include "storage/database.h"
#include "workers/benchmark_lock.h"
#include "workers/local_evaluator.h"

namespace stipple::cli {
namespace {

namespace fs = std::filesystem;

struct NightlyAddOptions {
  std::string pipeline, name, schedule, variant, size, db = "stipple.db";
  std::vector<std::string> images, test_images, targets;
  bool replace = false;
};

struct NightlyRunOptions {
  std::vector<std::string> only;
  int64_t budget = 20;
  int samples = 10, max_samples = 30, runs = 3, threads = 0;
  double min_change = 0.05, alpha = 0.01, deadline = 60, min_timed_ms = 50;
  std::string json, html, cache, host, target, db = "stipple.db";
  std::string benchmark_lock = workers::kDefaultBenchmarkLock;
  bool no_record = false;
  ConnectionArgs connection;  // with --coordinator: measure on the cluster's workers
  bool cluster() const { return !connection.coordinator.empty(); }
};

std::string not_registered(const std::string& name, const std::string& db) {
  return "nothing is registered as '" + name + "' in " + db + " (`stipple nightly list`)";
}

// The registrations named by --only (all without it); UserError for a name not registered.
std::vector<storage::NightlyRecord> select_registrations(storage::Database& db,
                                                         const std::vector<std::string>& only,
                                                         const std::string& db_path) {
  std::vector<storage::NightlyRecord> regs = db.list_nightly();
  for (const std::string& name : only) {
    if (std::none_of(regs.begin(), regs.end(),
                     [&](const storage::NightlyRecord& r) { return r.name == name; })) {
      throw UserError("--only: " + not_registered(name, db_path));
    }
  }
  if (!only.empty()) {
    std::erase_if(regs, [&](const storage::NightlyRecord& r) {
      return std::find(only.begin(), only.end(), r.name) == only.end();
    });
  }
  return regs;
}

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
  return "'" + name + "' is registered already in " + db + " (--replace to change what it ships)";
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
  const bool exists = db->find_nightly(name).has_value();
  if (exists && !opt.replace) throw UserError(already_registered(name, opt.db));
  if (!exists && opt.replace) {
    throw UserError("--replace: " + not_registered(name, opt.db));
  }
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
    r.schedule = search::front_variant(*db, run_id, variant).key.schedule;
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
  if (opt.replace && !from_run) {
    // A schedule shipped in place of another: the front the last re-tune found stays the
    // one the nights re-measure, unless the pipeline changed under it.
    const std::optional<storage::NightlyRecord> before = db->find_nightly(name);
    if (before && before->pipeline_id == r.pipeline_id) r.run_id = before->run_id;
  }
  if (opt.replace) {
    if (!db->replace_nightly(r)) throw UserError("'" + name + "' was removed meanwhile");
  } else if (!db->add_nightly(r)) {
    throw UserError(already_registered(name, opt.db));  // lost a race
  }
  std::set<std::string> all(photos.train.begin(), photos.train.end());  // one may be both
  all.insert(photos.test.begin(), photos.test.end());
  std::cout << (opt.replace ? "registered again " : "registered ") << name << ": " << p.name << ", "
            << r.variant << ", " << all.size() << (all.size() == 1 ? " photo" : " photos")
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
  if (!db->remove_nightly(name)) throw UserError(not_registered(name, db_path));
  std::cout << "removed " << name
            << " from nightly tuning with its nights' history; its runs and their measurements "
               "stay\n";
  return kExitOk;
}

struct AcceptOptions {
  std::string name, host, target, db = "stipple.db";
};

int run_accept(const AcceptOptions& opt) {
  auto db = open_database(opt.db, DatabaseUse::Read);
  const std::optional<storage::NightlyRecord> reg = db->find_nightly(opt.name);
  if (!reg) throw UserError(not_registered(opt.name, opt.db));
  const std::string target = opt.target.empty() ? this_host_target() : opt.target;
  const std::string host = opt.host.empty() ? host_name() : opt.host;
  const std::optional<int64_t> night = db->accept_last_night(reg->id, target, host);
  if (!night) {
    throw UserError("the last night of '" + opt.name + "' on " + host + " (" + target +
                    ") did not regress: nothing to accept");
  }
  std::cout << "accepted night " << *night << " of " << opt.name << " on " << host
            << ": the next nights there compare with it\n";
  return kExitOk;
}

// The registration's photos by split as the nights measure them: as they are, or rendered
// at the registered size once into the cache (named by the photo's registered SHA-256 and
// the size, so every night reads the same files and the store's measurements of them are
// found again).
std::map<std::string, std::vector<std::string>> night_photos(
    const std::vector<storage::ImageRecord>& photos, const storage::NightlyRecord& reg,
    const std::string& cache) {
  std::map<std::string, std::vector<std::string>> by_split;
  const fs::path folder = fs::path(cache) / "nightly-photos";
  if (reg.width > 0) fs::create_directories(folder);
  for (const storage::ImageRecord& im : photos) {
    std::string path = im.path;
    if (reg.width > 0) {
      const fs::path sized = folder / (im.sha256 + "-" + std::to_string(reg.width) + "x" +
                                       std::to_string(reg.height) + ".png");
      if (!fs::exists(sized)) {
        // Written aside, then renamed: a night killed meanwhile leaves no half a photo
        // that every later night would read.
        const std::string partial = sized.string() + ".partial-" + std::to_string(getpid());
        write_png(partial, resize_photo(read_image(im.path), reg.width, reg.height));
        fs::rename(partial, sized);
      }
      path = sized.string();
    }
    by_split[im.split].push_back(path);
  }
  return by_split;
}

// The command that measures a registration again as its night did, without recording a
// night (which could become the next night's baseline).
std::string reproduce_command(const std::string& name, const NightlyRunOptions& opt,
                              const std::string& target, const std::string& host) {
  std::string c = "stipple nightly run --only " + name + " --no-record --budget 0" + " --samples " +
                  std::to_string(opt.samples) + " --max-samples " +
                  std::to_string(opt.max_samples) + " --runs " + std::to_string(opt.runs) +
                  " --min-time " + fmt::format("{:g}", opt.min_timed_ms) + " --min-change " +
                  fmt::format("{:g}", opt.min_change) + " --alpha " +
                  fmt::format("{:g}", opt.alpha) + " --deadline " +
                  fmt::format("{:g}", opt.deadline);
  if (opt.threads > 0) c += " --threads " + std::to_string(opt.threads);
  if (opt.cluster()) {
    c += " --coordinator " + opt.connection.coordinator;
    if (!opt.connection.token_file.empty()) c += " --token-file " + opt.connection.token_file;
    if (!opt.connection.tls.ca.empty()) c += " --tls-ca " + opt.connection.tls.ca;
    if (!opt.connection.tls.cert.empty()) c += " --tls-cert " + opt.connection.tls.cert;
    if (!opt.connection.tls.key.empty()) c += " --tls-key " + opt.connection.tls.key;
    c += " --target " + target + " --host " + host;
  } else if (!opt.host.empty()) {
    c += " --host " + opt.host;
  }
  if (!opt.cache.empty()) c += " --cache " + opt.cache;
  return c + " --db " + opt.db;
}

// An output file's folder must be there before hours of measuring, not after.
void check_output_path(const std::string& path, const std::string& option) {
  if (path.empty() || is_standard_output(path)) return;
  const fs::path folder = fs::absolute(path).parent_path();
  if (!fs::is_directory(folder)) {
    throw UserError(option + ": no folder " + folder.string() + " to write " + path + " in");
  }
}

// The host of the cluster a registration's night on `target` is timed on: --host, else the
// host of its last night on the target if a worker there is live (its baseline is there),
// else the first live one by name. Empty: none is live.
std::string night_host(storage::Database& db, const storage::NightlyRecord& reg,
                       const std::string& target, const std::set<std::string>& live,
                       const std::string& asked) {
  if (!asked.empty()) return live.count(asked) ? asked : "";
  const std::vector<storage::NightRecord> nights = db.list_nights(reg.id);
  const storage::NightRecord* last = nullptr;
  for (const storage::NightRecord& n : nights) {
    if (n.target == target && live.count(n.host) && (!last || n.id > last->id)) last = &n;
  }
  if (last) return last->host;
  return live.empty() ? "" : *live.begin();
}

int run_nights(const NightlyRunOptions& opt) {
  if (opt.samples < 4 || opt.max_samples < opt.samples) {
    throw UserError(
        "--samples takes at least 4 (the test's minimum), and --max-samples at least "
        "--samples");
  }
  if (is_standard_output(opt.json) && is_standard_output(opt.html)) {
    throw UserError("--json and --html cannot both go to standard output");
  }
  check_output_path(opt.json, "--json");
  check_output_path(opt.html, "--html");
  auto db = open_database(opt.db, DatabaseUse::Read);
  std::vector<storage::NightlyRecord> regs = select_registrations(*db, opt.only, opt.db);
  if (regs.empty()) {
    throw UserError("no pipelines registered for nightly tuning in " + opt.db +
                    " (`stipple nightly add`)");
  }
  const std::string here = this_host_target();
  if (!opt.target.empty() &&
      std::none_of(regs.begin(), regs.end(), [&](const storage::NightlyRecord& r) {
        return std::find(r.targets.begin(), r.targets.end(), opt.target) != r.targets.end();
      })) {
    throw UserError("--target " + opt.target + ": no registration" +
                    (opt.only.empty() ? "" : " named by --only") +
                    " ships to it (`stipple nightly list` shows their targets)");
  }
  if (!opt.target.empty() && !opt.cluster() && opt.target != here) {
    throw UserError("--target " + opt.target + ": this host is " + here +
                    "; measure another target on the cluster (--coordinator)");
  }
  std::string lock = opt.benchmark_lock == "none" ? "" : opt.benchmark_lock;
  if (!opt.cluster() && !lock.empty()) workers::require_benchmark_lock(lock, "--benchmark-lock");

  // On the cluster: the live workers' hosts by target, asked once (a night of a target
  // whose workers are gone fails then, with the coordinator's reason).
  std::unique_ptr<client::CoordinatorClient> coordinator;
  std::map<std::string, std::map<std::string, proto::Capabilities>> live;  // target, host
  if (opt.cluster()) {
    coordinator = std::make_unique<client::CoordinatorClient>(client_options(opt.connection));
    // A refused token or address is bad input (exit 2); an unreachable coordinator a
    // failure (exit 1), before any night.
    with_coordinator([&] {
      std::vector<proto::WorkerStatus> workers;
      try {
        workers = coordinator->workers();
      } catch (const client::RpcError& e) {
        if (e.bad_input()) throw;
        throw std::runtime_error("cannot reach the coordinator at " + opt.connection.coordinator +
                                 " (" + e.what() + ")");
      }
      for (const proto::WorkerStatus& w : workers) {
        if (!w.lost()) live[w.capabilities().target()][w.capabilities().host()] = w.capabilities();
      }
      return 0;
    });
  }

  // With JSON or the page on standard output, the text report goes to standard error.
  std::ostream& text =
      is_standard_output(opt.json) || is_standard_output(opt.html) ? std::cerr : std::cout;
  int measured = 0;
  nlohmann::json report = {{"nights", nlohmann::json::array()},
                           {"skipped", nlohmann::json::array()}};
  bool regressed = false, failed = false;
  auto fail = [&](const storage::NightlyRecord& reg, const std::string& target,
                  const std::string& why) {
    text << reg.name << " (" << target << "): FAILED: " << why << "\n";
    report["nights"].push_back(
        {{"registration", {{"name", reg.name}}}, {"target", target}, {"failed", why}});
    failed = true;
  };
  for (const storage::NightlyRecord& reg : regs) {
    for (const std::string& target : reg.targets) {
      if (!opt.target.empty() && target != opt.target) continue;
      if (!opt.cluster() && target != here) {
        text << reg.name << ": skipped target " << target << " (this host is " << here
             << "; run it on a host of that target, or on the cluster with --coordinator)\n";
        report["skipped"].push_back({{"name", reg.name}, {"target", target}});
        continue;
      }
      std::string host = opt.host;
      // The build that measures: this one, or on the cluster the worker's (as it says).
      std::string stipple_version = STIPPLE_VERSION;
      std::string code_generator = codegen::code_generator_version();
      std::optional<search::MachineModel> machine;  // the re-tune's: this host's unless set
      if (opt.cluster()) {
        std::set<std::string> hosts;
        for (const auto& [name, caps] : live[target]) hosts.insert(name);
        host = night_host(*db, reg, target, hosts, opt.host);
        if (host.empty()) {
          // A target the pipeline ships to that no worker measured tonight is not a pass.
          fail(reg, target,
               "no live worker of target " + target +
                   (opt.host.empty() ? "" : " on host " + opt.host) + " is registered with " +
                   opt.connection.coordinator + " (`stipple workers`)");
          continue;
        }
        const proto::Capabilities& caps = live[target][host];
        if (!caps.stipple_version().empty()) stipple_version = caps.stipple_version();
        if (!caps.code_generator().empty()) code_generator = caps.code_generator();
        machine = search::MachineModel::of_worker(from_proto(caps));
      }
      const storage::PipelineRecord stored = db->pipeline(reg.pipeline_id).value();
      const std::string file = stored.name + ".stp";
      try {
        const Pipeline p = compile_pipeline_reporting(stored.source, file);
        search::nightly::NightOptions no;
        no.samples = opt.samples;
        no.max_samples = opt.max_samples;
        no.budget = opt.budget;
        no.change.min_change = opt.min_change;
        no.change.alpha = opt.alpha;
        no.stipple_version = stipple_version;
        no.host = host;
        no.machine = machine;
        no.record = !opt.no_record;
        no.llvm_version = code_generator;
        const auto photos =
            night_photos(search::nightly::registration_photos(*db, reg), reg,
                         opt.cache.empty() ? default_cache_dir("nightly run") : opt.cache);
        no.tune.pipeline_file = file;
        no.tune.train_images =
            photos.count("train") ? photos.at("train") : std::vector<std::string>{};
        no.tune.test_images = photos.count("test") ? photos.at("test") : no.tune.train_images;
        no.tune.runs = opt.runs;
        no.tune.threads = opt.threads;
        no.tune.deadline_s = opt.deadline;

        workers::EvaluationSetup setup;
        setup.pipeline_source = stored.source;
        setup.pipeline_file = file;
        setup.images = {{"train", no.tune.train_images}, {"test", no.tune.test_images}};
        setup.runs = opt.runs;
        setup.threads = opt.threads;
        setup.output_digests = true;
        setup.min_timed_ms = opt.min_timed_ms;
        std::unique_ptr<workers::Evaluator> evaluator;
        if (opt.cluster()) {
          client::ClusterEvaluatorOptions co;
          co.target = target;
          co.host = host;
          co.job_seconds = opt.deadline;
          evaluator = std::make_unique<client::ClusterEvaluator>(*coordinator, setup, co);
          spdlog::info("{}: measuring target {} on host {} of the cluster", reg.name, target, host);
        } else {
          workers::LocalEvaluatorOptions eo;
          eo.deadline_seconds = opt.deadline;
          eo.benchmark_lock = lock;
          evaluator = std::make_unique<workers::LocalEvaluator>(setup, eo);
        }
        const search::nightly::NightOutcome night =
            search::nightly::run_night(*db, reg, p, stored.source, *evaluator, no,
                                       [](const std::string& what) { spdlog::info("{}", what); });
        const std::string again = reproduce_command(reg.name, opt, target, night.night.host);
        text << search::nightly::text_report(reg, night, again);
        report["nights"].push_back(search::nightly::json_report(reg, night, again));
        regressed |= night.regressed();
        ++measured;
      } catch (const std::exception& e) {
        // One registration that cannot be measured (a photo gone, a stored pipeline
        // tonight's Stipple refuses, an evaluator that cannot start, a coordinator that
        // cannot be reached) is the night's failure, exit 1, and does not stop the others'
        // nights. Bad input on the command line was refused above.
        fail(reg, target, e.what());
      }
    }
  }
  if (measured == 0 && !failed) {
    // A host of no registered target (a pod scheduled on the wrong node) must not pass.
    text << "nothing measured: no registration ships to "
         << (opt.target.empty() ? "this host's target " + here : "target " + opt.target) << "\n";
    failed = true;
  }
  report["regressed"] = regressed;
  report["failed"] = failed;
  if (!opt.json.empty()) write_output_file(opt.json, report.dump(2) + "\n");
  if (!opt.html.empty()) write_output_file(opt.html, search::nightly::html_report(*db, regs));
  return regressed || failed ? kExitFailure : kExitOk;
}

int run_report(const std::string& db_path, const std::vector<std::string>& only,
               const std::string& html) {
  auto db = open_database(db_path, DatabaseUse::Read);
  const std::vector<storage::NightlyRecord> regs = select_registrations(*db, only, db_path);
  write_output_file(html, search::nightly::html_report(*db, regs));
  if (html != "-") std::cout << "wrote " << html << "\n";
  return kExitOk;
}

}  // namespace

CommandRunner add_nightly_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "nightly",
      "Nightly regression tuning: register pipelines (add, list, remove), re-tune, "
      "re-measure and re-check them each night (run), accept a regression (accept), show the "
      "history (report)");
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
  add->add_flag("--replace", add_opt->replace,
                "change what a registration ships, measures or targets; its history stays "
                "(the next night compares the new shipped variant with the old)");
  add->add_option("--db", add_opt->db, "the SQLite database")->capture_default_str();

  CLI::App* list = cmd->add_subcommand("list", "List the registered pipelines");
  list->add_option("--db", *db_path, "the SQLite database")->capture_default_str();

  CLI::App* remove = cmd->add_subcommand(
      "remove",
      "Remove a registration with its nights' history (its runs and their measurements stay)");
  remove->add_option("NAME", *remove_name, "the registration's name (`stipple nightly list`)")
      ->required();
  remove->add_option("--db", *db_path, "the SQLite database")->capture_default_str();

  auto accept_opt = std::make_shared<AcceptOptions>();
  CLI::App* accept = cmd->add_subcommand(
      "accept",
      "Accept the last night's regression on a host (a slower variant shipped on purpose, an "
      "output that changed for the better): the next nights there compare with that night");
  accept->add_option("NAME", accept_opt->name, "the registration's name")->required();
  accept->add_option("--host", accept_opt->host, "the host of the night (default: this one)");
  accept->add_option("--target", accept_opt->target,
                     "the target key of the night (default: this host's)");
  accept->add_option("--db", accept_opt->db, "the SQLite database")->capture_default_str();

  auto report_only = std::make_shared<std::vector<std::string>>();
  auto report_html = std::make_shared<std::string>();
  CLI::App* report = cmd->add_subcommand(
      "report",
      "Write the nightly history as a static HTML page (plots of each variant's time "
      "over the nights, the front against the baseline's, the last night's table)");
  report->add_option("--html", *report_html, "the page to write ('-': stdout)")->required();
  report->add_option("--only", *report_only, "a registration to show (repeatable; default: all)");
  report->add_option("--db", *db_path, "the SQLite database")->capture_default_str();

  auto run_opt = std::make_shared<NightlyRunOptions>();
  CLI::App* run = cmd->add_subcommand(
      "run",
      "One night: for each registration on this host's target (with --coordinator: on each "
      "of its targets, on a worker of that target), re-tune it, re-measure the shipped "
      "variant and its front against the last night on the same host, re-check exact "
      "outputs, and report. Exit 0: nothing regressed; 1: a regression or a failure; 2: bad "
      "input");
  run->add_option("--only", run_opt->only, "a registration to run (repeatable; default: all)");
  run->add_option("--budget", run_opt->budget,
                  "re-tune evaluations past the warm start (the shipped variant and the stored "
                  "front); 0: re-measure only")
      ->check(CLI::Range(int64_t(0), int64_t(1000000)))
      ->capture_default_str();
  run->add_option("--samples", run_opt->samples, "timing rounds of every variant first")
      ->check(CLI::Range(4, 1000))
      ->capture_default_str();
  run->add_option("--max-samples", run_opt->max_samples,
                  "timing rounds at most while a variant's answer is unknown (a change found is "
                  "confirmed by as many rounds again)")
      ->check(CLI::Range(4, 10000))
      ->capture_default_str();
  run->add_option("--runs", run_opt->runs,
                  "timed runs per photo in a round at least (the fastest is the round's sample)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  run->add_option("--min-time", run_opt->min_timed_ms,
                  "ms of timed runs at least per photo in a round (more runs of a fast variant)")
      ->check(CLI::Range(0.0, 60000.0))
      ->capture_default_str();
  run->add_option("--min-change", run_opt->min_change,
                  "the smallest change of time reported, relative (0.05: 5%)")
      ->check(CLI::Range(0.001, 10.0))
      ->capture_default_str();
  run->add_option("--alpha", run_opt->alpha,
                  "the tests' level: the chance of calling noise a change")
      ->check(CLI::Range(0.0001, 0.2))
      ->capture_default_str();
  run->add_option("--threads", run_opt->threads,
                  "threads for parallel loops (default: one per core)")
      ->check(CLI::Range(0, 1024));
  run->add_option("--deadline", run_opt->deadline,
                  "seconds per candidate (compile and all runs); on the cluster the workers' "
                  "own --deadline holds, and this bounds how long a batch is waited for")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run->add_option("--json", run_opt->json, "write the report as JSON to this file ('-': stdout)");
  run->add_option("--html", run_opt->html,
                  "write the history as a static HTML page with plots to this file");
  run->add_option("--cache", run_opt->cache,
                  "where photos rendered at a registered --size are kept (default: "
                  "$XDG_CACHE_HOME/stipple, else ~/.cache/stipple)");
  run->add_option("--host", run_opt->host,
                  "the host the nights are recorded for (default: this host's name; on "
                  "Kubernetes the node's, as a pod's name changes every night); with "
                  "--coordinator: the workers' host to measure on");
  run->add_flag("--no-record", run_opt->no_record,
                "measure and report, but store no night (nor re-tune): to look again without "
                "making a new baseline");
  run->add_option("--target", run_opt->target,
                  "only the nights of this target key (`stipple nightly list` shows them)");
  add_connection_options(run, run_opt->connection);
  run->get_option("--coordinator")
      ->description(
          "measure on the cluster's workers, HOST:PORT of the coordinator: each registered "
          "target's night on one host of that target (the host of its last night when "
          "live, or --host), this database kept here; without it: on this host");
  run->get_option("--timeout")->description("seconds to wait for each call but measurements");
  run->add_option("--benchmark-lock", run_opt->benchmark_lock,
                  "the host's benchmark lock, shared with workers and tunes ('none': none)")
      ->capture_default_str();
  run->add_option("--db", run_opt->db, "the SQLite database")->capture_default_str();

  return [add, list, run, accept, report, add_opt, run_opt, db_path, remove_name, accept_opt,
          report_only, report_html]() {
    if (report->parsed()) return run_report(*db_path, *report_only, *report_html);
    if (add->parsed()) return run_add(*add_opt);
    if (list->parsed()) return run_list(*db_path);
    if (run->parsed()) return run_nights(*run_opt);
    if (accept->parsed()) return run_accept(*accept_opt);
    return run_remove(*db_path, *remove_name);
  };
}

}  // namespace stipple::cli
