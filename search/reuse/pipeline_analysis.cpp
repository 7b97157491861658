#include "search/reuse/pipeline_analysis.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_visitor.h"
#include "compiler_core/ir/substitute.h"

namespace stipple::search::reuse {

namespace {

// Every call to a func or input in an expression, with the reduction variables in scope.
class ReadCollector : public IRVisitor {
 public:
  ReadCollector(std::vector<ReductionVariable> outer,
                std::function<void(const Call*, const std::vector<ReductionVariable>&)> on_call)
      : scope_(std::move(outer)), on_call_(std::move(on_call)) {}

  void visit(const Call* op) override {
    if (op->call_type != CallType::Intrinsic) {
      if (lets_.empty()) {
        on_call_(op, scope_);
      } else {
        // Indices through a Let's variable are analysed as the Let's value.
        Expr call = substitute(Expr(op), lets_);
        on_call_(call.as<Call>(), scope_);
      }
    }
    IRVisitor::visit(op);
  }
  void visit(const Reduce* op) override {
    for (const ReductionVariable& rv : op->domain) {
      rv.min.accept(this);
      rv.max.accept(this);
    }
    size_t before = scope_.size();
    for (const ReductionVariable& rv : op->domain) scope_.push_back(rv);
    op->body.accept(this);
    scope_.resize(before);
  }
  void visit(const Let* op) override {
    op->value.accept(this);
    auto saved = lets_;
    lets_[op->name] = substitute(op->value, lets_);
    op->body.accept(this);
    lets_ = std::move(saved);
  }

 private:
  std::vector<ReductionVariable> scope_;
  std::map<std::string, Expr> lets_;  // the Lets in scope, their values substituted
  std::function<void(const Call*, const std::vector<ReductionVariable>&)> on_call_;
};

class VarNames : public IRVisitor {
 public:
  std::set<std::string> names;
  void visit(const Variable* op) override { names.insert(op->name); }
};

// Binds a read site's scope: the consumer's loop variables to `loop_interval(dim)` and its
// reduction variables to their ranges (each range may use the variables bound before it).
template <typename F>
void bind_scope(const ReadSite& site, F loop_interval, IntervalScope& scope,
                const IndexConstants& k) {
  for (const auto& [name, dim] : site.loop_vars) scope.push_back({name, loop_interval(dim)});
  for (const ReductionVariable& rv : site.reductions) {
    scope.push_back({rv.name, reduction_range(rv, scope, k)});
  }
}

}  // namespace

double Reuse::max_amount() const {
  double m = 0;
  for (double v : amount) m = std::max(m, v);
  return m;
}

PipelineAnalysis::PipelineAnalysis(const Pipeline& p, const std::vector<int64_t>& output_extents)
    : p_(&p), k_(make_index_constants(p, output_extents)), extents_(output_extents) {
  for (const InputDecl& in : p.inputs) {
    Node n;
    n.name = in.name;
    n.is_input = true;
    n.dims = in.dim_names;
    n.elem_bytes = bytes_of(in.type.code);
    index_[n.name] = int(nodes_.size());
    nodes_.push_back(std::move(n));
  }
  for (const Func& f : p.funcs) {
    Node n;
    n.name = f.name;
    n.func = &f;
    n.dims = f.args;
    n.elem_bytes = bytes_of(f.type.code);
    n.has_updates = !f.updates.empty();
    index_[n.name] = int(nodes_.size());
    nodes_.push_back(std::move(n));
  }
  output_ = find(p.output.func);
  STIPPLE_INTERNAL_CHECK(output_ >= 0, "the output func is not in the pipeline");
  if (extents_.size() < nodes_[output_].dims.size()) {
    extents_.resize(nodes_[output_].dims.size(), 1);
  }
  for (int i = 0; i < int(nodes_.size()); ++i) {
    if (!nodes_[i].is_input) collect_reads(i);
  }
  // Reachability and a topological order (producers first) by depth-first search.
  std::vector<int> state(nodes_.size(), 0);
  std::function<void(int)> visit = [&](int i) {
    if (state[i]) return;
    state[i] = 1;
    for (int pr : nodes_[i].producers) visit(pr);
    nodes_[i].reachable = true;
    topo_.push_back(i);
  };
  visit(output_);
  for (Node& n : nodes_) {
    std::vector<int> kept;
    for (int c : n.consumers) {
      if (nodes_[c].reachable) kept.push_back(c);
    }
    n.consumers = kept;
  }
  compute_reuse();
  compute_root_regions();
  std::vector<bool> all(nodes_.size());
  for (int i : topo_) all[i] = true;
  Drivers d = compute_drivers(*this, output_, all);
  position_independent_.assign(nodes_.size(), false);
  int tiled = std::min<int>(2, int(nodes_[output_].dims.size()));
  for (int i : topo_) {
    bool driven = false;
    for (int x : d.of[i]) driven |= x >= 0 && x < tiled;
    position_independent_[i] = !driven && !nodes_[i].is_input;
  }
}

int PipelineAnalysis::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

void PipelineAnalysis::collect_reads(int i) {
  Node& n = nodes_[i];
  const Func& f = *n.func;
  IntervalScope scope;
  n.own = count_ops(f.value, scope, k_);
  auto add_site = [&](int stage, const std::vector<std::pair<std::string, int>>& loop_vars) {
    return [&, stage, loop_vars](const Call* c, const std::vector<ReductionVariable>& reds) {
      int pr = find(c->name);
      if (pr < 0 || pr == i) return;
      ReadSite s;
      s.producer = pr;
      s.stage = stage;
      s.args = c->args;
      s.reductions = reds;
      s.loop_vars = loop_vars;
      for (const Expr& a : c->args) {
        bool data = reads_data(a);
        s.data_dependent.push_back(data);
        s.slidable.push_back(!data && is_slidable_index(a));
        VarNames names;
        a.accept(&names);
        bool runtime = mentions_runtime_constants(a);
        for (const ReductionVariable& rv : reds) {
          if (names.names.count(rv.name)) {
            runtime |= mentions_runtime_constants(rv.min) || mentions_runtime_constants(rv.max);
          }
        }
        s.runtime_sized.push_back(runtime);
        std::vector<int> dims;
        for (const std::string& v : pure_variables(a)) {
          for (const auto& [name, dim] : loop_vars) {
            if (name == v) dims.push_back(dim);
          }
        }
        s.loop_dims.push_back(dims);
      }
      n.reads.push_back(std::move(s));
    };
  };
  std::vector<std::pair<std::string, int>> pure;
  for (int d = 0; d < int(f.args.size()); ++d) pure.push_back({f.args[d], d});
  ReadCollector pure_reads(std::vector<ReductionVariable>{}, add_site(0, pure));
  f.value.accept(&pure_reads);
  for (size_t u = 0; u < f.updates.size(); ++u) {
    const UpdateDef& up = f.updates[u];
    std::vector<std::pair<std::string, int>> bare;
    for (int d = 0; d < int(up.args.size()); ++d) {
      const Variable* v = up.args[d].as<Variable>();
      if (v && v->kind == VarKind::Pure) bare.push_back({v->name, d});
    }
    ReadCollector rc(up.domain, add_site(int(u) + 1, bare));
    for (const Expr& a : up.args) a.accept(&rc);
    up.value.accept(&rc);
    for (const ReductionVariable& rv : up.domain) {
      ReadCollector outer(std::vector<ReductionVariable>{}, add_site(int(u) + 1, bare));
      rv.min.accept(&outer);
      rv.max.accept(&outer);
    }
  }
  std::set<int> producers;
  for (const ReadSite& s : n.reads) producers.insert(s.producer);
  n.producers.assign(producers.begin(), producers.end());
  for (int pr : producers) nodes_[pr].consumers.push_back(i);
}

void PipelineAnalysis::compute_reuse() {
  reuse_.assign(nodes_.size(), {});
  for (int c : topo_) {
    const Node& cn = nodes_[c];
    // Group this consumer's sites by (producer, stage).
    std::map<std::pair<int, int>, std::vector<const ReadSite*>> groups;
    for (const ReadSite& s : cn.reads) groups[{s.producer, s.stage}].push_back(&s);
    for (const auto& [key, sites] : groups) {
      int pr = key.first;
      const Node& pn = nodes_[pr];
      for (const auto& [var_name, var] : sites[0]->loop_vars) {
        // The producer's footprint with the consumer's loops at 0, and `var` at 0, at 1
        // (consecutive iterations) and far away (whether it moves at all: `x / 2` stays
        // put from 0 to 1).
        constexpr int kFar = 1024;
        std::vector<Interval> f0(pn.dims.size(), Interval::nothing()), f1 = f0, far = f0;
        for (const ReadSite* s : sites) {
          for (int at : {0, 1, kFar}) {
            IntervalScope scope;
            bind_scope(
                *s, [&](int dim) { return Interval::point(dim == var ? at : 0); }, scope, k_);
            std::vector<Interval>& f = at == 0 ? f0 : at == 1 ? f1 : far;
            for (size_t d = 0; d < s->args.size() && d < pn.dims.size(); ++d) {
              f[d] = f[d].union_with(interval_of(s->args[d], scope, k_));
            }
          }
        }
        Reuse r;
        r.consumer = c;
        r.var = var;
        r.full = true;
        bool overlap = true;
        for (size_t d = 0; d < pn.dims.size(); ++d) {
          Interval both = f0[d].intersect_with(f1[d]);
          if (both.is_empty()) overlap = false;
          bool moves = !(f0[d] == f1[d]) || !(f0[d] == far[d]);
          r.full &= !moves;
          r.amount.push_back(moves ? both.extent() : -1);
        }
        if (!overlap) continue;
        // One entry per (consumer, loop): merge the consumer's stages.
        bool merged = false;
        for (Reuse& e : reuse_[pr]) {
          if (e.consumer != c || e.var != var) continue;
          e.full &= r.full;
          for (size_t d = 0; d < e.amount.size(); ++d)
            e.amount[d] = std::max(e.amount[d], r.amount[d]);
          merged = true;
        }
        if (!merged) reuse_[pr].push_back(r);
      }
    }
  }
}

void PipelineAnalysis::compute_root_regions() {
  root_.assign(nodes_.size(), {});
  for (int i : topo_) root_[i].assign(nodes_[i].dims.size(), Interval::nothing());
  for (size_t d = 0; d < root_[output_].size(); ++d) {
    root_[output_][d] = Interval::range(0, double(extents_[d] - 1));
  }
  for (auto it = topo_.rbegin(); it != topo_.rend(); ++it) {
    int c = *it;
    for (const ReadSite& s : nodes_[c].reads) {
      IntervalScope scope;
      bind_scope(
          s, [&](int dim) { return root_[c][dim]; }, scope, k_);
      for (size_t d = 0; d < s.args.size() && d < root_[s.producer].size(); ++d) {
        root_[s.producer][d] = root_[s.producer][d].union_with(interval_of(s.args[d], scope, k_));
      }
    }
  }
  for (int i : topo_) {
    if (!nodes_[i].is_input) continue;
    for (size_t d = 0; d < root_[i].size(); ++d) {
      double ext = double(k_.estimated_extent(nodes_[i].name, int(d)));
      root_[i][d] = root_[i][d].intersect_with(Interval::range(0, ext - 1));
      if (root_[i][d].is_empty()) root_[i][d] = Interval::range(0, 0);
    }
  }
}

double PipelineAnalysis::root_points(int i) const {
  double v = 1;
  for (const Interval& r : root_[i]) v *= std::max(1.0, r.extent());
  return v;
}

Drivers compute_drivers(const PipelineAnalysis& a, int output, const std::vector<bool>& in_group) {
  const int n = int(a.nodes().size());
  constexpr int kUnknown = -2, kNone = -1;
  Drivers d;
  d.of.resize(n);
  d.slides.resize(n);
  d.folds.resize(n);
  for (int i = 0; i < n; ++i) {
    size_t dims = a.node(i).dims.size();
    d.of[i].assign(dims, kUnknown);
    d.slides[i].assign(dims, true);
    d.folds[i].assign(dims, true);
  }
  for (size_t x = 0; x < d.of[output].size(); ++x) d.of[output][x] = int(x);
  const std::vector<int>& topo = a.topological();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    int c = *it;
    if (!in_group[c] && c != output) continue;
    for (int& x : d.of[c]) {
      if (x == kUnknown) x = kNone;
    }
    const Node& cn = a.node(c);
    for (const ReadSite& s : cn.reads) {
      int p = s.producer;
      const Node& pn = a.node(p);
      for (size_t dim = 0; dim < pn.dims.size() && dim < s.args.size(); ++dim) {
        int cand = kUnknown;
        bool slides = s.slidable[dim], folds = !s.runtime_sized[dim];
        // The consumer's loop variables in the index that an output dimension drives
        // (`y + i` with a kernel offset i that none drives is still driven by y's).
        std::set<int> driven;
        for (int v : s.loop_dims[dim]) {
          if (d.of[c][v] >= 0) driven.insert(d.of[c][v]);
          slides = slides && d.slides[c][v];
          folds = folds && d.folds[c][v];
        }
        if (s.data_dependent[dim] || driven.size() > 1) {
          cand = kNone;
        } else if (driven.size() == 1) {
          cand = *driven.begin();
        } else if (!s.loop_dims[dim].empty()) {
          cand = kNone;
        } else {
          for (const auto& [name, v] : s.loop_vars) {
            if (name == pn.dims[dim]) cand = d.of[c][v];
          }
        }
        int& cur = d.of[p][dim];
        if (cand == kNone || cur == kNone) {
          if (cand != kUnknown) cur = kNone;
        } else if (cand != kUnknown) {
          cur = (cur == kUnknown || cur == cand) ? cand : kNone;
        }
        d.slides[p][dim] = d.slides[p][dim] && slides;
        d.folds[p][dim] = d.folds[p][dim] && slides && folds;
      }
    }
  }
  for (auto& v : d.of) {
    for (int& x : v) {
      if (x == kUnknown) x = kNone;
    }
  }
  return d;
}

bool is_trivial(const PipelineAnalysis& a, int i) {
  const Node& n = a.node(i);
  if (n.is_input || n.has_updates || i == a.output()) return false;
  return n.own.ops <= n.own.loads;
}

std::vector<double> expanded_ops(const PipelineAnalysis& a, const std::vector<bool>& inlined) {
  std::vector<double> e(a.nodes().size(), 0);
  for (int i : a.topological()) {
    const Node& n = a.node(i);
    if (n.is_input) continue;
    double ops = n.own.ops;
    for (const auto& [callee, count] : n.own.calls) {
      int c = a.find(callee);
      ops += count * ((c >= 0 && inlined[c]) ? e[c] : 1.0);
    }
    e[i] = ops;
  }
  return e;
}

}  // namespace stipple::search::reuse
