// Adding .stp templates to a pipeline (stage_templates.h).
#include "compiler_core/perforation/stage_templates.h"

#include <charconv>

#include "compiler_core/ir/error.h"
#include "compiler_core/ir/ir_mutator.h"
#include "compiler_core/language/frontend.h"
#include "compiler_core/schedule/schedule_checker.h"

namespace stipple::perforation {

namespace {

class BindTemplate : public IRMutator {
 public:
  BindTemplate(const Pipeline& host, std::string prefix,
               const std::map<std::string, TemplateInput>& inputs)
      : host_(host), prefix_(std::move(prefix)), inputs_(inputs) {}

  std::string renamed(const std::string& func) const { return prefix_ + "$" + func; }

  using IRMutator::visit;

  Expr visit(const Call* op) override {
    bool changed = false;
    std::vector<Expr> args = mutate_exprs(op->args, &changed);
    if (op->call_type == CallType::Func) {
      return Call::make(op->type, renamed(op->name), args, CallType::Func);
    }
    if (op->call_type == CallType::Input) {
      const TemplateInput& in = bound(op->name);
      STIPPLE_INTERNAL_CHECK(!in.host.empty(), "template input '" + op->name + "' is read");
      if (const Func* f = host_.find_func(in.host)) {
        STIPPLE_INTERNAL_CHECK(f->type == op->type && f->args.size() == args.size(),
                               "template input '" + op->name + "' bound to '" + in.host +
                                   "' of another type or shape");
        return Call::make(op->type, in.host, args, CallType::Func);
      }
      const InputDecl* i = host_.find_input(in.host);
      STIPPLE_INTERNAL_CHECK(i && i->type == op->type && i->dim_names.size() == args.size(),
                             "template input '" + op->name + "' bound to '" + in.host + "'");
      return Call::make(op->type, in.host, args, CallType::Input);
    }
    if (!changed) return op;
    return Call::make_intrinsic(op->intrinsic, args);
  }

  Expr visit(const InputExtent* op) override {
    const TemplateInput& in = bound(op->input);
    STIPPLE_INTERNAL_CHECK(op->dim < static_cast<int>(in.extents.size()),
                           "no extent " + std::to_string(op->dim) + " for '" + op->input + "'");
    return in.extents[static_cast<size_t>(op->dim)];
  }

 private:
  const TemplateInput& bound(const std::string& name) const {
    auto it = inputs_.find(name);
    STIPPLE_INTERNAL_CHECK(it != inputs_.end(), "template input '" + name + "' is not bound");
    return it->second;
  }

  const Pipeline& host_;
  std::string prefix_;
  const std::map<std::string, TemplateInput>& inputs_;
};

}  // namespace

std::string add_template_stages(Pipeline& host, Schedule& host_schedule, std::string_view text,
                                std::string_view schedule_text, const std::string& prefix,
                                const std::map<std::string, TemplateInput>& inputs) {
  Pipeline t;
  Schedule ts;
  try {
    t = compile_pipeline(text, "<" + prefix + " template>");
    ts = compile_schedule(schedule_text, "<" + prefix + " template schedule>", t);
  } catch (const UserError& e) {
    STIPPLE_INTERNAL_CHECK(false,
                           std::string("a perforation template does not compile: ") + e.what());
  }
  STIPPLE_INTERNAL_CHECK(t.params.empty(), "perforation templates take no params");
  BindTemplate bind(host, prefix, inputs);
  std::vector<Func> added;
  for (const Func& f : t.funcs) {
    Func g = f;
    g.name = bind.renamed(f.name);
    STIPPLE_INTERNAL_CHECK(!host.find_func(g.name), "'" + g.name + "' already exists");
    g.value = bind.mutate(f.value);
    mutate_updates(g, bind);
    added.push_back(std::move(g));
  }
  for (Func& g : added) host.funcs.push_back(std::move(g));
  for (auto& [name, fs] : ts.funcs) {
    FuncSchedule renamed = fs;
    for (std::optional<LoopLevel>* l : {&renamed.compute, &renamed.store}) {
      if (*l && (*l)->kind == LevelKind::At) (*l)->func = bind.renamed((*l)->func);
    }
    host_schedule.funcs[bind.renamed(name)] = std::move(renamed);
  }
  return bind.renamed(t.output.func);
}

std::string fill_template(std::string text, const std::map<std::string, std::string>& values,
                          bool complete) {
  for (const auto& [name, value] : values) {
    const std::string key = "@" + name + "@";
    for (size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size())) {
      text.replace(at, key.size(), value);
    }
  }
  STIPPLE_INTERNAL_CHECK(
      !complete || text.find('@') == std::string::npos,
      "a template placeholder is not filled: " + text.substr(text.find('@'), 20));
  return text;
}

std::string stp_float(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (s[0] == '-') s = "(" + s + ")";
  return s;
}

}  // namespace stipple::perforation
