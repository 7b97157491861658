#include "search/coordinator/worker_pool.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace stipple::coordinator {
namespace {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;
using Duration = SteadyClock::duration;
using namespace std::chrono_literals;

/// `from + d` without overflowing: duration::max() means "no end".
TimePoint after(TimePoint from, Duration d) {
  if (d <= Duration::zero()) return from;
  if (d >= TimePoint::max() - from) return TimePoint::max();
  return from + d;
}

/// Blocks on `cv` until `until` (real time); max(): until notified.
void wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint until) {
  if (until == TimePoint::max())
    cv.wait(lock);
  else
    cv.wait_until(lock, until);
}

}  // namespace

const char* to_string(ReportOutcome outcome) {
  switch (outcome) {
    case ReportOutcome::Accepted: return "accepted";
    case ReportOutcome::Duplicate: return "duplicate";
    case ReportOutcome::UnknownJob: return "unknown job";
    case ReportOutcome::UnknownWorker: return "unknown worker";
    case ReportOutcome::NotLeased: return "not leased";
    case ReportOutcome::Mismatched: return "mismatched code results";
  }
  return "?";
}

const char* to_string(AwaitStatus status) {
  switch (status) {
    case AwaitStatus::Complete: return "complete";
    case AwaitStatus::Cancelled: return "cancelled";
    case AwaitStatus::TimedOut: return "timed out";
    case AwaitStatus::UnknownJob: return "unknown job";
  }
  return "?";
}

WorkerPool::WorkerPool(WorkerPoolOptions options, PoolClock clock)
    : options_(options), clock_(std::move(clock)) {
  if (!clock_) clock_ = [] { return SteadyClock::now(); };
}

WorkerPool::~WorkerPool() = default;

// ---- workers ----

std::string WorkerPool::register_worker(const HostCapabilities& capabilities) {
  std::lock_guard lock(mu_);
  TimePoint now = clock_();
  std::string id = "w";  // (not "w" + to_string: GCC 12 warns falsely, -Wrestrict)
  id += std::to_string(next_worker_++);
  Worker& w = workers_[id];
  w.info.id = id;
  w.info.capabilities = capabilities;
  w.info.registered = w.info.last_heard = now;
  worker_order_.push_back(id);
  return id;
}

bool WorkerPool::heartbeat(const std::string& worker_id) {
  std::lock_guard lock(mu_);
  TimePoint now = clock_();
  // Heard from first, so that its own silence does not count against it; then leases
  // already past their deadline end (a heartbeat does not bring them back).
  Worker* w = touch(worker_id, now);
  if (!w) return false;
  expire_locked(now);
  for (const std::string& id : w->leases) jobs_.at(id).deadline = now + options_.lease_duration;
  return true;
}

LeaseReply WorkerPool::lease(const std::string& worker_id, int max_jobs, Duration wait) {
  std::unique_lock lock(mu_);
  const TimePoint wait_end = after(SteadyClock::now(), wait);
  LeaseReply reply;
  Worker* w = nullptr;  // std::map nodes are stable and workers are never erased
  bool polling = false;
  for (;;) {
    TimePoint now = clock_();
    w = touch(worker_id, now);
    if (!w) {
      reply.unknown_worker = true;
      break;
    }
    TimePoint next_event = TimePoint::max();
    expire_locked(now, &next_event);
    if (shut_down_ || max_jobs <= 0) break;

    // Round-robin over the runs with queued jobs of this target, FIFO within each: the
    // jobs kept for this host first (they have no other taker), then the target's.
    for (const std::string& key :
         {queue_key(w->info.capabilities.target, w->info.capabilities.host),
          queue_key(w->info.capabilities.target, "")}) {
      auto q = queues_.find(key);
      while (q != queues_.end() && !q->second.rotation.empty() &&
             int(reply.leases.size()) < max_jobs) {
        TargetQueue& tq = q->second;
        std::string run = std::move(tq.rotation.front());
        tq.rotation.pop_front();
        auto& run_queue = tq.by_run.at(run);
        std::string id = std::move(run_queue.front());
        run_queue.pop_front();
        if (run_queue.empty())
          tq.by_run.erase(run);
        else
          tq.rotation.push_back(run);

        Job& job = jobs_.at(id);
        set_state(job, JobState::Leased);
        job.holder = worker_id;
        job.deadline = now + options_.lease_duration;
        if (std::find(job.lessees.begin(), job.lessees.end(), worker_id) == job.lessees.end())
          job.lessees.push_back(worker_id);
        w->leases.insert(id);
        reply.leases.push_back({job.job, job.deadline});
      }
    }
    if (!reply.leases.empty()) break;

    TimePoint real_now = SteadyClock::now();
    if (real_now >= wait_end) break;
    // Wake for new jobs (notified), at the end of the wait, or when a lease of another
    // worker may have ended (its job then becomes available here).
    TimePoint until = wait_end;
    // (At least 1 ms apart: a fake clock that stands still must not make this spin.)
    if (next_event != TimePoint::max())
      until = std::min(until, after(real_now, std::max<Duration>(next_event - now, 1ms)));
    if (!polling) {
      // A worker blocked here is in contact: it is not lost while it waits.
      polling = true;
      ++w->polling;
    }
    wait_until(jobs_cv_, lock, until);
  }
  if (polling) {
    --w->polling;
    touch(worker_id, clock_());
  }
  return reply;
}

ReportOutcome WorkerPool::report(const std::string& worker_id, const std::string& job_id,
                                 const workers::EvaluationResult& result, bool forgotten_lease,
                                 std::vector<workers::EvaluationResult> code_results) {
  std::lock_guard lock(mu_);
  TimePoint now = clock_();
  Worker* w = touch(worker_id, now);
  if (!w) return ReportOutcome::UnknownWorker;
  expire_locked(now);

  Job* job = find_job(job_id);
  if (!job || job->state == JobState::Cancelled) return ReportOutcome::UnknownJob;
  // Only a worker the job was leased to may measure it: another target's timings must
  // never enter the run's front. One whose lease a previous coordinator gave it is taken
  // at its word if it is of the job's target.
  const bool lessee =
      std::find(job->lessees.begin(), job->lessees.end(), worker_id) != job->lessees.end();
  const bool may_take = w->info.capabilities.target == job->job.target &&
                        (job->job.host.empty() || w->info.capabilities.host == job->job.host);
  if (!lessee && !(forgotten_lease && may_take)) {
    return ReportOutcome::NotLeased;
  }
  const bool parts_fit = job->job.code.empty() ? code_results.empty()
                                               : code_results.size() == job->job.code.size() ||
                                                     (code_results.empty() && !result.ok());
  if (!parts_fit) return ReportOutcome::Mismatched;
  if (job->state == JobState::Done) {
    ++counters_.duplicates;
    ++runs_.at(job->job.run_id).counters.duplicates;
    return ReportOutcome::Duplicate;
  }
  // First result wins, even from a lease that has expired: take the job out of the queue
  // or from the worker now holding it (whose report will be a duplicate).
  if (job->state == JobState::Queued) unqueue(*job);
  drop_lease(*job);
  job->result =
      JobResult{result, worker_id, w->info.capabilities.host, false, std::move(code_results)};
  set_state(*job, JobState::Done);
  share_result(*job);
  ++w->info.jobs_completed;
  results_cv_.notify_all();
  return ReportOutcome::Accepted;
}

// ---- runs ----

int WorkerPool::worker_gone(const std::string& worker_id) {
  std::lock_guard lock(mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return 0;
  Worker& w = it->second;
  w.info.lost = true;
  w.cancelled.clear();  // nobody is left to stop them
  std::vector<Job*> ended;
  for (const std::string& job_id : w.leases) ended.push_back(&jobs_.at(job_id));
  return requeue(std::move(ended));
}

std::vector<std::string> WorkerPool::take_cancelled(const std::string& worker_id) {
  std::lock_guard lock(mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return {};
  return std::exchange(it->second.cancelled, {});
}

int WorkerPool::give_back(const std::string& worker_id, const std::vector<std::string>& job_ids) {
  std::lock_guard lock(mu_);
  std::vector<Job*> back;
  for (const std::string& id : job_ids) {
    Job* job = find_job(id);
    if (job && job->state == JobState::Leased && job->holder == worker_id) back.push_back(job);
  }
  return requeue(std::move(back));
}

int WorkerPool::submit(const std::string& run_id, const std::vector<PoolJob>& jobs) {
  std::lock_guard lock(mu_);
  Run& run = runs_[run_id];
  int queued = 0;
  for (const PoolJob& pj : jobs) {
    if (pj.id.empty()) throw std::invalid_argument("WorkerPool::submit: a job without an id");
    auto [it, inserted] = jobs_.try_emplace(pj.id);
    if (!inserted) continue;  // its result stands, or it is queued, leased or cancelled
    Job& job = it->second;
    job.job = pj;
    job.job.run_id = run_id;
    job.seq = next_seq_++;
    run.jobs.insert(pj.id);
    if (run.cancelled) {
      job.state = JobState::Cancelled;
      continue;
    }
    job.state = JobState::Cancelled;  // counted by set_state from "nowhere"
    // Another job of the key is measured for this one, or was.
    auto leader_id = pj.key.empty() ? leaders_.end() : leaders_.find(pj.key);
    if (leader_id != leaders_.end()) {
      Job& leader = jobs_.at(leader_id->second);
      job.leader = leader.job.id;
      leader.followers.push_back(pj.id);
      set_state(job, JobState::Following);
      if (leader.state == JobState::Done) share_result(leader);
      continue;
    }
    if (!pj.key.empty()) leaders_[pj.key] = pj.id;
    set_state(job, JobState::Queued);
    enqueue_back(job);
    ++queued;
  }
  if (queued > 0) jobs_cv_.notify_all();
  return queued;
}

AwaitReply WorkerPool::await(const std::vector<std::string>& job_ids,
                             const std::atomic<bool>* cancel, Duration timeout) {
  std::unique_lock lock(mu_);
  const TimePoint end = after(SteadyClock::now(), timeout);
  AwaitReply reply;
  size_t first_missing = 0;  // those before it have results, which never go away
  for (;;) {
    expire_locked(clock_());
    while (first_missing < job_ids.size()) {
      const Job* job = find_job(job_ids[first_missing]);
      if (!job || job->state != JobState::Done) break;
      ++first_missing;
    }
    if (first_missing == job_ids.size()) {
      reply.status = AwaitStatus::Complete;
      break;
    }
    // A job that will never complete ends the wait now.
    bool unknown = false, cancelled = false;
    for (size_t i = first_missing; i < job_ids.size(); ++i) {
      const Job* job = find_job(job_ids[i]);
      if (!job)
        unknown = true;
      else if (job->state == JobState::Cancelled)
        cancelled = true;
    }
    if (unknown) {
      reply.status = AwaitStatus::UnknownJob;
      break;
    }
    if (cancelled || shut_down_ || (cancel && cancel->load())) {
      reply.status = AwaitStatus::Cancelled;
      break;
    }
    TimePoint real_now = SteadyClock::now();
    if (real_now >= end) {
      reply.status = AwaitStatus::TimedOut;
      break;
    }
    TimePoint until = end;
    if (cancel) until = std::min(until, after(real_now, options_.cancel_poll));
    wait_until(results_cv_, lock, until);
  }
  reply.results.reserve(job_ids.size());
  for (const std::string& id : job_ids) {
    const Job* job = find_job(id);
    reply.results.push_back(job && job->state == JobState::Done ? job->result : std::nullopt);
  }
  return reply;
}

void WorkerPool::cancel_run(const std::string& run_id) {
  std::lock_guard lock(mu_);
  Run& run = runs_[run_id];  // created if new, so that later submits are cancelled too
  run.cancelled = true;
  for (const std::string& id : run.jobs) {
    Job& job = jobs_.at(id);
    if (job.state == JobState::Queued) unqueue(job);
    if (job.state == JobState::Queued || job.state == JobState::Leased ||
        job.state == JobState::Following) {
      revoke_lease(job);
      set_state(job, JobState::Cancelled);
      hand_over(job);
    }
  }
  results_cv_.notify_all();
}

void WorkerPool::release_run(const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return;
  for (const std::string& id : it->second.jobs) {
    Job& job = jobs_.at(id);
    if (job.state == JobState::Queued) unqueue(job);
    revoke_lease(job);
    if (job.state != JobState::Done) set_state(job, JobState::Cancelled);  // the gauges
    hand_over(job);
    jobs_.erase(id);
  }
  runs_.erase(it);
  results_cv_.notify_all();
}

// ---- upkeep and introspection ----

int WorkerPool::expire_leases() {
  std::lock_guard lock(mu_);
  return expire_locked(clock_());
}

PoolSnapshot WorkerPool::snapshot() {
  std::lock_guard lock(mu_);
  PoolSnapshot s;
  s.taken_at = clock_();
  expire_locked(s.taken_at);
  s.counters = counters_;
  for (const std::string& id : worker_order_) {
    const Worker& w = workers_.at(id);
    s.workers.push_back(w.info);
    s.workers.back().leases = int(w.leases.size());
    s.workers.back().polling = w.polling > 0;
  }
  return s;
}

PoolCounters WorkerPool::run_counters(const std::string& run_id) {
  std::lock_guard lock(mu_);
  expire_locked(clock_());
  auto it = runs_.find(run_id);
  return it == runs_.end() ? PoolCounters{} : it->second.counters;
}

void WorkerPool::wake_waiters() {
  // Under the lock, so that a waiter between its check of the flag and its wait does not
  // miss the wake-up.
  std::lock_guard lock(mu_);
  results_cv_.notify_all();
}

void WorkerPool::shut_down() {
  std::lock_guard lock(mu_);
  shut_down_ = true;
  jobs_cv_.notify_all();
  results_cv_.notify_all();
}

bool WorkerPool::is_shut_down() {
  std::lock_guard lock(mu_);
  return shut_down_;
}

// ---- internals (mu_ held) ----

int WorkerPool::expire_locked(TimePoint now, TimePoint* next_event) {
  std::vector<Job*> ended;
  TimePoint next = TimePoint::max();
  for (auto& [id, w] : workers_) {
    if (w.info.lost) continue;  // lost workers hold no leases
    if (w.polling == 0 && now - w.info.last_heard >= options_.heartbeat_timeout) {
      w.info.lost = true;
      for (const std::string& job_id : w.leases) ended.push_back(&jobs_.at(job_id));
      continue;
    }
    for (const std::string& job_id : w.leases) {
      Job& job = jobs_.at(job_id);
      if (job.deadline <= now)
        ended.push_back(&job);
      else
        next = std::min(next, job.deadline);
    }
    if (w.polling == 0 && !w.leases.empty())
      next = std::min(next, w.info.last_heard + options_.heartbeat_timeout);
  }
  if (next_event) *next_event = next;
  return requeue(std::move(ended));
}

WorkerPool::Worker* WorkerPool::touch(const std::string& worker_id, TimePoint now) {
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return nullptr;
  it->second.info.last_heard = now;
  it->second.info.lost = false;  // heard from again; the leases it lost stay lost
  return &it->second;
}

void WorkerPool::set_state(Job& job, JobState state) {
  PoolCounters& run = runs_.at(job.job.run_id).counters;
  auto gauge = [&](JobState s, int delta) {
    if (s == JobState::Queued) {
      counters_.queued += delta;
      run.queued += delta;
    } else if (s == JobState::Leased) {
      counters_.leased += delta;
      run.leased += delta;
    }
  };
  gauge(job.state, -1);
  gauge(state, +1);
  if (state == JobState::Done) {
    ++counters_.completed;
    ++run.completed;
    if (job.result && job.result->shared) {
      ++counters_.shared;
      ++run.shared;
    }
  }
  job.state = state;
}

void WorkerPool::enqueue_back(Job& job) {
  TargetQueue& tq = queues_[queue_key(job.job.target, job.job.host)];
  auto [it, inserted] = tq.by_run.try_emplace(job.job.run_id);
  if (inserted) tq.rotation.push_back(job.job.run_id);
  it->second.push_back(job.job.id);
}

int WorkerPool::requeue(std::vector<Job*> jobs) {
  if (jobs.empty()) return 0;
  // Pushed to the front latest first, so that they come out in submission order.
  std::sort(jobs.begin(), jobs.end(), [](const Job* a, const Job* b) { return a->seq > b->seq; });
  for (Job* job : jobs) {
    drop_lease(*job);
    set_state(*job, JobState::Queued);
    enqueue_front(*job);
    ++counters_.redispatched;
    ++runs_.at(job->job.run_id).counters.redispatched;
  }
  jobs_cv_.notify_all();
  return int(jobs.size());
}

void WorkerPool::enqueue_front(Job& job) {
  TargetQueue& tq = queues_[queue_key(job.job.target, job.job.host)];
  auto [it, inserted] = tq.by_run.try_emplace(job.job.run_id);
  if (inserted) tq.rotation.push_back(job.job.run_id);
  it->second.push_front(job.job.id);
}

void WorkerPool::share_result(Job& leader) {
  for (const std::string& id : leader.followers) {
    Job* f = find_job(id);
    if (!f || f->leader != leader.job.id || f->state != JobState::Following) continue;
    f->result = leader.result;
    f->result->shared = true;
    set_state(*f, JobState::Done);
  }
  results_cv_.notify_all();
}

void WorkerPool::hand_over(Job& leader) {
  auto key = leader.job.key.empty() ? leaders_.end() : leaders_.find(leader.job.key);
  if (key == leaders_.end() || key->second != leader.job.id) return;
  // The heir: the first follower still following, or one that has the leader's result.
  // A follower cancelled or released is passed over (its run is gone or going).
  Job* heir = nullptr;
  std::vector<std::string> rest;
  std::unordered_set<std::string> seen;  // an id released and submitted again is listed twice
  for (const std::string& id : leader.followers) {
    Job* f = find_job(id);
    if (!f || f == &leader || f->leader != leader.job.id || !seen.insert(id).second) continue;
    if (f->state != JobState::Following && f->state != JobState::Done) continue;
    if (!heir)
      heir = f;
    else
      rest.push_back(id);
  }
  leader.followers.clear();
  if (!heir) {
    leaders_.erase(key);
    return;
  }
  key->second = heir->job.id;
  heir->leader.clear();
  for (const std::string& id : rest) jobs_.at(id).leader = heir->job.id;
  heir->followers = std::move(rest);
  if (heir->state == JobState::Following) {
    set_state(*heir, JobState::Queued);
    enqueue_front(*heir);
    jobs_cv_.notify_all();
  }
}

void WorkerPool::unqueue(const Job& job) {
  TargetQueue& tq = queues_.at(queue_key(job.job.target, job.job.host));
  auto run_queue = tq.by_run.find(job.job.run_id);
  auto& ids = run_queue->second;
  ids.erase(std::find(ids.begin(), ids.end(), job.job.id));
  if (ids.empty()) {
    tq.by_run.erase(run_queue);
    tq.rotation.erase(std::find(tq.rotation.begin(), tq.rotation.end(), job.job.run_id));
  }
}

void WorkerPool::drop_lease(Job& job) {
  if (job.holder.empty()) return;
  workers_.at(job.holder).leases.erase(job.job.id);
  job.holder.clear();
}

void WorkerPool::revoke_lease(Job& job) {
  if (job.state == JobState::Leased && !job.holder.empty()) {
    Worker& w = workers_.at(job.holder);
    if (!w.info.lost) w.cancelled.push_back(job.job.id);
  }
  drop_lease(job);
}

WorkerPool::Job* WorkerPool::find_job(const std::string& id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

}  // namespace stipple::coordinator
