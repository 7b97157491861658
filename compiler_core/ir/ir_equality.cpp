// Structural equality and hashing. Both walk the trees with a switch over every node kind
// (no default case, so -Wswitch names this file when a node is added). Long statement
// lists are right-nested Blocks; both walk that spine in a loop instead of recursing.
#include "compiler_core/ir/ir_equality.h"

#include <bit>
#include <string>
#include <vector>

namespace stipple {

namespace {

bool same_bits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

template <typename T>
bool equal_binary(const Expr& a, const Expr& b) {
  const T* x = a.as<T>();
  const T* y = b.as<T>();
  return equal(x->a, y->a) && equal(x->b, y->b);
}

bool equal_exprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (!equal(a[i], b[i])) return false;
  }
  return true;
}

bool equal_domain(const std::vector<ReductionVariable>& a,
                  const std::vector<ReductionVariable>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (a[i].name != b[i].name || !equal(a[i].min, b[i].min) || !equal(a[i].max, b[i].max)) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a.node_type() != b.node_type() || a.type() != b.type()) return false;
  switch (a.node_type()) {
    case IRNodeType::IntImm: return a.as<IntImm>()->value == b.as<IntImm>()->value;
    case IRNodeType::FloatImm: return same_bits(a.as<FloatImm>()->value, b.as<FloatImm>()->value);
    case IRNodeType::Cast: return equal(a.as<Cast>()->value, b.as<Cast>()->value);
    case IRNodeType::Variable: {
      const Variable* x = a.as<Variable>();
      const Variable* y = b.as<Variable>();
      return x->name == y->name && x->kind == y->kind;
    }
    case IRNodeType::Param: return a.as<Param>()->name == b.as<Param>()->name;
    case IRNodeType::InputExtent: {
      const InputExtent* x = a.as<InputExtent>();
      const InputExtent* y = b.as<InputExtent>();
      return x->input == y->input && x->dim == y->dim;
    }
    case IRNodeType::Add: return equal_binary<Add>(a, b);
    case IRNodeType::Sub: return equal_binary<Sub>(a, b);
    case IRNodeType::Mul: return equal_binary<Mul>(a, b);
    case IRNodeType::Div: return equal_binary<Div>(a, b);
    case IRNodeType::Mod: return equal_binary<Mod>(a, b);
    case IRNodeType::Min: return equal_binary<Min>(a, b);
    case IRNodeType::Max: return equal_binary<Max>(a, b);
    case IRNodeType::EQ: return equal_binary<EQ>(a, b);
    case IRNodeType::NE: return equal_binary<NE>(a, b);
    case IRNodeType::LT: return equal_binary<LT>(a, b);
    case IRNodeType::LE: return equal_binary<LE>(a, b);
    case IRNodeType::GT: return equal_binary<GT>(a, b);
    case IRNodeType::GE: return equal_binary<GE>(a, b);
    case IRNodeType::And: return equal_binary<And>(a, b);
    case IRNodeType::Or: return equal_binary<Or>(a, b);
    case IRNodeType::Not: return equal(a.as<Not>()->a, b.as<Not>()->a);
    case IRNodeType::Select: {
      const Select* x = a.as<Select>();
      const Select* y = b.as<Select>();
      return equal(x->condition, y->condition) && equal(x->true_value, y->true_value) &&
             equal(x->false_value, y->false_value);
    }
    case IRNodeType::Call: {
      const Call* x = a.as<Call>();
      const Call* y = b.as<Call>();
      return x->name == y->name && x->call_type == y->call_type && x->intrinsic == y->intrinsic &&
             equal_exprs(x->args, y->args);
    }
    case IRNodeType::Reduce: {
      const Reduce* x = a.as<Reduce>();
      const Reduce* y = b.as<Reduce>();
      return x->op == y->op && equal_domain(x->domain, y->domain) && equal(x->body, y->body);
    }
    case IRNodeType::Let: {
      const Let* x = a.as<Let>();
      const Let* y = b.as<Let>();
      return x->name == y->name && equal(x->value, y->value) && equal(x->body, y->body);
    }
#define IR_STMT_CASE(N) case IRNodeType::N:
      IR_STMT_NODES(IR_STMT_CASE)
#undef IR_STMT_CASE
      break;  // an Expr never holds a statement node
  }
  return false;
}

Expr addend_to_own_site(const Expr& value, const std::string& name, const std::vector<Expr>& site) {
  auto is_own_site = [&](const Expr& e) {
    const Call* c = e.as<Call>();
    return c && c->call_type == CallType::Func && c->name == name && equal_exprs(c->args, site);
  };
  if (const Add* add = value.as<Add>()) {
    if (is_own_site(add->a)) return add->b;
    if (is_own_site(add->b)) return add->a;
    return Expr();
  }
  // `f(site) += a * b` as the language contracts it (language/contraction.h).
  const Call* fma = value.as<Call>();
  if (fma && fma->intrinsic == Intrinsic::Fma && is_own_site(fma->args[2])) {
    return Mul::make(fma->args[0], fma->args[1]);
  }
  return Expr();
}

bool equal(const Stmt& a, const Stmt& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a.node_type() != b.node_type()) return false;
  switch (a.node_type()) {
    case IRNodeType::LetStmt: {
      const LetStmt* x = a.as<LetStmt>();
      const LetStmt* y = b.as<LetStmt>();
      return x->name == y->name && equal(x->value, y->value) && equal(x->body, y->body);
    }
    case IRNodeType::For: {
      const For* x = a.as<For>();
      const For* y = b.as<For>();
      return x->name == y->name && x->for_type == y->for_type && equal(x->min, y->min) &&
             equal(x->extent, y->extent) && equal(x->body, y->body);
    }
    case IRNodeType::Provide: {
      const Provide* x = a.as<Provide>();
      const Provide* y = b.as<Provide>();
      return x->name == y->name && x->atomic == y->atomic && equal(x->value, y->value) &&
             equal_exprs(x->args, y->args);
    }
    case IRNodeType::Allocate: {
      const Allocate* x = a.as<Allocate>();
      const Allocate* y = b.as<Allocate>();
      return x->name == y->name && x->type == y->type && equal_exprs(x->extents, y->extents) &&
             equal(x->body, y->body);
    }
    case IRNodeType::Block: {
      Stmt x = a, y = b;
      while (x.as<Block>() && y.as<Block>()) {
        if (!equal(x.as<Block>()->first, y.as<Block>()->first)) return false;
        Stmt xr = x.as<Block>()->rest, yr = y.as<Block>()->rest;
        x = std::move(xr);
        y = std::move(yr);
      }
      return equal(x, y);
    }
    case IRNodeType::IfThenElse: {
      const IfThenElse* x = a.as<IfThenElse>();
      const IfThenElse* y = b.as<IfThenElse>();
      return equal(x->condition, y->condition) && equal(x->then_case, y->then_case) &&
             equal(x->else_case, y->else_case);
    }
    case IRNodeType::Evaluate: return equal(a.as<Evaluate>()->value, b.as<Evaluate>()->value);
#define IR_EXPR_CASE(N) case IRNodeType::N:
      IR_EXPR_NODES(IR_EXPR_CASE)
#undef IR_EXPR_CASE
      break;  // a Stmt never holds an expression node
  }
  return false;
}

bool equal(const Pipeline& a, const Pipeline& b) {
  if (a.name != b.name || a.inputs.size() != b.inputs.size() ||
      a.params.size() != b.params.size() || a.funcs.size() != b.funcs.size()) {
    return false;
  }
  for (size_t i = 0; i < a.inputs.size(); i++) {
    const InputDecl& x = a.inputs[i];
    const InputDecl& y = b.inputs[i];
    if (x.name != y.name || x.type != y.type || x.dim_names != y.dim_names ||
        x.boundary != y.boundary || !same_bits(x.boundary_value, y.boundary_value)) {
      return false;
    }
  }
  for (size_t i = 0; i < a.params.size(); i++) {
    const ParamDecl& x = a.params[i];
    const ParamDecl& y = b.params[i];
    if (x.name != y.name || x.type != y.type || !same_bits(x.default_value, y.default_value)) {
      return false;
    }
  }
  for (size_t i = 0; i < a.funcs.size(); i++) {
    const Func& x = a.funcs[i];
    const Func& y = b.funcs[i];
    if (x.name != y.name || x.args != y.args || x.type != y.type || !equal(x.value, y.value) ||
        x.updates.size() != y.updates.size()) {
      return false;
    }
    for (size_t j = 0; j < x.updates.size(); j++) {
      const UpdateDef& u = x.updates[j];
      const UpdateDef& v = y.updates[j];
      if (!equal_exprs(u.args, v.args) || !equal(u.value, v.value) ||
          !equal_domain(u.domain, v.domain)) {
        return false;
      }
    }
  }
  return a.output.func == b.output.func && equal_exprs(a.output.extents, b.output.extents) &&
         a.output.metric == b.output.metric;
}

// ---------------------------------------------------------------------------------------
// Hashing

namespace {

// Feeds 64-bit words through a multiply-rotate mix. Everything is reduced to integers
// in a fixed order (strings byte by byte, floats by bit pattern), so the result does not
// depend on the machine's byte order, on pointers or on std::hash.
class Hasher {
 public:
  void add(uint64_t v) {
    h_ ^= v + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2);
    h_ = std::rotl(h_ * 0xff51afd7ed558ccdULL, 31);
  }
  void add(const std::string& s) {
    add(static_cast<uint64_t>(s.size()));
    uint64_t word = 0;
    int n = 0;
    for (unsigned char c : s) {
      word |= static_cast<uint64_t>(c) << (8 * n);
      if (++n == 8) {
        add(word);
        word = 0;
        n = 0;
      }
    }
    if (n) add(word);
  }
  void add(double d) { add(std::bit_cast<uint64_t>(d)); }
  void add(Type t) {
    add(static_cast<uint64_t>(t.code));
    add(static_cast<uint64_t>(static_cast<uint32_t>(t.lanes)));
  }

  void add(const Expr& e);
  void add(const Stmt& s);
  void add(const std::vector<Expr>& es) {
    add(static_cast<uint64_t>(es.size()));
    for (const Expr& e : es) add(e);
  }
  void add(const std::vector<ReductionVariable>& domain) {
    add(static_cast<uint64_t>(domain.size()));
    for (const ReductionVariable& rv : domain) {
      add(rv.name);
      add(rv.min);
      add(rv.max);
    }
  }

  uint64_t result() const {
    // A final avalanche (murmur3's fmix64) so nearby trees spread over all bits.
    uint64_t h = h_;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
  }

 private:
  template <typename T>
  void binary(const Expr& e) {
    add(e.as<T>()->a);
    add(e.as<T>()->b);
  }

  uint64_t h_ = 0x243f6a8885a308d3ULL;
};

// Distinct markers for an undefined handle and for node kinds, so that no two different
// trees feed the same word sequence by accident of field layout.
constexpr uint64_t kUndefined = 0xdeadull;
constexpr uint64_t kNodeBase = 0x100ull;

void Hasher::add(const Expr& e) {
  if (!e.defined()) {
    add(kUndefined);
    return;
  }
  add(kNodeBase + static_cast<uint64_t>(e.node_type()));
  add(e.type());
  switch (e.node_type()) {
    case IRNodeType::IntImm: add(static_cast<uint64_t>(e.as<IntImm>()->value)); return;
    case IRNodeType::FloatImm: add(e.as<FloatImm>()->value); return;
    case IRNodeType::Cast: add(e.as<Cast>()->value); return;
    case IRNodeType::Variable:
      add(e.as<Variable>()->name);
      add(static_cast<uint64_t>(e.as<Variable>()->kind));
      return;
    case IRNodeType::Param: add(e.as<Param>()->name); return;
    case IRNodeType::InputExtent:
      add(e.as<InputExtent>()->input);
      add(static_cast<uint64_t>(e.as<InputExtent>()->dim));
      return;
    case IRNodeType::Add: binary<Add>(e); return;
    case IRNodeType::Sub: binary<Sub>(e); return;
    case IRNodeType::Mul: binary<Mul>(e); return;
    case IRNodeType::Div: binary<Div>(e); return;
    case IRNodeType::Mod: binary<Mod>(e); return;
    case IRNodeType::Min: binary<Min>(e); return;
    case IRNodeType::Max: binary<Max>(e); return;
    case IRNodeType::EQ: binary<EQ>(e); return;
    case IRNodeType::NE: binary<NE>(e); return;
    case IRNodeType::LT: binary<LT>(e); return;
    case IRNodeType::LE: binary<LE>(e); return;
    case IRNodeType::GT: binary<GT>(e); return;
    case IRNodeType::GE: binary<GE>(e); return;
    case IRNodeType::And: binary<And>(e); return;
    case IRNodeType::Or: binary<Or>(e); return;
    case IRNodeType::Not: add(e.as<Not>()->a); return;
    case IRNodeType::Select: {
      const Select* op = e.as<Select>();
      add(op->condition);
      add(op->true_value);
      add(op->false_value);
      return;
    }
    case IRNodeType::Call: {
      const Call* op = e.as<Call>();
      add(op->name);
      add(static_cast<uint64_t>(op->call_type));
      add(static_cast<uint64_t>(op->intrinsic));
      add(op->args);
      return;
    }
    case IRNodeType::Reduce: {
      const Reduce* op = e.as<Reduce>();
      add(static_cast<uint64_t>(op->op));
      add(op->domain);
      add(op->body);
      return;
    }
    case IRNodeType::Let: {
      const Let* op = e.as<Let>();
      add(op->name);
      add(op->value);
      add(op->body);
      return;
    }
#define IR_STMT_CASE(N) case IRNodeType::N:
      IR_STMT_NODES(IR_STMT_CASE)
#undef IR_STMT_CASE
      return;
  }
}

void Hasher::add(const Stmt& s) {
  Stmt cur = s;
  // Blocks: hash each element of the right spine in turn, then the final statement.
  while (const Block* b = cur.as<Block>()) {
    add(kNodeBase + static_cast<uint64_t>(IRNodeType::Block));
    add(b->first);
    Stmt rest = b->rest;
    cur = std::move(rest);
  }
  if (!cur.defined()) {
    add(kUndefined);
    return;
  }
  add(kNodeBase + static_cast<uint64_t>(cur.node_type()));
  switch (cur.node_type()) {
    case IRNodeType::LetStmt: {
      const LetStmt* op = cur.as<LetStmt>();
      add(op->name);
      add(op->value);
      add(op->body);
      return;
    }
    case IRNodeType::For: {
      const For* op = cur.as<For>();
      add(op->name);
      add(static_cast<uint64_t>(op->for_type));
      add(op->min);
      add(op->extent);
      add(op->body);
      return;
    }
    case IRNodeType::Provide: {
      const Provide* op = cur.as<Provide>();
      add(op->name);
      add(static_cast<uint64_t>(op->atomic));
      add(op->value);
      add(op->args);
      return;
    }
    case IRNodeType::Allocate: {
      const Allocate* op = cur.as<Allocate>();
      add(op->name);
      add(op->type);
      add(op->extents);
      add(op->body);
      return;
    }
    case IRNodeType::IfThenElse: {
      const IfThenElse* op = cur.as<IfThenElse>();
      add(op->condition);
      add(op->then_case);
      add(op->else_case);
      return;
    }
    case IRNodeType::Evaluate: add(cur.as<Evaluate>()->value); return;
    case IRNodeType::Block: return;  // consumed by the loop above
#define IR_EXPR_CASE(N) case IRNodeType::N:
      IR_EXPR_NODES(IR_EXPR_CASE)
#undef IR_EXPR_CASE
      return;
  }
}

}  // namespace

uint64_t structural_hash(const Expr& e) {
  Hasher h;
  h.add(e);
  return h.result();
}

uint64_t structural_hash(const Stmt& s) {
  Hasher h;
  h.add(s);
  return h.result();
}

uint64_t structural_hash(const Pipeline& p) {
  Hasher h;
  h.add(p.name);
  h.add(static_cast<uint64_t>(p.inputs.size()));
  for (const InputDecl& in : p.inputs) {
    h.add(in.name);
    h.add(in.type);
    h.add(static_cast<uint64_t>(in.dim_names.size()));
    for (const std::string& d : in.dim_names) h.add(d);
    h.add(static_cast<uint64_t>(in.boundary));
    h.add(in.boundary_value);
  }
  h.add(static_cast<uint64_t>(p.params.size()));
  for (const ParamDecl& param : p.params) {
    h.add(param.name);
    h.add(param.type);
    h.add(param.default_value);
  }
  h.add(static_cast<uint64_t>(p.funcs.size()));
  for (const Func& f : p.funcs) {
    h.add(f.name);
    h.add(static_cast<uint64_t>(f.args.size()));
    for (const std::string& a : f.args) h.add(a);
    h.add(f.type);
    h.add(f.value);
    h.add(static_cast<uint64_t>(f.updates.size()));
    for (const UpdateDef& u : f.updates) {
      h.add(u.args);
      h.add(u.value);
      h.add(u.domain);
    }
  }
  h.add(p.output.func);
  h.add(p.output.extents);
  h.add(static_cast<uint64_t>(p.output.metric));
  return h.result();
}

}  // namespace stipple
