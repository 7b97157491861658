// Converting the Pipeline IR to and from stipple.proto.Pipeline (proto/pipeline.proto),
// and the byte form that travels between coordinator, workers and the database.
//
// Reading validates everything, because the bytes may come from another host or an older
// build: a message the IR's make() functions would reject (missing operands, unknown enum
// values, mismatched types), that refers to undeclared funcs, inputs or params, or that
// nests deeper than kMaxProtoIrDepth becomes a UserError naming what is wrong. Reading
// never throws InternalError and never crashes, whatever the bytes.
#pragma once

#include <string>
#include <string_view>

#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/pipeline.h"
#include "proto/pipeline.pb.h"

namespace stipple {

/// The version written into Pipeline.format_version and the only one read.
inline constexpr uint32_t kPipelineFormatVersion = 1;

/// The deepest IR (expression plus statement nesting) that is written or read. The
/// language allows expressions 256 deep and the checker adds a few levels; this leaves a
/// wide margin for lowered code while bounding recursion on hostile input.
inline constexpr int kMaxProtoIrDepth = 1024;

/// The protobuf parser's nesting limit: each IR level costs at most three message levels
/// (Expr -> Reduce -> ReductionVariable -> Expr), plus the pipeline's own wrappers.
inline constexpr int kProtoRecursionLimit = 3 * kMaxProtoIrDepth + 64;

/// Lossless conversion. A tree deeper than kMaxProtoIrDepth is a UserError.
proto::Pipeline to_proto(const Pipeline& p);
proto::Expr to_proto(const Expr& e);
proto::Stmt to_proto(const Stmt& s);

/// Validating conversion back: every malformed message is a UserError.
Pipeline from_proto(const proto::Pipeline& p);
Expr from_proto(const proto::Expr& e);
Stmt from_proto(const proto::Stmt& s);

/// The binary protobuf encoding of to_proto(p).
std::string serialize_pipeline(const Pipeline& p);
/// Parses bytes from serialize_pipeline; anything else is a UserError.
Pipeline parse_pipeline_bytes(std::string_view bytes);

}  // namespace stipple
