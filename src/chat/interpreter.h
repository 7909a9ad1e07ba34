// Renders a parsed template with Jinja2's runtime semantics (internal to og_chat).
//
// Scoping follows Jinja, not Python: every for-loop iteration, macro call and block body
// gets a fresh child scope, so `{% set %}` inside a loop is gone after it (templates carry
// state out of loops with namespace()), while `{% if %}` shares its parent's scope.
// Undefined follows jinja2.Undefined: prints as '', is falsy, iterates as empty, but
// arithmetic on it or reading its attributes is an error. Attribute access follows the
// ImmutableSandboxedEnvironment: dict keys and safe str/dict/list methods are visible,
// mutating methods (list.append, dict.update, ...) raise "access ... is unsafe".
#pragma once

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "chat/ast.h"
#include "chat/value.h"

namespace og::chat {

struct Scope {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Scope> parent;
  const Value* lookup(const std::string& name) const;
};
using ScopePtr = std::shared_ptr<Scope>;

class Interpreter {
 public:
  Status render(const Body& body, const ScopePtr& scope, std::string& out);
  Result<Value> eval(const Expr& e, const ScopePtr& scope);

  // Runtime services shared by filters, tests and methods.
  Result<Value> getattr(const Value& obj, const std::string& name);
  Result<Value> getitem(const Value& obj, const Value& key);
  Result<Value> call(const Value& fn, Args& args);
  // Elements of a for loop / list(): list items, str code points, dict keys; undefined is empty.
  Result<std::vector<Value>> iterate(const Value& v);

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  Status render_node(const Node& n, const ScopePtr& scope, std::string& out);
  Status render_for(const Node& n, const ScopePtr& scope, std::string& out);
  Status assign(const Node& n, const ScopePtr& scope, Value v);
  Value make_macro(const Node& n, const ScopePtr& scope);
  Result<Value> apply_filters(const std::vector<ExprPtr>& filters, Value v, const ScopePtr& scope);
  Result<Value> eval_filter(const Expr& f, Value input, const ScopePtr& scope);
  Status eval_args(const Expr& e, const ScopePtr& scope, Args& args);

  Flow flow_ = Flow::kNormal;
  int call_depth_ = 0;
};

// Python operators on values (+ - * / // % ** ~) and the `in` test.
Result<Value> binary_op(const std::string& op, const Value& a, const Value& b);
Result<bool> contains(const Value& container, const Value& item);
// obj[start:stop:step] for lists (tuples stay tuples) and strings (by code point).
Result<Value> py_slice(const Value& obj, std::optional<int64_t> start, std::optional<int64_t> stop,
                       std::optional<int64_t> step);

// builtins.cc: Jinja's filters and tests, str/dict/list methods, and the template globals.
Result<Value> apply_filter(Interpreter& in, const std::string& name, const Value& input, Args& args);
Result<bool> apply_test(Interpreter& in, const std::string& name, const Value& input, Args& args);
bool has_method(const Value& obj, const std::string& name);
Result<Value> call_method(Interpreter& in, const Value& obj, const std::string& name, Args& args);
// range, namespace, dict, raise_exception, and strftime_now reading `now` (else the clock).
void add_globals(Scope& globals, std::optional<std::tm> now);

}  // namespace og::chat
