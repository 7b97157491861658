// The required box of every func, by the interval arithmetic of compiler_core/bounds.
#include "compiler_core/interp/bounds_inference.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_equality.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple::interp {

Interval EnvConstants::param(const std::string& name, Type t) const {
  double v = to_double(t.code, env_.param(name));
  return std::isnan(v) ? Interval::everything() : Interval::point(v);
}

Interval EnvConstants::input_extent(const std::string& input, int dim) const {
  return Interval::point(static_cast<double>(env_.input_extent(input, dim)));
}

Interval EnvConstants::free_variable(const std::string& name) const {
  STIPPLE_INTERNAL_CHECK(false, "bounds of unbound variable '" + name + "'");
  return Interval::everything();
}

std::vector<Interval> domain_intervals(const std::vector<ReductionVariable>& domain,
                                       IntervalScope& scope, const IntervalConstants& k) {
  std::vector<Interval> ranges;
  for (const ReductionVariable& rv : domain)
    ranges.push_back(bounds::reduction_range(rv, scope, k));
  return ranges;
}

namespace {

using CallCallback = std::function<void(const Call*, const std::vector<Interval>&)>;

/// Walks an expression, keeping the scope of Reduce and Let variables, and reports the
/// argument intervals of every call to a func.
class CallSiteWalker : public IRVisitor {
 public:
  CallSiteWalker(IntervalScope& scope, const IntervalConstants& k, CallCallback cb)
      : scope_(scope), k_(k), cb_(std::move(cb)) {}

  void visit(const Call* op) override {
    if (op->call_type == CallType::Func) {
      std::vector<Interval> args;
      for (const Expr& a : op->args) args.push_back(interval_of(a, scope_, k_));
      cb_(op, args);
    }
    IRVisitor::visit(op);
  }

  void visit(const Reduce* op) override {
    for (const ReductionVariable& rv : op->domain) {
      rv.min.accept(this);
      rv.max.accept(this);
    }
    std::vector<Interval> ranges = domain_intervals(op->domain, scope_, k_);
    for (const Interval& r : ranges) {
      if (r.min > r.max) return;  // the body is never evaluated
    }
    for (size_t i = 0; i < ranges.size(); ++i) scope_.emplace_back(op->domain[i].name, ranges[i]);
    op->body.accept(this);
    scope_.resize(scope_.size() - ranges.size());
  }

  void visit(const Let* op) override {
    op->value.accept(this);
    scope_.emplace_back(op->name, interval_of(op->value, scope_, k_));
    op->body.accept(this);
    scope_.pop_back();
  }

 private:
  IntervalScope& scope_;
  const IntervalConstants& k_;
  CallCallback cb_;
};

using Box = std::vector<Interval>;

/// Checks that an index interval is a usable box extent; names callee and caller if not.
void require_bounded(const Interval& iv, const std::string& callee, size_t dim,
                     const std::string& where) {
  auto limit = static_cast<double>(kMaxBoxCoordinate);
  if (iv.is_bounded() && iv.min >= -limit && iv.max <= limit) return;
  throw UserError("cannot infer the bounds of func '" + callee + "' (dimension " +
                  std::to_string(dim) + "): its index at " + where +
                  " is unbounded; clamp the index");
}

void grow(Box& box, const std::vector<Interval>& args, const std::string& callee,
          const std::string& where) {
  STIPPLE_INTERNAL_CHECK(box.size() == args.size(), "call to '" + callee + "' with " +
                                                        std::to_string(args.size()) + " arguments");
  for (size_t d = 0; d < args.size(); ++d) {
    require_bounded(args[d], callee, d, where);
    box[d] = box[d].union_with(args[d]);
  }
}

/// The scope of an update definition: its bare pure variables over the func's box and
/// its reduction variables over their ranges. False when the domain is empty.
bool update_scope(const Func& f, const UpdateDef& u, const Box& box, const IntervalConstants& k,
                  IntervalScope& scope) {
  STIPPLE_INTERNAL_CHECK(u.args.size() == f.args.size(),
                         "update of '" + f.name + "' with the wrong number of arguments");
  for (size_t d = 0; d < u.args.size(); ++d) {
    const Variable* v = u.args[d].as<Variable>();
    if (v && v->kind == VarKind::Pure) scope.emplace_back(v->name, box[d]);
  }
  std::vector<Interval> ranges = domain_intervals(u.domain, scope, k);
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].min > ranges[i].max) return false;
    scope.emplace_back(u.domain[i].name, ranges[i]);
  }
  return true;
}

void walk_update(const UpdateDef& u, CallSiteWalker& walker) {
  for (const ReductionVariable& rv : u.domain) {
    rv.min.accept(&walker);
    rv.max.accept(&walker);
  }
  for (const Expr& a : u.args) a.accept(&walker);
  u.value.accept(&walker);
}

}  // namespace

std::map<std::string, FuncBox> infer_boxes(const ConstantEnv& env,
                                           const std::vector<const Func*>& order,
                                           const FuncBox& output_box) {
  STIPPLE_INTERNAL_CHECK(!order.empty(), "bounds inference without funcs");
  const EnvConstants k(env);
  std::map<std::string, Box> required;
  Box& out = required[order.back()->name];
  for (size_t d = 0; d < output_box.min.size(); ++d) {
    out.push_back(
        {static_cast<double>(output_box.min[d]), static_cast<double>(output_box.max[d]), false});
  }
  std::map<std::string, FuncBox> result;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Func& f = **it;
    auto found = required.find(f.name);
    // Only called where the evaluator never goes (an empty reduction): not realised.
    if (found == required.end()) continue;
    Box box = found->second;
    STIPPLE_INTERNAL_CHECK(box.size() == f.args.size(),
                           "func '" + f.name + "' required with the wrong number of dimensions");

    // The func's own updates: where they store and where they read the func itself,
    // with pure variables over the box its consumers need (one pass).
    Box own = box;
    const std::string update_where = "an update of '" + f.name + "'";
    for (const UpdateDef& u : f.updates) {
      IntervalScope scope;
      if (!update_scope(f, u, box, k, scope)) continue;
      // Where the update stores: a bounded index widens the box; an unbounded one (a
      // data-dependent scatter such as grid(x/8, y/8, i32(in(x, y) * 10))) does not, and
      // the evaluator skips its stores outside the box, which nothing reads.
      for (size_t d = 0; d < u.args.size(); ++d) {
        Interval iv = interval_of(u.args[d], scope, k);
        auto limit = static_cast<double>(kMaxBoxCoordinate);
        if (iv.is_bounded() && iv.min >= -limit && iv.max <= limit) own[d] = own[d].union_with(iv);
      }
      // Reads of the func itself, except the read of the very site being stored (the
      // f(args) of `f(args) += e`), which is skipped together with its store.
      CallSiteWalker self_reads(scope, k, [&](const Call* c, const std::vector<Interval>& args) {
        if (c->name != f.name) return;
        bool same_site = c->args.size() == u.args.size();
        for (size_t d = 0; same_site && d < c->args.size(); ++d) {
          same_site = equal(c->args[d], u.args[d]);
        }
        if (!same_site) grow(own, args, f.name, update_where);
      });
      walk_update(u, self_reads);
    }
    box = own;

    FuncBox fb;
    double elements = 1;
    for (const Interval& iv : box) {
      fb.min.push_back(static_cast<int64_t>(iv.min));
      fb.max.push_back(static_cast<int64_t>(iv.max));
      elements *= iv.max - iv.min + 1;
    }
    if (elements > static_cast<double>(kMaxBoxElements)) {
      throw UserError("cannot infer the bounds of func '" + f.name +
                      "': it would be realised over " +
                      std::to_string(static_cast<int64_t>(elements)) +
                      " points, more than 2^31; clamp its indices");
    }
    result[f.name] = fb;

    // What this func needs of its callees, over its final box.
    const std::string where = "a call in '" + f.name + "'";
    auto require = [&](const Call* c, const std::vector<Interval>& args) {
      if (c->name == f.name) return;
      auto [slot, inserted] = required.try_emplace(c->name);
      if (inserted) {
        for (const Interval& a : args) {
          require_bounded(a, c->name, &a - args.data(), where);
          slot->second.push_back(a);
        }
        return;
      }
      grow(slot->second, args, c->name, where);
    };
    IntervalScope pure_scope;
    for (size_t d = 0; d < f.args.size(); ++d) pure_scope.emplace_back(f.args[d], box[d]);
    CallSiteWalker pure_walker(pure_scope, k, require);
    f.value.accept(&pure_walker);
    for (const UpdateDef& u : f.updates) {
      IntervalScope scope;
      if (!update_scope(f, u, box, k, scope)) continue;
      CallSiteWalker walker(scope, k, require);
      walk_update(u, walker);
    }
  }
  return result;
}

}  // namespace stipple::interp
