// Linear analysis of region expressions (region_analyzer.h).
#include "compiler_core/lowering/region_analyzer.h"

#include <algorithm>
#include <cstddef>

#include "compiler_core/ir/ir_visitor.h"
#include "compiler_core/lowering/bounds_inference.h"

namespace stipple::lowering {

Dir combine(Dir a, Dir b) {
  if (a == Dir::Const) return b;
  if (b == Dir::Const) return a;
  return a == b ? a : Dir::Unknown;
}

namespace {

Dir negate(Dir d) {
  if (d == Dir::Inc) return Dir::Dec;
  if (d == Dir::Dec) return Dir::Inc;
  return d;
}

void add_term(Linear& l, const Expr& atom, int64_t k) {
  if (k == 0) return;
  for (auto it = l.terms.begin(); it != l.terms.end(); ++it) {
    if (cheap_equal(it->first, atom)) {
      it->second += k;
      if (it->second == 0) l.terms.erase(it);
      return;
    }
  }
  l.terms.emplace_back(atom, k);
}

// a + k * b
Linear scaled_sum(const Linear& a, const Linear& b, int64_t k) {
  Linear r = a;
  r.c += k * b.c;
  for (const auto& [atom, coeff] : b.terms) add_term(r, atom, k * coeff);
  return r;
}

bool min_max(const Expr& e, Expr* a, Expr* b, bool* is_max) {
  if (const Min* op = e.as<Min>()) {
    *a = op->a;
    *b = op->b;
    *is_max = false;
    return true;
  }
  if (const Max* op = e.as<Max>()) {
    *a = op->a;
    *b = op->b;
    *is_max = true;
    return true;
  }
  return false;
}

}  // namespace

Dir RegionAnalyzer::direction(const Expr& e) {
  int budget = kBudget;
  return dir(linear(e), budget);
}

std::optional<int64_t> RegionAnalyzer::upper_bound(const Expr& e) {
  int budget = kBudget;
  return ub(linear(e), budget);
}

bool RegionAnalyzer::depends(const Expr& e) {
  struct Finder : IRVisitor {
    RegionAnalyzer* self = nullptr;
    bool found = false;
    using IRVisitor::visit;
    void visit(const Variable* op) override {
      if (!found && self->depends_on(op->name)) found = true;
    }
    void visit(const Let* op) override {
      self->defs_[op->name] = op->value;
      IRVisitor::visit(op);
    }
  } finder;
  finder.self = this;
  e.accept(&finder);
  return finder.found;
}

bool RegionAnalyzer::depends_on(const std::string& name) {
  if (name == v_) return true;
  auto memo = depends_memo_.find(name);
  if (memo != depends_memo_.end()) return memo->second;
  auto d = defs_.find(name);
  bool r = false;
  depends_memo_[name] = false;  // names are unique, so definitions never cycle
  if (d != defs_.end()) r = depends(d->second);
  depends_memo_[name] = r;
  return r;
}

Linear RegionAnalyzer::linear(const Expr& e) {
  Linear l;
  switch (e.node_type()) {
    case IRNodeType::IntImm:
      if (e.type() == Int32()) {
        l.c = e.as<IntImm>()->value;
        return l;
      }
      break;
    case IRNodeType::Variable: {
      const std::string& name = e.as<Variable>()->name;
      auto memo = linear_memo_.find(name);
      if (memo != linear_memo_.end()) return memo->second;
      auto d = defs_.find(name);
      if (d == defs_.end()) break;
      Linear r = linear(d->second);
      linear_memo_[name] = r;
      return r;
    }
    case IRNodeType::Let: {
      const Let* op = e.as<Let>();
      defs_[op->name] = op->value;
      return linear(op->body);
    }
    case IRNodeType::Add: return scaled_sum(linear(e.as<Add>()->a), linear(e.as<Add>()->b), 1);
    case IRNodeType::Sub: return scaled_sum(linear(e.as<Sub>()->a), linear(e.as<Sub>()->b), -1);
    case IRNodeType::Mul: {
      Linear a = linear(e.as<Mul>()->a), b = linear(e.as<Mul>()->b);
      if (a.terms.empty()) return scaled_sum(Linear{}, b, a.c);
      if (b.terms.empty()) return scaled_sum(Linear{}, a, b.c);
      break;
    }
    default: break;
  }
  add_term(l, e, 1);
  return l;
}

Dir RegionAnalyzer::atom_dir(const Expr& e, int& budget) {
  if (!depends(e)) return Dir::Const;
  if (e.as<Variable>()) return Dir::Inc;  // v itself: other names were expanded
  Expr a, b;
  bool is_max = false;
  if (min_max(e, &a, &b, &is_max)) return combine(dir(linear(a), budget), dir(linear(b), budget));
  if (const Div* op = e.as<Div>()) {
    // Division rounds down: monotonic in the dividend for a constant divisor.
    const IntImm* k = op->b.as<IntImm>();
    if (k && k->value > 0) return dir(linear(op->a), budget);
    if (k && k->value < 0) return negate(dir(linear(op->a), budget));
  }
  return Dir::Unknown;
}

Dir RegionAnalyzer::dir(const Linear& l, int& budget) {
  if (--budget < 0) return Dir::Unknown;
  Dir r = Dir::Const;
  for (const auto& [atom, k] : l.terms) {
    Dir d = atom_dir(atom, budget);
    r = combine(r, k < 0 ? negate(d) : d);
  }
  if (r != Dir::Unknown) return r;
  // rest + k * min(a, b) is min or max of rest + k * a and rest + k * b, and a min or
  // max of functions that never go down never goes down; inside the operands, terms of
  // the rest cancel: b + min(4, n - b) = min(b + 4, n).
  for (size_t i = 0; i < l.terms.size() && budget >= 0; ++i) {
    Expr a, b;
    bool is_max = false;
    if (!min_max(l.terms[i].first, &a, &b, &is_max) || !depends(l.terms[i].first)) continue;
    Linear rest = l;
    rest.terms.erase(rest.terms.begin() + static_cast<std::ptrdiff_t>(i));
    int64_t k = l.terms[i].second;
    Dir da = dir(scaled_sum(rest, linear(a), k), budget);
    if (da == Dir::Unknown) continue;
    Dir both = combine(da, dir(scaled_sum(rest, linear(b), k), budget));
    if (both != Dir::Unknown) return both;
  }
  return Dir::Unknown;
}

std::optional<int64_t> RegionAnalyzer::ub(const Linear& l, int& budget) {
  if (--budget < 0) return std::nullopt;
  if (l.terms.empty()) return l.c;
  for (size_t i = 0; i < l.terms.size() && budget >= 0; ++i) {
    Expr a, b;
    bool is_max = false;
    if (!min_max(l.terms[i].first, &a, &b, &is_max)) continue;
    Linear rest = l;
    rest.terms.erase(rest.terms.begin() + static_cast<std::ptrdiff_t>(i));
    int64_t k = l.terms[i].second;
    // With k > 0 a max (k < 0 a min) is the larger branch: both must be bounded; the
    // other way round either branch bounds it.
    bool larger = is_max == (k > 0);
    std::optional<int64_t> ra = ub(scaled_sum(rest, linear(a), k), budget);
    if (larger && !ra) continue;
    std::optional<int64_t> rb = ub(scaled_sum(rest, linear(b), k), budget);
    if (larger) {
      if (rb) return std::max(*ra, *rb);
      continue;
    }
    if (ra && rb) return std::min(*ra, *rb);
    if (ra) return ra;
    if (rb) return rb;
  }
  return std::nullopt;
}

}  // namespace stipple::lowering
