// On-demand reconstruction from grid samples (grid_reconstruction.h).
#include "compiler_core/perforation/grid_reconstruction.h"

#include <optional>

#include "compiler_core/ir/error.h"

namespace stipple::perforation {

namespace {

Expr i32(int64_t v) { return IntImm::make(Int32(), v); }

// Where along one dimension a read falls: the sample index below it and the weight of
// the one above (a constant when the congruence is proved).
struct Position {
  Expr below;
  std::optional<double> constant_weight;  // exact in the value type
  Expr weight;                            // when not constant
};

/// The type samples are blended in: the func's own float type, f32 for integers and f16.
Type blend_type(Type t) { return t.is_float() && !t.is_f16() ? t : Float32(); }

/// A blended value as the func's type: integers rounded, f16 rounded by its cast.
Expr blended_as(Type t, Expr v) {
  if (t == v.type()) return v;
  if (t.is_float()) return Cast::make(t, std::move(v));
  return Cast::make(t, Call::make_intrinsic(Intrinsic::Round, {std::move(v)}));
}

class GridReader {
 public:
  GridReader(const GridSamples& g, CongruenceProver* prover)
      : g_(g), prover_(prover), value_type_(blend_type(g.type)) {}

  Expr read(const std::vector<Expr>& args) {
    STIPPLE_INTERNAL_CHECK(args.size() == g_.spacing.size(), "grid read of " + g_.func + " arity");
    if (g_.reconstruction == ReconstructionKind::Nearest) return nearest(args);
    STIPPLE_INTERNAL_CHECK(g_.reconstruction == ReconstructionKind::Linear,
                           "grid reconstruction of " + g_.func);
    std::vector<Expr> index = args;
    for (size_t d = 0; d < args.size(); ++d) {
      if (g_.spacing[d] == 1) continue;
      dims_.push_back(d);
      positions_.push_back(position(args[d], g_.spacing[d]));
      index[d] = positions_.back().below;
    }
    bool exact = true;
    for (const Position& p : positions_) {
      exact = exact && p.constant_weight && *p.constant_weight == 0.0;
    }
    if (exact) return sample(index);
    return blended_as(g_.type, blend(dims_.size(), index));
  }

 private:
  Expr sample(const std::vector<Expr>& index) const {
    return Call::make(g_.type, g_.func, index, CallType::Func);
  }
  Expr sample_as_value(const std::vector<Expr>& index) const {
    Expr s = sample(index);
    return g_.type == value_type_ ? s : Cast::make(value_type_, s);
  }
  Expr constant(double v) const { return FloatImm::make(value_type_, v); }

  Position position(const Expr& e, int64_t s) {
    Position p;
    std::optional<int64_t> r = prover_ ? prover_->residue(e, s) : std::nullopt;
    if (r) {
      p.below = exact_quotient(e, *r, s);
      // The weight as the run-time path computes it: the quotient correctly rounded to
      // the value type.
      p.constant_weight = value_type_ == Float64()
                              ? static_cast<double>(*r) / static_cast<double>(s)
                              : static_cast<double>(static_cast<float>(*r) / static_cast<float>(s));
      return p;
    }
    p.below = Div::make(e, i32(s));
    p.weight =
        Div::make(Cast::make(value_type_, Mod::make(e, i32(s))), constant(static_cast<double>(s)));
    return p;
  }

  // The multilinear blend over dims_[0..j) at `index` (whose entries along dims_ are the
  // samples below): the last dimension outermost, so that the first dimension's lerps
  // are the innermost ones, as the separable dense form computes them.
  Expr blend(size_t j, const std::vector<Expr>& index) const {
    if (j == 0) return sample_as_value(index);
    const Position& p = positions_[j - 1];
    if (p.constant_weight && *p.constant_weight == 0.0) return blend(j - 1, index);
    std::vector<Expr> above = index;
    above[dims_[j - 1]] = Add::make(index[dims_[j - 1]], i32(1));
    Expr a = blend(j - 1, index), b = blend(j - 1, above);
    if (p.constant_weight) {
      const double w = *p.constant_weight;
      // 1 - w rounded to the value type, as the run-time path computes it.
      const double rest =
          value_type_ == Float64() ? 1.0 - w : static_cast<double>(1.0f - static_cast<float>(w));
      return Add::make(Mul::make(constant(rest), a), Mul::make(constant(w), b));
    }
    return Add::make(Mul::make(Sub::make(constant(1.0), p.weight), a), Mul::make(p.weight, b));
  }

  Expr nearest(const std::vector<Expr>& args) const {
    std::vector<Expr> index = args;
    for (size_t d = 0; d < args.size(); ++d) {
      const int64_t s = g_.spacing[d];
      if (s == 1) continue;
      std::optional<int64_t> r = prover_ ? prover_->residue(args[d], s) : std::nullopt;
      if (r) {
        Expr q = exact_quotient(args[d], *r, s);
        index[d] = (*r + s / 2) / s == 0 ? q : Add::make(q, i32(1));
      } else {
        index[d] = Div::make(Add::make(args[d], i32(s / 2)), i32(s));
      }
    }
    return sample(index);
  }

  const GridSamples& g_;
  CongruenceProver* prover_;
  Type value_type_;
  std::vector<size_t> dims_;
  std::vector<Position> positions_;
};

}  // namespace

Expr reconstruct_from_grid(const GridSamples& g, const std::vector<Expr>& args,
                           CongruenceProver* prover) {
  return GridReader(g, prover).read(args);
}

std::vector<Func> dense_reconstruction(const GridSamples& g, const std::vector<std::string>& args,
                                       const std::string& name) {
  std::vector<Expr> vars;
  for (const std::string& a : args) vars.push_back(Variable::make(a));
  std::vector<size_t> dims;
  for (size_t d = 0; d < g.spacing.size(); ++d) {
    if (g.spacing[d] > 1) dims.push_back(d);
  }
  if (g.reconstruction == ReconstructionKind::Nearest || dims.size() <= 1) {
    Func f;
    f.name = name;
    f.args = args;
    f.type = g.type;
    f.value = reconstruct_from_grid(g, vars, nullptr);
    return {f};
  }
  const Type value_type = blend_type(g.type);
  std::vector<Func> funcs;
  std::string previous = g.func;
  Type previous_type = g.type;
  for (size_t j = 0; j < dims.size(); ++j) {
    const size_t d = dims[j];
    const int64_t s = g.spacing[d];
    const bool last = j + 1 == dims.size();
    Func f;
    f.name = last ? name : name + "$lerp_" + args[d];
    f.args = args;
    f.type = last ? g.type : value_type;
    std::vector<Expr> below = vars, above = vars;
    below[d] = Div::make(vars[d], i32(s));
    above[d] = Add::make(below[d], i32(1));
    auto read = [&](const std::vector<Expr>& index) {
      Expr r = Call::make(previous_type, previous, index, CallType::Func);
      return previous_type == value_type ? r : Cast::make(value_type, r);
    };
    Expr w = Div::make(Cast::make(value_type, Mod::make(vars[d], i32(s))),
                       FloatImm::make(value_type, static_cast<double>(s)));
    Expr v = Add::make(Mul::make(Sub::make(FloatImm::make(value_type, 1.0), w), read(below)),
                       Mul::make(w, read(above)));
    f.value = last ? blended_as(g.type, v) : v;
    previous = f.name;
    previous_type = f.type;
    funcs.push_back(std::move(f));
  }
  return funcs;
}

}  // namespace stipple::perforation
