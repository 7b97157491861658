#include "client/cluster_evaluator.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "compiler_core/support/content_hash.h"
#include "compiler_core/support/files.h"
#include "workers/evaluation_codec.h"

namespace stipple::client {

ClusterEvaluator::ClusterEvaluator(CoordinatorClient& client, const workers::EvaluationSetup& setup,
                                   ClusterEvaluatorOptions options)
    : client_(client), options_(std::move(options)) {
  setup_.set_pipeline_source(setup.pipeline_source);
  setup_.set_pipeline_file(setup.pipeline_file);
  for (const auto& [name, value] : setup.params) (*setup_.mutable_params())[name] = value;
  setup_.set_runs(setup.runs);
  setup_.set_min_timed_ms(setup.min_timed_ms);
  setup_.set_threads(setup.threads);
  setup_.set_output_digests(setup.output_digests);
  setup_.set_target(options_.target);
  setup_.set_host(options_.host);
  for (const auto& [split, paths] : setup.images) {
    for (const std::string& path : paths) {
      photos_.push_back(read_text_file(path, "photo", kMaxImageFileBytes));
      proto::ImageRef* ref = setup_.add_images();
      ref->set_name(std::filesystem::path(path).filename().string());
      ref->set_split(split);
      ref->set_sha256(sha256_hex(photos_.back()));
    }
  }
}

proto::EvaluateResponse ClusterEvaluator::call(proto::EvaluateRequest request) {
  // The workers of one host measure the jobs one after the other (each timed alone).
  int requests = 0;
  for (const proto::EvaluateJob& job : request.jobs()) requests += std::max(1, job.code_size());
  const double timeout_s = 60 + requests * options_.job_seconds;
  auto with_photos = [&](bool bytes) {
    // Each photo's bytes once: a photo in both splits (no test photos of its own) is
    // found by its hash the second time.
    request.clear_image_contents();
    std::set<std::string> sent;
    for (size_t i = 0; i < photos_.size(); ++i) {
      const bool first = sent.insert(request.images(int(i)).sha256()).second;
      request.add_image_contents(bytes && first ? photos_[i] : "");
    }
  };
  with_photos(!photos_sent_);
  proto::EvaluateResponse response;
  try {
    response = client_.evaluate(request, timeout_s);
  } catch (const RpcError& e) {
    // A coordinator that lost its copies (another data folder, a new machine) says so.
    if (!photos_sent_ || e.code() != grpc::StatusCode::FAILED_PRECONDITION ||
        std::string(e.what()).find("does not have these photos") == std::string::npos) {
      throw;
    }
    with_photos(true);
    response = client_.evaluate(request, timeout_s);
  }
  photos_sent_ = true;
  for (const std::string& host : response.hosts()) {
    if (!options_.host.empty() && host != options_.host) {
      throw std::runtime_error("the coordinator had a job measured on " + host + ", not on " +
                               options_.host + " as asked");
    }
  }
  return response;
}

std::vector<workers::EvaluationResult> ClusterEvaluator::evaluate(
    const std::vector<std::string>& schedules, const std::string& split, double give_up_ms) {
  if (schedules.empty()) return {};
  proto::EvaluateRequest request = setup_;
  request.set_split(split);
  request.set_give_up_ms(give_up_ms);
  for (const std::string& s : schedules) request.add_jobs()->set_schedule_text(s);
  const proto::EvaluateResponse response = call(std::move(request));
  std::vector<workers::EvaluationResult> results;
  for (const proto::JobResult& r : response.results()) results.push_back(workers::from_proto(r));
  return results;
}

std::vector<workers::EvaluationResult> ClusterEvaluator::evaluate_code(
    const std::vector<workers::CodeRequest>& requests, const std::string& split) {
  if (requests.empty()) return {};
  proto::EvaluateRequest request = setup_;
  request.set_split(split);
  // One job per group, its requests in their order; where each request's result is.
  std::map<int, int> job_of_group;
  std::vector<std::pair<int, int>> place;  // (job, part) of each request
  for (const workers::CodeRequest& c : requests) {
    auto [it, added] = job_of_group.try_emplace(c.group, request.jobs_size());
    if (added) request.add_jobs();
    proto::EvaluateJob* job = request.mutable_jobs(it->second);
    place.push_back({it->second, job->code_size()});
    *job->add_code() = workers::to_proto(c);
  }
  const proto::EvaluateResponse response = call(std::move(request));
  std::vector<workers::EvaluationResult> results;
  for (const auto& [job, part] : place) {
    const proto::JobResult& r = response.results(job);
    if (r.code_results_size() == 0) {
      // The job failed as a whole (its setup could not be measured there): each request
      // of it fails with its reason.
      results.push_back(workers::from_proto(r));
      if (results.back().ok()) throw std::runtime_error("a code job came back without results");
      continue;
    }
    if (part >= r.code_results_size())
      throw std::runtime_error("a code job came back with too few results");
    results.push_back(workers::from_proto(r.code_results(part)));
  }
  return results;
}

}  // namespace stipple::client
