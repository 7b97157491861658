// Inlining and qualification of func definitions for the lowering.
//
// Every definition of a realised func is rewritten so that (1) calls to inlined funcs are
// replaced by their definitions, with the call's arguments bound by Lets to fresh names,
// and (2) every variable gets a name that is unique in the whole loop nest: the stage's
// pure and reduction variables become `f.s<k>.<var>` and the variables bound by Reduce
// and Let nodes get fresh `name$<n>` names. Unique names let bounds inference and codegen
// look variables up by name without any risk of capture or shadowing.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>

#include "compiler_core/ir/pipeline.h"

namespace stipple::lowering {

/// Produces fresh names (`base$1`, `base$2`, ...) for one lowering.
class NameGen {
 public:
  std::string fresh(const std::string& base);
  /// Names that fresh() never returns: those already in a statement a pass adds to.
  void avoid(std::set<std::string> names) { taken_ = std::move(names); }

 private:
  std::map<std::string, int> counters_;
  std::set<std::string> taken_;
};

/// Renames variables of `e` (free ones by `renames`, bound ones freshly) and replaces
/// calls to the funcs in `inlined` by their definitions (recursively).
Expr inline_and_qualify(const Expr& e, const Pipeline& p, const std::set<std::string>& inlined,
                        const std::map<std::string, std::string>& renames, NameGen& names);

}  // namespace stipple::lowering
