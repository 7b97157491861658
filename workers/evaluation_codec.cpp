#include "workers/evaluation_codec.h"

#include "storage/evaluation_status.h"

namespace stipple::workers {

proto::JobResult to_proto(const std::string& job_id, const EvaluationResult& r) {
  proto::JobResult m;
  m.set_job_id(job_id);
  m.set_status(to_string(r.status));
  m.set_reason(r.reason);
  m.set_compile_ms(r.compile_ms);
  for (const ImageMeasurement& i : r.images) {
    proto::ImageMeasurement* out = m.add_images();
    out->set_time_ms(i.time_ms);
    out->set_error(i.error);
    out->set_psnr(i.psnr);
    out->set_min_time_ms(i.min_time_ms);
    out->set_output_digest(i.output_digest);
  }
  m.set_object(r.object);
  m.set_symbol(r.symbol);
  return m;
}

EvaluationResult from_proto(const proto::JobResult& m) {
  EvaluationResult r;
  r.status = parse_evaluation_status(m.status()).value_or(EvaluationStatus::Error);
  r.reason = m.reason();
  r.compile_ms = m.compile_ms();
  for (const proto::ImageMeasurement& i : m.images()) {
    ImageMeasurement image;
    image.time_ms = i.time_ms();
    image.min_time_ms = i.min_time_ms();
    image.error = i.error();
    image.psnr = i.psnr();
    image.output_digest = i.output_digest();
    r.images.push_back(std::move(image));
  }
  r.object = m.object();
  r.symbol = m.symbol();
  r.aggregate();
  return r;
}

proto::CodeRequest to_proto(const CodeRequest& c) {
  proto::CodeRequest m;
  m.set_schedule_text(c.schedule);
  m.set_object(c.object);
  m.set_symbol(c.symbol);
  m.set_keep_code(c.keep_code);
  return m;
}

CodeRequest from_proto(const proto::CodeRequest& m) {
  CodeRequest c;
  c.schedule = m.schedule_text();
  c.object = m.object();
  c.symbol = m.symbol();
  c.keep_code = m.keep_code();
  return c;
}

}  // namespace stipple::workers
