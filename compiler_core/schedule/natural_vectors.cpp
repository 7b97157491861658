#include "compiler_core/schedule/natural_vectors.h"

#include <algorithm>

namespace stipple {

int natural_vector_lanes(int vector_bytes, Type type) {
  const int bytes = std::max(4, type.element_of().bits() / 8);
  return std::max(1, vector_bytes / bytes);
}

std::optional<int64_t> vector_register_count(const ScheduleArg& width) {
  if (width.kind != ScheduleArgKind::Call || width.name != "vectors" || width.args.size() != 1 ||
      width.args[0].kind != ScheduleArgKind::Int) {
    return std::nullopt;
  }
  return width.args[0].int_value;
}

bool valid_vector_register_count(int64_t k) { return k == 1 || k == 2 || k == 4; }

void resolve_vector_widths(Schedule& s, const Pipeline& p, int vector_bytes) {
  for (auto& [name, fs] : s.funcs) {
    const Func* f = p.find_func(name);
    if (!f) continue;  // the checker's error, at the func's name
    for (auto& [stage, ss] : fs.stages) {
      for (Directive& d : ss.directives) {
        if (d.name != "vectorize" || d.args.size() < 2) continue;
        const std::optional<int64_t> k = vector_register_count(d.args[1]);
        if (!k || !valid_vector_register_count(*k)) continue;
        d.args[1] =
            ScheduleArg::make_int(*k * natural_vector_lanes(vector_bytes, f->type), d.args[1].loc);
      }
    }
  }
}

}  // namespace stipple
