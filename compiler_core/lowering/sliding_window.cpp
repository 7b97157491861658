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
#include "compiler_core/lowering/region_analyzer.h"

namespace stipple::lowering {

namespace {

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
    subs_[op->name] = Variable::make_typed(value.type(), name);
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
      RegionAnalyzer an(op->name);
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
      RegionAnalyzer& an, const std::string& v, const std::vector<const LetStmt*>& chain,
      size_t target) {
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
