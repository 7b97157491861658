#include "search/coordinator/remote_evaluator.h"

#include <cstdio>
#include <optional>
#include <unordered_set>

#include "compiler_core/support/content_hash.h"

namespace stipple::coordinator {

RemoteEvaluator::RemoteEvaluator(coordinator::WorkerPool& pool, std::string setup_id,
                                 int64_t run_id, std::string target)
    : pool_(pool), setup_id_(std::move(setup_id)), run_id_(run_id), target_(std::move(target)) {}

std::string RemoteEvaluator::job_id(int64_t run_id, const std::string& setup_id,
                                    const std::string& split, const std::string& schedule) {
  // 96 bits of the hash: ids stay short in logs, and a collision within one run's split
  // is out of reach.
  return std::to_string(run_id) + "/" + split + "/" +
         sha256_hex(setup_id + "\n" + schedule).substr(0, 24);
}

std::string RemoteEvaluator::job_key(const std::string& setup_id, const std::string& target,
                                     const std::string& split, const std::string& schedule,
                                     double give_up_ms) {
  // Each part on a line of its own (only the schedule may hold newlines, and it is last);
  // the give-up time exactly (a hexadecimal float).
  char give_up[32];
  std::snprintf(give_up, sizeof give_up, "%a", give_up_ms);
  return sha256_hex(setup_id + "\n" + target + "\n" + split + "\n" + give_up + "\n" + schedule);
}

std::vector<workers::EvaluationResult> RemoteEvaluator::evaluate(
    const std::vector<std::string>& schedules, const std::string& split, double give_up_ms) {
  if (schedules.empty()) return {};
  const std::string run = pool_run_id();
  std::vector<std::string> ids;
  std::vector<coordinator::PoolJob> jobs;
  std::unordered_set<std::string> seen;  // a schedule asked twice is one job
  for (const std::string& schedule : schedules) {
    ids.push_back(job_id(run_id_, setup_id_, split, schedule));
    if (!seen.insert(ids.back()).second) continue;
    coordinator::PoolJob job;
    job.id = ids.back();
    job.run_id = run;
    job.target = target_;
    job.split = split;
    job.schedule = schedule;
    job.give_up_ms = give_up_ms;
    job.key = job_key(setup_id_, target_, split, schedule, give_up_ms);
    jobs.push_back(std::move(job));
  }
  pool_.submit(run, jobs);
  coordinator::AwaitReply reply = pool_.await(ids, stop_);
  if (reply.status != coordinator::AwaitStatus::Complete) {
    throw EvaluationStopped("run " + run + ": evaluation stopped (" + to_string(reply.status) +
                            ") before its batch was measured");
  }
  std::vector<workers::EvaluationResult> out;
  std::string host;
  for (const std::optional<coordinator::JobResult>& r : reply.results) {
    out.push_back(r->result);
    out.back().shared = r->shared;
    if (host.empty())
      host = r->host;
    else if (host != r->host)
      host = "cluster";
  }
  host_ = host.empty() ? "cluster" : host;
  return out;
}

}  // namespace stipple::coordinator
