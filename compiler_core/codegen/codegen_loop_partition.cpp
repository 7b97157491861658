// Loop partitioning of input reads. A read of an input checks, where it runs, whether its
// coordinates lie inside the image, and maps them by the boundary condition when they do
// not. In an image-wide loop only the first and last few iterations ever need the mapping,
// yet every iteration pays for the check: in demosaic's horizontal stages the check of a
// three-tap row read was a third of the loop's instructions (a serial loop over vectors of
// 16 lanes, each with one corner check, codegen_input_rows.cpp). Like Halide's
// partition_loops, a serial loop is split into the iterations where every read it can
// analyse is inside the image, which read without checks, and the rest, which keep the
// general code.
//
// Which iterations: a read's coordinate, with the Lets bound inside the loop substituted,
// is often affine: k * v + sum of c * u + invariant terms, where v is the loop's variable,
// u are variables with a known range that does not change in the loop (a vector loop's
// lanes, an unrolled loop's or a reduction's variable) and k, c are constants. Over the
// ranges of the u it lies in [k * v + A, k * v + B], so the iterations where it is inside
// [0, extent) form an interval of v, and the loop's interior is the intersection of those
// intervals. A, B and the interval are computed in i64 before the loop, from the i32 values
// of the invariant terms. That is exact for the wrapping i32 arithmetic the read itself
// does: the i32 coordinate equals the affine value modulo 2^32 (sums and products by
// constants commute with the wrap), so when the affine value is in [0, extent), which is
// below 2^31, the i32 coordinate is that same value.
//
// The guards that lowering puts around a stage's body (a split's tail, `x <= x.max`, and a
// scatter's box) are partitioned on the same way when their condition compares linear
// forms: the interior is also limited to the iterations where the guard holds for every
// lane (both sides within i32, so that the i32 comparison is the forms' comparison), and
// there the body runs without it (no mask, no masked store). Guards with an else branch
// (a stored select) are left alone: limiting the interior to where one side runs could
// leave the other side's iterations all in the general copy.
//
// The body is emitted twice, not three times: the general loop runs over all iterations
// and, on reaching the interior's first iteration, runs the interior loop (the second
// copy, its analysed reads unchecked) and continues after its last. Compile time grows
// with the code: the general copy leaves its reductions unversioned, so a reduction's
// code is there twice, as it was before partitioning (once checked per read, once not).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler_core/codegen/codegen_internal.h"
#include "compiler_core/ir/ir_visitor.h"

namespace stipple::codegen {

namespace {

// Coefficients and constants stay below 2^24 in magnitude and a form has at most kMaxTerms
// terms, so the i64 sums of coefficients times i32 values cannot overflow.
constexpr int64_t kMaxCoefficient = int64_t{1} << 24;
constexpr size_t kMaxTerms = 16;

/// A variable with a range that does not change inside the loop: [min, min + extent - 1]
/// for a loop's variable, [min, max] for a reduction's (is_extent false).
struct VarRange {
  Expr min, bound;
  bool is_extent = true;
};

/// An i32 expression as constant + sum of coefficient * ranged variable + sum of
/// coefficient * invariant expression. Ranged variables are keyed by their binding (a
/// number, 0 for the partitioned loop's variable), not their name, so that shadowing
/// cannot mix two of them up.
struct LinearForm {
  int64_t constant = 0;
  std::map<int, std::pair<int64_t, VarRange>> vars;
  std::vector<std::pair<int64_t, Expr>> invariants;

  size_t size() const { return vars.size() + invariants.size(); }
};

bool small(int64_t v) { return v > -kMaxCoefficient && v < kMaxCoefficient; }

std::optional<LinearForm> combine(std::optional<LinearForm> a, const std::optional<LinearForm>& b,
                                  int64_t sign) {
  if (!a || !b) return std::nullopt;
  a->constant += sign * b->constant;
  for (const auto& [id, term] : b->vars) {
    auto [it, fresh] = a->vars.try_emplace(id, 0, term.second);
    it->second.first += sign * term.first;
    if (!small(it->second.first)) return std::nullopt;
  }
  for (const auto& [c, e] : b->invariants) a->invariants.emplace_back(sign * c, e);
  if (!small(a->constant) || a->size() > kMaxTerms) return std::nullopt;
  return a;
}

std::optional<LinearForm> scaled(std::optional<LinearForm> a, int64_t c) {
  if (!a || !small(c)) return std::nullopt;
  a->constant *= c;
  if (!small(a->constant)) return std::nullopt;
  for (auto& [id, term] : a->vars) {
    term.first *= c;
    if (!small(term.first)) return std::nullopt;
  }
  for (auto& [k, e] : a->invariants) {
    k *= c;
    if (!small(k)) return std::nullopt;
  }
  return a;
}

/// The input reads of a loop body whose coordinates are linear forms in the loop's variable
/// (see the top of the file), found without descending into nested serial or parallel
/// loops: a body that has one is not partitioned (the inner loop is, on its own).
class InteriorReads : public IRVisitor {
 public:
  explicit InteriorReads(const std::string& loop_var) : loop_var_(loop_var) {}

  struct Read {
    const Call* call;
    std::vector<LinearForm> coords;
  };
  /// lhs + slack <= rhs, compared as i32 values; difference is rhs - lhs.
  struct Comparison {
    LinearForm lhs, rhs, difference;
    int64_t slack;
  };
  /// An `if` without else (a split's tail guard, a scatter's box) whose condition is a
  /// conjunction of comparisons of linear forms, at least one of which moves with the loop.
  struct Guard {
    const IfThenElse* op;
    std::vector<Comparison> parts;
  };
  bool nested_loop = false;
  bool reads_func = false;  // the body loads from a func's buffer

  void visit(const IfThenElse* op) override {
    IRVisitor::visit(op);
    Guard guard{op, {}};
    bool moves = false;
    if (!op->else_case.defined() && comparisons(op->condition, &guard.parts)) {
      for (const Comparison& c : guard.parts) moves = moves || c.difference.vars.count(0) > 0;
    }
    if (moves) {
      all_guards_.push_back(std::move(guard));
    } else {
      guards_left_alone_.insert(op);
    }
  }

  void visit(const For* op) override {
    op->min.accept(this);
    op->extent.accept(this);
    if (op->for_type == ForType::Serial || op->for_type == ForType::Parallel) {
      nested_loop = true;
      return;
    }
    push_range(op->name, op->min, op->extent, true);
    op->body.accept(this);
    scope_.pop_back();
  }
  void visit(const LetStmt* op) override {
    op->value.accept(this);
    scope_.push_back({op->name, linear(op->value), std::nullopt, next_id_++});
    op->body.accept(this);
    scope_.pop_back();
  }
  void visit(const Let* op) override {
    op->value.accept(this);
    scope_.push_back({op->name, linear(op->value), std::nullopt, next_id_++});
    op->body.accept(this);
    scope_.pop_back();
  }
  void visit(const Reduce* op) override {
    for (const ReductionVariable& rv : op->domain) {
      rv.min.accept(this);
      rv.max.accept(this);
    }
    // The domain's bounds are evaluated outside the reduction: its own variables do not
    // bind in them.
    std::vector<bool> invariant_bounds;
    for (const ReductionVariable& rv : op->domain) {
      invariant_bounds.push_back(invariant(rv.min) && invariant(rv.max));
    }
    for (size_t i = 0; i < op->domain.size(); ++i) {
      const ReductionVariable& rv = op->domain[i];
      if (invariant_bounds[i]) {
        scope_.push_back({rv.name, std::nullopt, VarRange{rv.min, rv.max, false}, next_id_++});
      } else {
        scope_.push_back({rv.name, std::nullopt, std::nullopt, next_id_++});
      }
    }
    op->body.accept(this);
    scope_.resize(scope_.size() - op->domain.size());
  }
  void visit(const Call* op) override {
    IRVisitor::visit(op);
    reads_func = reads_func || op->call_type == CallType::Func;
    if (op->call_type != CallType::Input) return;
    Read read{op, {}};
    bool moves = false;  // with the loop's variable: a read that does not is left alone
    for (const Expr& a : op->args) {
      std::optional<LinearForm> form = linear(a);
      if (!form) {
        left_alone_.insert(op);
        return;
      }
      moves = moves || form->vars.count(0) > 0;
      read.coords.push_back(std::move(*form));
    }
    if (moves) {
      reads.push_back(std::move(read));
    } else {
      left_alone_.insert(op);
    }
  }

  /// The reads to partition on. A node may occur at several places of the body (the IR
  /// shares subexpressions), and the interior reads a node unchecked wherever it occurs,
  /// so a node counts only when every occurrence was analysed; each adds its constraints.
  std::vector<Read> partitioned_reads() const {
    std::vector<Read> kept;
    for (const Read& r : reads) {
      if (!left_alone_.count(r.call)) kept.push_back(r);
    }
    return kept;
  }
  /// The guards to partition on, likewise.
  std::vector<Guard> guards() const {
    std::vector<Guard> kept;
    for (const Guard& g : all_guards_) {
      if (!guards_left_alone_.count(g.op)) kept.push_back(g);
    }
    return kept;
  }

 private:
  /// A name bound inside the body: a Let's value as a linear form (nullopt when it is not
  /// one), or a ranged variable (nullopt when its range changes inside the loop).
  struct Binding {
    std::string name;
    std::optional<LinearForm> let;
    std::optional<VarRange> range;
    int id;
  };

  void push_range(const std::string& name, const Expr& min, const Expr& bound, bool is_extent) {
    if (invariant(min) && invariant(bound)) {
      scope_.push_back({name, std::nullopt, VarRange{min, bound, is_extent}, next_id_++});
    } else {
      scope_.push_back({name, std::nullopt, std::nullopt, next_id_++});
    }
  }

  /// `e` as a conjunction of comparisons of linear forms; false when it is not one.
  bool comparisons(const Expr& e, std::vector<Comparison>* out) const {
    if (const And* a = e.as<And>()) return comparisons(a->a, out) && comparisons(a->b, out);
    Expr lhs, rhs;
    int64_t slack = 0;
    if (const LE* c = e.as<LE>()) {
      lhs = c->a, rhs = c->b;
    } else if (const LT* c = e.as<LT>()) {
      lhs = c->a, rhs = c->b, slack = 1;
    } else if (const GE* c = e.as<GE>()) {
      lhs = c->b, rhs = c->a;
    } else if (const GT* c = e.as<GT>()) {
      lhs = c->b, rhs = c->a, slack = 1;
    } else {
      return false;
    }
    std::optional<LinearForm> l = linear(lhs), r = linear(rhs);
    std::optional<LinearForm> difference = combine(r, l, -1);
    if (!difference) return false;
    out->push_back({std::move(*l), std::move(*r), std::move(*difference), slack});
    return true;
  }

  const Binding* find(const std::string& name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
      if (it->name == name) return &*it;
    }
    return nullptr;
  }

  /// Whether `e` has the same value in every iteration of the loop: it names nothing bound
  /// in the body (nor the loop's variable) and loads nothing (a func may be written in the
  /// loop).
  bool invariant(const Expr& e) const {
    std::set<std::string> bound{loop_var_};
    for (const Binding& b : scope_) bound.insert(b.name);
    return !mentions(e, bound, /*or_loads=*/true);
  }

  std::optional<LinearForm> linear(const Expr& e) const {
    if (e.type() != Int32()) return std::nullopt;
    LinearForm form;
    switch (e.node_type()) {
      case IRNodeType::IntImm: form.constant = e.as<IntImm>()->value; return form;
      case IRNodeType::Variable: {
        const std::string& name = e.as<Variable>()->name;
        if (const Binding* b = find(name)) {
          if (b->let) return b->let;
          if (!b->range) return std::nullopt;
          form.vars.emplace(b->id, std::make_pair(int64_t{1}, *b->range));
          return form;
        }
        if (name == loop_var_) {
          form.vars.emplace(0, std::make_pair(int64_t{1}, VarRange{}));
          return form;
        }
        form.invariants.emplace_back(1, e);
        return form;
      }
      case IRNodeType::Add: return combine(linear(e.as<Add>()->a), linear(e.as<Add>()->b), 1);
      case IRNodeType::Sub: return combine(linear(e.as<Sub>()->a), linear(e.as<Sub>()->b), -1);
      case IRNodeType::Mul: {
        const Mul* m = e.as<Mul>();
        if (const IntImm* k = m->a.as<IntImm>()) return scaled(linear(m->b), k->value);
        if (const IntImm* k = m->b.as<IntImm>()) return scaled(linear(m->a), k->value);
        break;
      }
      default: break;
    }
    if (!invariant(e)) return std::nullopt;
    form.invariants.emplace_back(1, e);
    return form;
  }

  std::string loop_var_;
  std::vector<Read> reads;            // every analysed occurrence
  std::set<const Call*> left_alone_;  // reads with an occurrence not analysed
  std::vector<Guard> all_guards_;
  std::set<const IfThenElse*> guards_left_alone_;
  std::vector<Binding> scope_;
  int next_id_ = 1;  // 0 is the loop's variable
};

}  // namespace

llvm::Value* CodeGen::floor_div_i64(llvm::Value* a, int64_t k) {
  llvm::Value* q = b_.CreateSDiv(a, i64(k));
  llvm::Value* r = b_.CreateSRem(a, i64(k));
  return b_.CreateSub(q, b_.CreateZExt(b_.CreateICmpSLT(r, i64(0)), b_.getInt64Ty()));
}

bool CodeGen::emit_partitioned_loop(const For* op, llvm::Value* min, llvm::Value* extent) {
  if (vector_mode()) return false;
  InteriorReads analysis(op->name);
  op->body.accept(&analysis);
  const std::vector<InteriorReads::Read> reads = analysis.partitioned_reads();
  const std::vector<InteriorReads::Guard> guards = analysis.guards();
  // A loop with guards and no input reads is partitioned too when it reads a func: a
  // vector loop over a func's columns (max_filter's vertical maxima, computed per row)
  // checked its tail guard every iteration and kept its table reads in the guarded block,
  // where LLVM cannot hoist them. Its guarded body had an unmasked copy already (masked
  // func loads), so partitioning adds little code; a body that loads no func had one
  // masked copy, and a second would cost compile time for a plain store's worth.
  if (analysis.nested_loop || (reads.empty() && (guards.empty() || !analysis.reads_func))) {
    return false;
  }

  // The interior [lo, hi] (i64) of the loop's iterations [min, max].
  llvm::Value* min64 = b_.CreateSExt(min, b_.getInt64Ty());
  llvm::Value* max64 =
      b_.CreateSub(b_.CreateAdd(min64, b_.CreateSExt(extent, b_.getInt64Ty())), i64(1));
  llvm::Value* lo = min64;
  llvm::Value* hi = max64;
  // A loop whose iterations wrap past INT32_MAX (as emit_counted_loop allows) stays general.
  llvm::Value* ok = b_.CreateICmpSLE(max64, i64(INT32_MAX));
  auto value_of = [&](const Expr& e) { return b_.CreateSExt(emit(e), b_.getInt64Ty()); };
  // Narrows [lo, hi] (or clears ok) to the iterations v where `form`, over every value of
  // its ranged variables, lies in [at_least, at_most] (i64; null: unbounded).
  auto constrain = [&](const LinearForm& form, llvm::Value* at_least, llvm::Value* at_most) {
    // The form lies in [k * v + low, k * v + high] over the ranged variables.
    llvm::Value* low = i64(form.constant);
    for (const auto& [c, e] : form.invariants) {
      low = b_.CreateAdd(low, b_.CreateMul(i64(c), value_of(e)));
    }
    llvm::Value* high = low;
    int64_t k = 0;
    for (const auto& [id, term] : form.vars) {
      const auto& [c, range] = term;
      if (id == 0) {
        k = c;
        continue;
      }
      llvm::Value* first = value_of(range.min);
      llvm::Value* last = range.is_extent
                              ? b_.CreateSub(b_.CreateAdd(first, value_of(range.bound)), i64(1))
                              : value_of(range.bound);
      llvm::Value* at_first = b_.CreateMul(i64(c), first);
      llvm::Value* at_last = b_.CreateMul(i64(c), last);
      low = b_.CreateAdd(low, c > 0 ? at_first : at_last);
      high = b_.CreateAdd(high, c > 0 ? at_last : at_first);
    }
    auto raise_lo = [&](llvm::Value* from) {
      lo = b_.CreateSelect(b_.CreateICmpSGT(from, lo), from, lo);
    };
    auto lower_hi = [&](llvm::Value* to) {
      hi = b_.CreateSelect(b_.CreateICmpSLT(to, hi), to, hi);
    };
    if (at_least) {
      llvm::Value* room = b_.CreateSub(low, at_least);  // k * v + room >= 0
      if (k == 0) ok = b_.CreateAnd(ok, b_.CreateICmpSGE(room, i64(0)));
      if (k > 0) raise_lo(b_.CreateNeg(floor_div_i64(room, k)));  // v >= ceil(-room / k)
      if (k < 0) lower_hi(floor_div_i64(room, -k));               // v <= room / -k
    }
    if (at_most) {
      llvm::Value* room = b_.CreateSub(at_most, high);  // k * v <= room
      if (k == 0) ok = b_.CreateAnd(ok, b_.CreateICmpSGE(room, i64(0)));
      if (k > 0) lower_hi(floor_div_i64(room, k));
      if (k < 0) raise_lo(b_.CreateNeg(floor_div_i64(room, -k)));  // v >= ceil(-room / -k)
    }
  };
  for (const InteriorReads::Read& read : reads) {
    const BufferInfo& buf = find_buffer(read.call->name);
    if (static_cast<int>(read.coords.size()) != buf.dims) continue;
    for (size_t d = 0; d < read.coords.size(); ++d) {
      constrain(read.coords[d], i64(0), b_.CreateSub(buf.extent[d], i64(1)));
    }
  }
  // A guard holds where each side of each comparison is within i32 (so that the i32
  // values compared are the linear forms' values) and their difference is at least the
  // slack.
  for (const InteriorReads::Guard& guard : guards) {
    for (const InteriorReads::Comparison& c : guard.parts) {
      constrain(c.lhs, i64(INT32_MIN), i64(INT32_MAX));
      constrain(c.rhs, i64(INT32_MIN), i64(INT32_MAX));
      constrain(c.difference, i64(c.slack), nullptr);
    }
  }
  llvm::Value* have_interior = b_.CreateAnd(ok, b_.CreateICmpSLE(lo, hi));
  llvm::Value* lo32 = b_.CreateTrunc(lo, b_.getInt32Ty());
  llvm::Value* hi32 = b_.CreateTrunc(hi, b_.getInt32Ty());

  // for i in [min, min + extent): if i is the interior's first iteration, run the interior
  // loop and continue after it, else run the general body.
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::Value* end = b_.CreateAdd(min, extent);  // wraps like emit_counted_loop's
  llvm::BasicBlock* loop = new_block(op->name + ".loop");
  llvm::BasicBlock* general = new_block(op->name + ".general");
  llvm::BasicBlock* interior = new_block(op->name + ".interior");
  llvm::BasicBlock* next_bb = new_block(op->name + ".next");
  llvm::BasicBlock* after = new_block(op->name + ".end");
  b_.CreateCondBr(b_.CreateICmpSGT(extent, i32(0)), loop, after);
  b_.SetInsertPoint(loop);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt32Ty(), 2, op->name);
  i->addIncoming(min, pre);
  b_.CreateCondBr(b_.CreateAnd(have_interior, b_.CreateICmpEQ(i, lo32)), interior, general);
  auto body_at = [&](llvm::Value* v) {
    push_var(op->name, v);
    emit(op->body);
    pop_var();
  };

  // The general copy runs the few iterations at the image's edges (and whole loops whose
  // interior is empty, such as rows outside the image): its reductions over the partitioned
  // reads are not versioned as well (codegen_input_rows.cpp), which would be a third copy
  // of their code for little run time.
  b_.SetInsertPoint(general);
  const std::set<const Call*> saved_edge = edge_reads_;
  const std::set<const IfThenElse*> saved_edge_guards = edge_guards_;
  for (const InteriorReads::Read& read : reads) edge_reads_.insert(read.call);
  for (const InteriorReads::Guard& guard : guards) edge_guards_.insert(guard.op);
  body_at(i);
  edge_reads_ = saved_edge;
  edge_guards_ = saved_edge_guards;
  llvm::Value* after_general = b_.CreateAdd(i, i32(1));
  llvm::BasicBlock* general_end = b_.GetInsertBlock();
  b_.CreateBr(next_bb);

  b_.SetInsertPoint(interior);
  const std::set<const Call*> saved = inside_rows_;
  const std::set<const IfThenElse*> saved_guards = true_guards_;
  for (const InteriorReads::Read& read : reads) inside_rows_.insert(read.call);
  for (const InteriorReads::Guard& guard : guards) true_guards_.insert(guard.op);
  emit_inclusive_loop(op->name + ".inside", lo32, hi32, body_at);
  inside_rows_ = saved;
  true_guards_ = saved_guards;
  llvm::Value* after_interior = b_.CreateAdd(hi32, i32(1));
  llvm::BasicBlock* interior_end = b_.GetInsertBlock();
  b_.CreateBr(next_bb);

  b_.SetInsertPoint(next_bb);
  llvm::PHINode* next = b_.CreatePHI(b_.getInt32Ty(), 2);
  next->addIncoming(after_general, general_end);
  next->addIncoming(after_interior, interior_end);
  i->addIncoming(next, next_bb);
  b_.CreateCondBr(b_.CreateICmpNE(next, end), loop, after);
  b_.SetInsertPoint(after);
  return true;
}

}  // namespace stipple::codegen
