// Sliding window (see sliding_window.h).
//
// At each serial loop L, the LetStmts directly inside it bind the regions of the funcs
// computed at L (`f.rmin.d` ... `f.cmax.d`, consumers first). For a candidate func f
// (pure, not the output, its Allocate enclosing L), the region's ends are analysed as
// functions of L's variable v: each end is rewritten into a linear combination of atoms
// (variables bound outside L, and min/max/div nodes), and a min/max atom is split by
// moving the rest of the sum into its operands, where terms cancel. That proves the
// direction in which each end moves, and bounds the extent of the region (a constant
// upper bound of cmax - cmin) for storage folding.
#include "compiler_core/lowering/sliding_window.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/ir/ir_visitor.h"
#include "compiler_core/lowering/bounds_inference.h"
#include "compiler_core/lowering/lowering_names.h"

namespace stipple::lowering {

namespace {

// How an expression changes as v grows: not at all, never down, never up, or unknown.
enum class Dir { Const, Inc, Dec, Unknown };

Dir combine(Dir a, Dir b) {
  if (a == Dir::Const) return b;
  if (b == Dir::Const) return a;
  return a == b ? a : Dir::Unknown;
}

Dir negate(Dir d) {
  if (d == Dir::Inc) return Dir::Dec;
  if (d == Dir::Dec) return Dir::Inc;
  return d;
}

// sum(k * atom) + c; atoms are compared structurally and merged, zero terms dropped.
struct Linear {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t c = 0;
};

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

// Monotonicity and difference bounds of i32 region expressions in a loop variable v.
// Names in `defs` (the lets bound inside the loop, and Let nodes met on the way) are
// expanded into their definitions; every other name is fixed while the loop runs.
class Analyzer {
 public:
  explicit Analyzer(std::string v) : v_(std::move(v)) {}

  void define(const std::string& name, const Expr& value) { defs_[name] = value; }

  Dir direction(const Expr& e) {
    int budget = kBudget;
    return dir(linear(e), budget);
  }

  std::optional<int64_t> upper_bound(const Expr& e) {
    int budget = kBudget;
    return ub(linear(e), budget);
  }

  bool depends(const Expr& e) {
    struct Finder : IRVisitor {
      Analyzer* self = nullptr;
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

  bool depends_on(const std::string& name) {
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

 private:
  // Splitting min/max atoms is exponential in the worst case; past the budget the
  // answer is "unknown", which only means no sliding.
  static constexpr int kBudget = 20000;

  Linear linear(const Expr& e) {
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

  Dir atom_dir(const Expr& e, int& budget) {
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

  Dir dir(const Linear& l, int& budget) {
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

  std::optional<int64_t> ub(const Linear& l, int& budget) {
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

  std::string v_;
  std::map<std::string, Expr> defs_;
  std::map<std::string, Linear> linear_memo_;
  std::map<std::string, bool> depends_memo_;
};

// Replaces variables by name; Let nodes met inside get `suffix` appended to their names
// (the copies of a region made for the previous iteration must not rebind a name).
class Renamer : public IRMutator {
 public:
  Renamer(std::map<std::string, Expr> subs, std::string suffix)
      : subs_(std::move(subs)), suffix_(std::move(suffix)) {}
  using IRMutator::visit;
  Expr visit(const Variable* op) override {
    auto it = subs_.find(op->name);
    return it == subs_.end() ? Expr(op) : it->second;
  }
  Expr visit(const Let* op) override {
    Expr value = mutate(op->value);
    if (suffix_.empty()) return Let::make(op->name, value, mutate(op->body));
    std::string name = op->name + suffix_;
    subs_[op->name] = var(name);
    return Let::make(name, value, mutate(op->body));
  }

 private:
  std::map<std::string, Expr> subs_;
  std::string suffix_;
};

bool provides_to(const Stmt& s, const std::string& f) {
  struct Finder : IRVisitor {
    const std::string* f = nullptr;
    bool found = false;
    using IRVisitor::visit;
    void visit(const Provide* op) override { found = found || op->name == *f; }
  } finder;
  finder.f = &f;
  s.accept(&finder);
  return finder.found;
}

// `subs` applied to the statements that compute func f (those storing into it) among
// the statements that follow the lets at f's compute level.
Stmt in_stages(const Stmt& s, const std::string& f, const std::map<std::string, Expr>& subs) {
  if (const Block* b = s.as<Block>()) {
    Stmt first = in_stages(b->first, f, subs), rest = in_stages(b->rest, f, subs);
    return first.same_as(b->first) && rest.same_as(b->rest) ? s : Block::make(first, rest);
  }
  if (const LetStmt* l = s.as<LetStmt>()) {
    Stmt body = in_stages(l->body, f, subs);
    return body.same_as(l->body) ? s : LetStmt::make(l->name, l->value, body);
  }
  if (const Allocate* a = s.as<Allocate>()) {
    Stmt body = in_stages(a->body, f, subs);
    return body.same_as(a->body) ? s : Allocate::make(a->name, a->type, a->extents, body);
  }
  if (!provides_to(s, f)) return s;
  Renamer r(subs, "");
  return r.mutate(s);
}

// The func and the kind of a region let (`f.rmin.1` -> {"f", "rmin"}), else empty.
std::pair<std::string, std::string> region_let(const std::string& name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0) return {};
  size_t kind = name.rfind('.', dot - 1);
  if (kind == std::string::npos) return {};
  std::string what = name.substr(kind + 1, dot - kind - 1);
  if (what != "rmin" && what != "rmax" && what != "cmin" && what != "cmax") return {};
  return {name.substr(0, kind), what};
}

class Slider : public IRMutator {
 public:
  explicit Slider(const Pipeline& p) : p_(p) {}
  std::vector<SlidingWindow> slid;

  using IRMutator::visit;

  Stmt visit(const Allocate* op) override {
    const Func* f = p_.find_func(op->name);
    bool candidate = f && f->updates.empty() && f->name != p_.output.func && !f->args.empty();
    if (candidate) open_.insert(op->name);
    Stmt body = mutate(op->body);
    if (candidate) open_.erase(op->name);
    return body.same_as(op->body) ? Stmt(op)
                                  : Allocate::make(op->name, op->type, op->extents, body);
  }

  Stmt visit(const For* op) override {
    std::vector<const LetStmt*> chain;
    Stmt inner = op->body;
    while (const LetStmt* l = inner.as<LetStmt>()) {
      chain.push_back(l);
      inner = l->body;
    }
    Stmt body = mutate(inner);
    std::vector<Plan> plans;
    if (op->for_type == ForType::Serial) plans = plan(op, chain);
    std::set<std::string> slid_funcs;
    for (const Plan& pl : plans) {
      body = in_stages(body, pl.func, pl.subs);
      slid_funcs.insert(pl.func);
    }
    for (size_t i = chain.size(); i-- > 0;) {
      const LetStmt* l = chain[i];
      for (const Plan& pl : plans) {
        if (pl.last_let != i) continue;
        body = LetStmt::make(pl.slide_name, pl.slide_value, body);
        for (auto it = pl.prev.rbegin(); it != pl.prev.rend(); ++it) {
          body = LetStmt::make(it->first, it->second, body);
        }
      }
      // A producer computed here but not slid computes only what the slid loops read.
      Expr value = l->value;
      auto [func, what] = region_let(l->name);
      if (!func.empty() && !slid_funcs.count(func) && (what == "rmin" || what == "rmax")) {
        std::map<std::string, Expr> subs;
        for (const Plan& pl : plans) {
          if (pl.last_let < i) subs.insert(pl.subs.begin(), pl.subs.end());
        }
        if (!subs.empty()) value = Renamer(subs, "").mutate(value);
      }
      body = LetStmt::make(l->name, value, body);
    }
    if (body.same_as(op->body)) return op;
    return For::make(op->name, op->min, op->extent, op->for_type, body);
  }

 private:
  struct Plan {
    std::string func;
    size_t last_let = 0;                             // index of f.cmax.<last> in the chain
    std::vector<std::pair<std::string, Expr>> prev;  // the region at the previous iteration
    std::string slide_name;
    Expr slide_value;
    std::map<std::string, Expr> subs;  // for the func's stages
  };

  std::vector<Plan> plan(const For* op, const std::vector<const LetStmt*>& chain) {
    std::vector<Plan> plans;
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < chain.size(); ++i) index[chain[i]->name] = i;
    for (const std::string& name : open_) {
      const Func* f = p_.find_func(name);
      const size_t dims = f->args.size();
      auto last = index.find(dim_name(name, "cmax", dims - 1));
      if (last == index.end()) continue;
      Analyzer an(op->name);
      for (const LetStmt* l : chain) an.define(l->name, l->value);
      int moving = -1;
      bool ok = true, increasing = true;
      for (size_t d = 0; d < dims && ok; ++d) {
        if (!index.count(dim_name(name, "cmin", d))) ok = false;
        if (!ok) break;
        Dir r = combine(an.direction(var(dim_name(name, "cmin", d))),
                        an.direction(var(dim_name(name, "cmax", d))));
        if (r == Dir::Unknown || (r != Dir::Const && moving >= 0)) ok = false;
        if (r == Dir::Inc || r == Dir::Dec) {
          moving = static_cast<int>(d);
          increasing = r == Dir::Inc;
        }
      }
      if (!ok) continue;
      Plan pl;
      pl.func = name;
      pl.last_let = last->second;
      Expr first = EQ::make(var(op->name), op->min);
      SlidingWindow w;
      w.func = name;
      w.loop = op->name;
      w.dim = moving;
      if (moving < 0) {
        // The region does not move: the first iteration computes it, later ones nothing.
        std::string lo = dim_name(name, "cmin", 0), hi = dim_name(name, "cmax", 0);
        pl.slide_name = dim_name(name, "slide.min", 0);
        pl.slide_value = Select::make(first, var(lo), Add::make(var(hi), i32(1)));
        pl.subs[lo] = var(pl.slide_name);
      } else {
        size_t d = static_cast<size_t>(moving);
        std::string lo = dim_name(name, "cmin", d), hi = dim_name(name, "cmax", d);
        // The end that leads: the new part starts just past where it was last iteration.
        std::string lead = increasing ? hi : lo;
        pl.prev = previous(an, op->name, chain, index.at(lead));
        Expr before = var(lead + "$prev");
        if (increasing) {
          pl.slide_name = dim_name(name, "slide.min", d);
          pl.slide_value =
              Select::make(first, var(lo), Max::make(var(lo), Add::make(before, i32(1))));
          pl.subs[lo] = var(pl.slide_name);
        } else {
          pl.slide_name = dim_name(name, "slide.max", d);
          pl.slide_value =
              Select::make(first, var(hi), Min::make(var(hi), Sub::make(before, i32(1))));
          pl.subs[hi] = var(pl.slide_name);
        }
        w.increasing = increasing;
        std::optional<int64_t> extent = an.upper_bound(Sub::make(var(hi), var(lo)));
        if (extent && *extent >= 0 && *extent < (int64_t{1} << 30)) w.window = *extent + 1;
      }
      slid.push_back(w);
      plans.push_back(std::move(pl));
    }
    return plans;
  }

  // Copies of the chain's lets that `chain[target]` needs and that change with the loop
  // variable, evaluated one iteration earlier (named NAME$prev), in chain order.
  static std::vector<std::pair<std::string, Expr>> previous(
      Analyzer& an, const std::string& v, const std::vector<const LetStmt*>& chain, size_t target) {
    std::set<std::string> needed{chain[target]->name};
    std::vector<size_t> picked;
    for (size_t i = target + 1; i-- > 0;) {
      const LetStmt* l = chain[i];
      if (!needed.count(l->name) || !an.depends_on(l->name)) continue;
      picked.push_back(i);
      needed.merge(variable_names(l->value));
    }
    std::map<std::string, Expr> subs{{v, Sub::make(var(v), i32(1))}};
    for (size_t i : picked) subs[chain[i]->name] = var(chain[i]->name + "$prev");
    std::vector<std::pair<std::string, Expr>> out;
    for (auto it = picked.rbegin(); it != picked.rend(); ++it) {
      const LetStmt* l = chain[*it];
      out.emplace_back(l->name + "$prev", Renamer(subs, "$prev").mutate(l->value));
    }
    return out;
  }

  const Pipeline& p_;
  std::set<std::string> open_;
};

}  // namespace

SlidingResult sliding_window(const Stmt& s, const Pipeline& p) {
  Slider slider(p);
  SlidingResult r;
  r.stmt = slider.mutate(s);
  r.slid = std::move(slider.slid);
  return r;
}

}  // namespace stipple::lowering
