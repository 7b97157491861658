#include "workers/evaluator.h"

namespace stipple::workers {

void EvaluationResult::aggregate() {
  time_ms = min_time_ms = error = psnr = 0;
  if (images.empty()) return;
  for (const ImageMeasurement& m : images) {
    time_ms += m.time_ms;
    min_time_ms += m.min_time_ms;
    error += m.error;
    psnr += m.psnr;
  }
  time_ms /= double(images.size());
  min_time_ms /= double(images.size());
  error /= double(images.size());
  psnr /= double(images.size());
}

}  // namespace stipple::workers
