// Values a chat template computes with, and the Python semantics its output depends on.
//
// Jinja evaluates templates over Python objects, so what ends up in the prompt is Python's
// str() of a value (True, None, 1.0, ['a', 1]), Python's == (1 == 1.0 == True) and Python's
// truthiness. A Value is a small variant over exactly the kinds chat templates see; lists and
// dicts are shared like Python references (a namespace is mutated in place by
// `{% set ns.x = ... %}`), everything else is copied. Dicts keep insertion order because
// tojson prints them in that order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace og::chat {

class Value;
class Interpreter;

// Positional and keyword arguments of a call, filter or test.
struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
  // Python binding for simple signatures: the i-th positional, else keyword `name`, else null.
  const Value* get(size_t i, std::string_view name) const;
};

using NativeFn = std::function<Result<Value>(Interpreter&, Args&)>;

struct Undefined {
  std::string name;  // what was looked up, for "'x' is undefined"
};
struct None {};

// Lists and dicts record how deeply they nest (see kMaxNesting) and whether they hold a
// namespace, when built: both only grow, since only namespaces change after construction.
struct ListData {
  std::vector<Value> items;
  int depth = 1;
  bool holds_namespace = false;
  bool is_tuple = false;
  // select()/map() return generators in Jinja: always truthy, printed as an object, and
  // empty once iterated. Modelled so templates that rely on either behave the same.
  bool is_generator = false;
  bool consumed = false;
};

// A dict's keys are stored as strings. Python takes any hashable key, and templates use a
// number now and then ({0: 0, 512: 128}): such a key is stored under an encoding no text can
// hold (a leading 0xFF byte, which UTF-8 never has), see dict_key / key_value.
struct DictData {
  std::vector<std::pair<std::string, Value>> items;
  int depth = 1;
  bool holds_namespace = false;
  bool is_namespace = false;  // namespace(): attribute access only, assignable, not a mapping
  const Value* find(std::string_view key) const;
  void set(const std::string& key, Value v);
};

struct Function {
  std::string name;
  NativeFn fn;
};

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kFunction };

  Value() : v_(Undefined{}) {}
  static Value undefined(std::string name) { return Value(Undefined{std::move(name)}); }
  static Value none() { return Value(None{}); }
  static Value boolean(bool b) { return Value(b); }
  static Value integer(int64_t i) { return Value(i); }
  static Value number(double d) { return Value(d); }
  static Value string(std::string s) { return Value(std::move(s)); }
  // Jinja's Markup (what `|safe` and `|escape` return): a string that, joined to another
  // with `+`, HTML-escapes the other one (markupsafe's Markup.__add__ / __radd__).
  static Value markup(std::string s) {
    Value v(std::move(s));
    v.markup_ = true;
    return v;
  }
  static Value list(std::vector<Value> items, bool is_tuple = false);
  static Value generator(std::vector<Value> items);
  static Value dict(std::vector<std::pair<std::string, Value>> items, bool is_namespace = false);
  static Value function(std::string name, NativeFn fn);
  // An error if `j` nests deeper than kMaxNesting.
  static Result<Value> from_json(const nlohmann::ordered_json& j);

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_number() const { return is_bool() || is_int() || is_float(); }  // bool is an int
  bool is_string() const { return kind() == Kind::kString; }
  bool is_markup() const { return markup_ && is_string(); }
  bool is_list() const { return kind() == Kind::kList; }
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_mapping() const { return is_dict() && !dict_data().is_namespace; }
  bool is_function() const { return kind() == Kind::kFunction; }
  // Levels of lists and dicts: 0 for a scalar, 1 for a flat list, ...
  int nesting() const;
  // Is, or holds, a namespace.
  bool holds_namespace() const;

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const;     // bool or int
  double as_double() const;   // any number
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const std::string& undefined_name() const { return std::get<Undefined>(v_).name; }
  ListData& list_data() const { return *std::get<std::shared_ptr<ListData>>(v_); }
  DictData& dict_data() const { return *std::get<std::shared_ptr<DictData>>(v_); }
  const Function& function_data() const { return *std::get<std::shared_ptr<Function>>(v_); }
  const void* identity() const;  // shared object address, for `is sameas` and generators

  bool truthy() const;
  std::string str() const;   // Python str(); undefined prints as ''
  std::string repr() const;  // Python repr(), used inside str() of containers
  std::string type_name() const;

 private:
  using Storage = std::variant<Undefined, None, bool, int64_t, double, std::string,
                               std::shared_ptr<ListData>, std::shared_ptr<DictData>,
                               std::shared_ptr<Function>>;
  template <typename T>
    requires(!std::is_same_v<std::decay_t<T>, Value>)
  explicit Value(T v) : v_(std::move(v)) {}
  Storage v_;
  bool markup_ = false;
};

// The stored form of a dict key (see DictData): strings as they are, None, booleans and
// numbers encoded; an error for unhashable keys (lists, dicts), as Python's TypeError.
Result<std::string> dict_key(const Value& key);
// A stored key as the value it was (the inverse of dict_key).
Value key_value(const std::string& stored);

// HTML-escapes &, <, >, " and ' as markupsafe's escape() does.
std::string html_escape(std::string_view s);

// repr, ==, tojson and the destructors recurse once per level, so values may not nest deeper
// than this: what `set` stores and the render variables are checked. Namespaces cannot hold
// namespaces, so no cycle forms, and a namespace deepened after it was put in a list (whose
// recorded depth is then stale) takes that list at most one more kMaxNesting deeper.
constexpr int kMaxNesting = 100;

// An integer argument (bool counts, as in Python), or an error naming `what`.
Result<int64_t> int_arg(const Value& v, std::string_view what);

bool py_equal(const Value& a, const Value& b);
// Python's <; an error for unordered kinds ("'<' not supported between 'str' and 'int'").
Result<bool> py_less(const Value& a, const Value& b);

// json.dumps as transformers' tojson filter calls it (ensure_ascii=False by default).
struct JsonOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;  // None: one line; else the per-level indent string
  std::string item_sep = ", ";
  std::string key_sep = ": ";
  bool sort_keys = false;
};
Result<std::string> to_json(const Value& v, const JsonOptions& options);

}  // namespace og::chat
