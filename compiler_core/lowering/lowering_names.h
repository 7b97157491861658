// Small constructors and the variable names the lowering passes share: the regions and
// allocations of func f are bound to `f.<what>.<d>` (rmin, rmax, cmin, cmax, min, ...).
#pragma once

#include <string>

#include "compiler_core/ir/ir.h"

namespace stipple::lowering {

inline Expr i32(int64_t v) { return IntImm::make(Int32(), v); }
inline Expr var(const std::string& n) { return Variable::make(n); }
inline std::string dim_name(const std::string& f, const char* what, size_t d) {
  return f + "." + what + "." + std::to_string(d);
}

}  // namespace stipple::lowering
