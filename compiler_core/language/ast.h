// The syntax tree the parser produces: names unresolved, no types, every node located.
// The checker turns it into the typed IR (compiler_core/ir/pipeline.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler_core/language/lexer.h"

namespace stipple {

struct AstExpr;
using AstExprPtr = std::unique_ptr<AstExpr>;

/// `v in lo..hi`, or `v in image` (image set, lo/hi null).
struct AstRange {
  std::string var;
  SourceLoc loc;
  AstExprPtr lo, hi;
  std::string image;
  SourceLoc image_loc;
};

enum class AstKind : uint8_t {
  IntLit,     // int_value
  FloatLit,   // float_value
  Name,       // name
  Call,       // name(args)
  Field,      // name.field
  Unary,      // op args[0]
  Binary,     // args[0] op args[1]
  Reduction,  // name(ranges : args[0])
  Let,        // let name = args[0] in args[1]; loc is the `let`, name_loc the name's
};

struct AstExpr {
  AstKind kind;
  SourceLoc loc;
  std::string name;               // Name, Call, Field, Reduction, Let
  SourceLoc name_loc;             // Let
  std::string field;              // Field
  TokenKind op = TokenKind::End;  // Unary, Binary
  int64_t int_value = 0;
  double float_value = 0;
  std::vector<AstExprPtr> args;
  std::vector<AstRange> ranges;  // Reduction
  int depth = 1;                 // height of this subtree
};

struct AstInput {
  std::string name;
  SourceLoc loc;
  std::string type_name;
  SourceLoc type_loc;
  std::vector<std::string> dims;
  std::vector<SourceLoc> dim_locs;
  std::string boundary = "clamp";  // clamp | mirror | constant
  SourceLoc boundary_loc;
  double boundary_value = 0;
};

struct AstParam {
  std::string name;
  SourceLoc loc;
  std::string type_name;
  SourceLoc type_loc;
  AstExprPtr value;  // a literal, possibly negated
};

struct AstFunc {
  std::string name;
  SourceLoc loc;
  std::vector<std::string> args;
  std::vector<SourceLoc> arg_locs;
  AstExprPtr value;
};

/// `f(args) OP value for ranges`; OP is "=", "+=", "-=", "*=", "min=", "max=".
struct AstUpdate {
  std::string func;
  SourceLoc loc;
  std::vector<AstExprPtr> args;
  std::string op;
  SourceLoc op_loc;
  AstExprPtr value;
  std::vector<AstRange> ranges;
};

struct AstOutput {
  std::string func;
  SourceLoc loc;
  std::vector<AstExprPtr> size;
  SourceLoc size_loc;
  std::string metric;  // empty: the default
  SourceLoc metric_loc;
};

struct AstProgram {
  std::string name;
  SourceLoc loc;
  std::vector<AstInput> inputs;
  std::vector<AstParam> params;
  std::vector<AstFunc> funcs;
  std::vector<AstUpdate> updates;
  std::optional<AstOutput> output;
};

}  // namespace stipple
