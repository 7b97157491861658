// Stages written in the pipeline language and added to a pipeline: the sampling masks and
// reconstructions of irregular perforation (importance_sampling.h, adaptive_sampling.h,
// irregular_reconstruction.h) are .stp text, compiled by the frontend (so they are
// type-checked like any pipeline) and spliced into the pipeline being perforated. The
// evaluator, the schedules and code generation then treat them as ordinary funcs.
//
// A template is a complete pipeline. Its inputs stand for funcs or inputs of the host
// pipeline, its input extents (lum.width) for host expressions; its funcs are added as
// `<prefix>$<name>`. Constants are formatted into the text before it is compiled.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "compiler_core/ir/pipeline.h"
#include "compiler_core/schedule/schedule.h"

namespace stipple::perforation {

struct TemplateInput {
  std::string host;           // the host func or input its reads become (empty: only its
                              // extents are used; a read is an internal error)
  std::vector<Expr> extents;  // what its extents (name.width, ...) become
};

/// Compiles `text` and adds its funcs to `host`, renamed `<prefix>$<name>`, with reads of
/// its inputs bound as `inputs` says (each template input must be bound, to a func or
/// input of the host of the same element type and dimension count), and `schedule_text`
/// (a schedule of the template's funcs) to `host_schedule`, renamed the same way. Returns
/// the host name of the template's output func. A template that does not compile is an
/// internal error.
std::string add_template_stages(Pipeline& host, Schedule& host_schedule, std::string_view text,
                                std::string_view schedule_text, const std::string& prefix,
                                const std::map<std::string, TemplateInput>& inputs);

/// `text` with every `@NAME@` replaced by its value; `complete`: no placeholder may remain.
std::string fill_template(std::string text, const std::map<std::string, std::string>& values,
                          bool complete = true);

/// A float literal for .stp text, exact for the double it was given.
std::string stp_float(double v);

}  // namespace stipple::perforation
