#include "chat/interpreter.h"

#include <fmt/format.h>

namespace og::chat {
namespace {

constexpr int kMaxCallDepth = 64;  // macros may recurse; a runaway one must not blow the stack

// Adds "line N: " unless a nested node already did.
Status at_line(Status s, int line) {
  if (s.is_ok() || s.message().rfind("line ", 0) == 0) return s;
  return Status(s.code(), fmt::format("line {}: {}", line, s.message()));
}

ScopePtr child(const ScopePtr& parent) {
  auto s = std::make_shared<Scope>();
  s->parent = parent;
  return s;
}

Result<std::optional<int64_t>> slice_bound(const Value& v) {
  if (v.is_none() || v.is_undefined()) return std::optional<int64_t>();
  if (v.is_int() || v.is_bool()) return std::optional<int64_t>(v.as_int());
  return bad_input("slice indices must be integers or None, not {}", v.type_name());
}

}  // namespace

const Value* Scope::lookup(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent.get()) {
    auto it = s->vars.find(name);
    if (it != s->vars.end()) return &it->second;
  }
  return nullptr;
}

Status Interpreter::render(const Body& body, const ScopePtr& scope, std::string& out) {
  for (const Node& n : body) {
    OG_TRY(at_line(render_node(n, scope, out), n.line));
    if (flow_ != Flow::kNormal) break;  // break/continue unwinds to the enclosing loop
  }
  return Status::ok();
}

Status Interpreter::render_node(const Node& n, const ScopePtr& scope, std::string& out) {
  switch (n.kind) {
    case NodeKind::kText: out += n.text; return Status::ok();
    case NodeKind::kOutput: {
      OG_ASSIGN_OR_RETURN(Value v, eval(*n.expr, scope));
      out += v.str();
      return Status::ok();
    }
    case NodeKind::kIf:
      for (const auto& [cond, body] : n.branches) {
        bool take = true;
        if (cond) {
          OG_ASSIGN_OR_RETURN(Value c, eval(*cond, scope));
          take = c.truthy();
        }
        if (take) return render(body, scope, out);
      }
      return Status::ok();
    case NodeKind::kFor: return render_for(n, scope, out);
    case NodeKind::kSet: {
      OG_ASSIGN_OR_RETURN(Value v, eval(*n.expr, scope));
      return assign(n, scope, std::move(v));
    }
    case NodeKind::kSetBlock:
    case NodeKind::kFilterBlock: {
      std::string text;
      OG_TRY(render(n.body, child(scope), text));
      OG_ASSIGN_OR_RETURN(Value v, apply_filters(n.filters, Value::string(std::move(text)), scope));
      if (n.kind == NodeKind::kFilterBlock) {
        out += v.str();
        return Status::ok();
      }
      return assign(n, scope, std::move(v));
    }
    case NodeKind::kMacro: scope->vars[n.text] = make_macro(n, scope); return Status::ok();
    case NodeKind::kBreak: flow_ = Flow::kBreak; return Status::ok();
    case NodeKind::kContinue: flow_ = Flow::kContinue; return Status::ok();
    case NodeKind::kScope: return render(n.body, child(scope), out);
  }
  return Status::ok();
}

Status Interpreter::assign(const Node& n, const ScopePtr& scope, Value v) {
  if (v.nesting() > kMaxNesting) return bad_input("value nested deeper than {} levels", kMaxNesting);
  if (!n.attr.empty()) {
    const Value* ns = scope->lookup(n.targets[0]);
    if (!ns || !ns->is_dict() || !ns->dict_data().is_namespace) {
      return bad_input("cannot assign attribute '{}' on non-namespace object '{}'", n.attr, n.targets[0]);
    }
    if (v.holds_namespace()) return unsupported("namespace attribute '{}' cannot hold a namespace", n.attr);
    ns->dict_data().set(n.attr, std::move(v));
    return Status::ok();
  }
  if (n.targets.size() == 1) {
    scope->vars[n.targets[0]] = std::move(v);
    return Status::ok();
  }
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(v));
  if (items.size() != n.targets.size()) {
    return bad_input("cannot unpack {} values into {} names", items.size(), n.targets.size());
  }
  for (size_t i = 0; i < items.size(); ++i) scope->vars[n.targets[i]] = std::move(items[i]);
  return Status::ok();
}

Status Interpreter::render_for(const Node& n, const ScopePtr& scope, std::string& out) {
  OG_ASSIGN_OR_RETURN(Value seq, eval(*n.expr, scope));
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(seq));
  auto bind = [&](const ScopePtr& s, const Value& item) -> Status {
    Node target;
    target.targets = n.targets;
    return assign(target, s, item);
  };
  if (n.cond) {  // `for x in xs if cond`: loop.length counts only the kept items
    std::vector<Value> kept;
    for (Value& item : items) {
      ScopePtr s = child(scope);
      OG_TRY(bind(s, item));
      OG_ASSIGN_OR_RETURN(Value keep, eval(*n.cond, s));
      if (keep.truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  const int64_t len = static_cast<int64_t>(items.size());
  for (int64_t i = 0; i < len; ++i) {
    ScopePtr s = child(scope);
    OG_TRY(bind(s, items[i]));
    Value cycle = Value::function("loop.cycle", [i](Interpreter&, Args& a) -> Result<Value> {
      if (a.pos.empty()) return bad_input("no items for cycling given");
      return a.pos[i % a.pos.size()];
    });
    s->vars["loop"] = Value::dict({
        {"index", Value::integer(i + 1)},
        {"index0", Value::integer(i)},
        {"revindex", Value::integer(len - i)},
        {"revindex0", Value::integer(len - i - 1)},
        {"first", Value::boolean(i == 0)},
        {"last", Value::boolean(i == len - 1)},
        {"length", Value::integer(len)},
        {"depth", Value::integer(1)},
        {"depth0", Value::integer(0)},
        {"previtem", i > 0 ? items[i - 1] : Value::undefined("loop.previtem")},
        {"nextitem", i + 1 < len ? items[i + 1] : Value::undefined("loop.nextitem")},
        {"cycle", std::move(cycle)},
    });
    OG_TRY(render(n.body, s, out));
    if (flow_ == Flow::kBreak) {
      flow_ = Flow::kNormal;
      break;
    }
    flow_ = Flow::kNormal;
  }
  if (len == 0) return render(n.else_body, child(scope), out);
  return Status::ok();
}

Value Interpreter::make_macro(const Node& n, const ScopePtr& scope) {
  // A weak reference: the macro usually lives in the very scope it closes over.
  std::weak_ptr<Scope> defining = scope;
  const Node* node = &n;
  return Value::function(n.text, [node, defining](Interpreter& in, Args& args) -> Result<Value> {
    ScopePtr parent = defining.lock();
    if (!parent) return bad_input("macro '{}' called outside the scope that defined it", node->text);
    if (args.pos.size() > node->targets.size()) {
      return bad_input("macro '{}' takes not more than {} argument(s)", node->text, node->targets.size());
    }
    for (const auto& [k, v] : args.kw) {
      if (std::find(node->targets.begin(), node->targets.end(), k) == node->targets.end()) {
        return bad_input("macro '{}' has no parameter named '{}'", node->text, k);
      }
    }
    if (++in.call_depth_ > kMaxCallDepth) {
      --in.call_depth_;
      return bad_input("macro '{}' recursed deeper than {} calls", node->text, kMaxCallDepth);
    }
    ScopePtr s = child(parent);
    Status st;
    for (size_t i = 0; i < node->targets.size() && st.is_ok(); ++i) {
      const Value* given = args.get(i, node->targets[i]);
      if (given) {
        s->vars[node->targets[i]] = *given;
      } else if (node->defaults[i]) {
        auto d = in.eval(*node->defaults[i], s);
        if (d.is_ok()) s->vars[node->targets[i]] = std::move(d).value();
        else st = d.status();
      } else {
        s->vars[node->targets[i]] = Value::undefined(node->targets[i]);
      }
    }
    std::string text;
    if (st.is_ok()) st = in.render(node->body, s, text);
    --in.call_depth_;
    if (!st.is_ok()) return st;
    return Value::string(std::move(text));
  });
}

Status Interpreter::eval_args(const Expr& e, const ScopePtr& scope, Args& args) {
  for (const ExprPtr& a : e.args) {
    OG_ASSIGN_OR_RETURN(Value v, eval(*a, scope));
    args.pos.push_back(std::move(v));
  }
  for (const auto& [k, a] : e.kwargs) {
    OG_ASSIGN_OR_RETURN(Value v, eval(*a, scope));
    args.kw.emplace_back(k, std::move(v));
  }
  return Status::ok();
}

Result<Value> Interpreter::eval_filter(const Expr& f, Value input, const ScopePtr& scope) {
  Args args;
  OG_TRY(eval_args(f, scope, args));
  return apply_filter(*this, f.name, input, args);
}

Result<Value> Interpreter::apply_filters(const std::vector<ExprPtr>& filters, Value v, const ScopePtr& scope) {
  for (const ExprPtr& f : filters) {
    OG_ASSIGN_OR_RETURN(v, eval_filter(*f, std::move(v), scope));
  }
  return v;
}

Result<Value> Interpreter::eval(const Expr& e, const ScopePtr& scope) {
  switch (e.kind) {
    case ExprKind::kConst: return e.value;
    case ExprKind::kName: {
      const Value* v = scope->lookup(e.name);
      return v ? *v : Value::undefined(e.name);
    }
    case ExprKind::kList:
    case ExprKind::kTuple: {
      std::vector<Value> items;
      for (const ExprPtr& a : e.args) {
        OG_ASSIGN_OR_RETURN(Value v, eval(*a, scope));
        items.push_back(std::move(v));
      }
      return Value::list(std::move(items), e.kind == ExprKind::kTuple);
    }
    case ExprKind::kDict: {
      Value d = Value::dict({});
      for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
        OG_ASSIGN_OR_RETURN(Value k, eval(*e.args[i], scope));
        OG_ASSIGN_OR_RETURN(std::string key, dict_key(k));
        OG_ASSIGN_OR_RETURN(Value v, eval(*e.args[i + 1], scope));
        d.dict_data().set(key, std::move(v));
      }
      return d;
    }
    case ExprKind::kAttr: {
      OG_ASSIGN_OR_RETURN(Value obj, eval(*e.object, scope));
      return getattr(obj, e.name);
    }
    case ExprKind::kItem: {
      OG_ASSIGN_OR_RETURN(Value obj, eval(*e.object, scope));
      OG_ASSIGN_OR_RETURN(Value key, eval(*e.args[0], scope));
      return getitem(obj, key);
    }
    case ExprKind::kSlice: {
      OG_ASSIGN_OR_RETURN(Value obj, eval(*e.object, scope));
      std::optional<int64_t> b[3];
      for (int i = 0; i < 3; ++i) {
        if (!e.args[i]) continue;
        OG_ASSIGN_OR_RETURN(Value v, eval(*e.args[i], scope));
        OG_ASSIGN_OR_RETURN(b[i], slice_bound(v));
      }
      if (b[2] && *b[2] == 0) return bad_input("slice step cannot be zero");
      return py_slice(obj, b[0], b[1], b[2]);
    }
    case ExprKind::kCall: {
      Args args;
      if (e.object->kind == ExprKind::kAttr) {  // obj.method(...) without a bound-method object
        OG_ASSIGN_OR_RETURN(Value obj, eval(*e.object->object, scope));
        if (!obj.is_undefined() && has_method(obj, e.object->name)) {
          OG_TRY(eval_args(e, scope, args));
          return call_method(*this, obj, e.object->name, args);
        }
        OG_ASSIGN_OR_RETURN(Value fn, getattr(obj, e.object->name));
        OG_TRY(eval_args(e, scope, args));
        return call(fn, args);
      }
      OG_ASSIGN_OR_RETURN(Value fn, eval(*e.object, scope));
      OG_TRY(eval_args(e, scope, args));
      return call(fn, args);
    }
    case ExprKind::kFilter: {
      OG_ASSIGN_OR_RETURN(Value input, eval(*e.object, scope));
      return eval_filter(e, std::move(input), scope);
    }
    case ExprKind::kTest: {
      OG_ASSIGN_OR_RETURN(Value input, eval(*e.object, scope));
      Args args;
      OG_TRY(eval_args(e, scope, args));
      OG_ASSIGN_OR_RETURN(bool r, apply_test(*this, e.name, input, args));
      return Value::boolean(r != e.negated);
    }
    case ExprKind::kUnary: {
      OG_ASSIGN_OR_RETURN(Value v, eval(*e.object, scope));
      if (e.name == "not") return Value::boolean(!v.truthy());
      if (v.is_undefined()) return bad_input("'{}' is undefined", v.undefined_name());
      if (!v.is_number()) return bad_input("bad operand type for unary {}: '{}'", e.name, v.type_name());
      if (e.name == "+") return v.is_float() ? v : Value::integer(v.as_int());
      if (v.is_float()) return Value::number(-v.as_double());
      return binary_op("-", Value::integer(0), Value::integer(v.as_int()));
    }
    case ExprKind::kBinary: {
      OG_ASSIGN_OR_RETURN(Value a, eval(*e.object, scope));
      if (e.name == "and" || e.name == "or") {  // Python returns the deciding operand
        if (a.truthy() == (e.name == "or")) return a;
        return eval(*e.args[0], scope);
      }
      OG_ASSIGN_OR_RETURN(Value b, eval(*e.args[0], scope));
      return binary_op(e.name, a, b);
    }
    case ExprKind::kCompare: {
      OG_ASSIGN_OR_RETURN(Value left, eval(*e.object, scope));
      for (size_t i = 0; i < e.ops.size(); ++i) {
        OG_ASSIGN_OR_RETURN(Value right, eval(*e.args[i], scope));
        const std::string& op = e.ops[i];
        bool r = false;
        if (op == "==" || op == "!=") {
          r = py_equal(left, right) == (op == "==");
        } else if (op == "in" || op == "notin") {
          OG_ASSIGN_OR_RETURN(bool has, contains(right, left));
          r = has == (op == "in");
        } else {
          if (left.is_undefined() || right.is_undefined()) {
            return bad_input("'{}' is undefined", (left.is_undefined() ? left : right).undefined_name());
          }
          const bool swap = op == ">" || op == "<=";
          OG_ASSIGN_OR_RETURN(bool lt, swap ? py_less(right, left) : py_less(left, right));
          r = op == "<" || op == ">" ? lt : !lt;
        }
        if (!r) return Value::boolean(false);
        left = std::move(right);
      }
      return Value::boolean(true);
    }
    case ExprKind::kCond: {
      OG_ASSIGN_OR_RETURN(Value c, eval(*e.args[0], scope));
      if (c.truthy()) return eval(*e.args[1], scope);
      if (e.args[2]) return eval(*e.args[2], scope);
      return Value::undefined("inline if");
    }
  }
  return Value();
}

}  // namespace og::chat
