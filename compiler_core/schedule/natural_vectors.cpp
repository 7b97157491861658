#include "compiler_core/schedule/natural_vectors.h"

#include <algorithm>

namespace stipple {

int natural_vector_lanes(int vector_bytes, Type type) {
  const int bytes = std::max(4, type.element_of().bits() / 8);
  return std::max(1, vector_bytes / bytes);
}

void resolve_vector_widths(Schedule& s, const Pipeline& p, int vector_bytes,
                           const SourceText& source) {
  for (auto& [name, fs] : s.funcs) {
    const Func* f = p.find_func(name);
    for (auto& [stage, ss] : fs.stages) {
      for (Directive& d : ss.directives) {
        if (d.name != "vectorize" || d.args.size() < 2) continue;
        ScheduleArg& width = d.args[1];
        if (width.kind == ScheduleArgKind::Int) continue;
        const bool registers = width.kind == ScheduleArgKind::Call && width.name == "vectors" &&
                               width.args.size() == 1 && width.args[0].kind == ScheduleArgKind::Int;
        if (!registers) {
          source.error(width.loc,
                       "the vector width is a number of lanes (vectorize(x, 8)) or of native "
                       "vector registers (vectorize(x, vectors(2)))");
        }
        // 1, 2 or 4: a power of two of lanes within the checker's 64 on every target (4
        // AVX-512 registers of f32 are 64 lanes), so a schedule legal on one target is on
        // every other, and the coordinator may check what its workers will compile.
        const int64_t k = width.args[0].int_value;
        if (k != 1 && k != 2 && k != 4) {
          source.error(width.args[0].loc,
                       "vectors(k) takes 1, 2 or 4 registers, found " + std::to_string(k));
        }
        // A func the pipeline lacks is the checker's error, at its name; its width here
        // is any valid one.
        const Type type = f ? f->type : Type(ScalarType::Float32);
        const SourceLoc loc = width.loc;
        width = ScheduleArg::make_int(k * natural_vector_lanes(vector_bytes, type), loc);
      }
    }
  }
}

}  // namespace stipple
