// Deep structural equality and hashing of IR and pipelines.
//
// Two trees are equal when they have the same node kinds, types, names and values all the
// way down, whether or not they share nodes. Float constants (and float declaration
// values) compare by bit pattern, so NaN equals NaN and 0.0 differs from -0.0: equality
// means "the same program", not "numerically equal". The hash is consistent with `equal`
// and depends only on the tree's contents, never on addresses, so it is the same across
// runs and machines: the database keys pipelines by it.
#pragma once

#include <cstdint>

#include "compiler_core/ir/ir.h"
#include "compiler_core/ir/pipeline.h"

namespace stipple {

bool equal(const Expr& a, const Expr& b);
bool equal(const Stmt& a, const Stmt& b);
/// Every field: inputs (with boundaries), params (with defaults), funcs with their update
/// definitions and domains, and the output's func, extents and metric.
bool equal(const Pipeline& a, const Pipeline& b);

/// e where `value` is `name(site) + e` or `e + name(site)`, the read of func `name` at
/// exactly `site` (argument by argument): what an atomic update adds; a * b where it is
/// `fma(a, b, name(site))` (a float `+= a * b`, contracted). Undefined otherwise.
Expr addend_to_own_site(const Expr& value, const std::string& name, const std::vector<Expr>& site);

uint64_t structural_hash(const Expr& e);
uint64_t structural_hash(const Stmt& s);
uint64_t structural_hash(const Pipeline& p);

}  // namespace stipple
