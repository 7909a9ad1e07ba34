// Python operators, subscripts and attribute access on values, as the sandboxed Jinja
// environment performs them.
#include <cmath>

#include "chat/interpreter.h"
#include "chat/text.h"

namespace og::chat {
namespace {

Status undefined_error(const Value& v) { return bad_input("'{}' is undefined", v.undefined_name()); }

Status type_error(const std::string& op, const Value& a, const Value& b) {
  return bad_input("unsupported operand type(s) for {}: '{}' and '{}'", op, a.type_name(), b.type_name());
}

Status overflow_error() {
  return unsupported("integer overflow (Python ints are unbounded; og::chat uses 64 bits)");
}

// Applies a __builtin_*_overflow operation; Python ints never overflow, so ours must say so.
template <typename Op>
Result<Value> checked(Op op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (op(a, b, &r)) return overflow_error();
  return Value::integer(r);
}

Result<Value> repeat(const Value& seq, int64_t n) {
  const size_t unit = seq.is_string() ? seq.as_string().size() : seq.list_data().items.size();
  if (n > 0 && unit > 0 && static_cast<uint64_t>(n) > (size_t{1} << 26) / unit) {
    return resource_error("sequence repeated {} times is too large", n);
  }
  if (seq.is_string()) {
    std::string out;
    for (int64_t i = 0; i < n; ++i) out += seq.as_string();
    return Value::string(std::move(out));
  }
  std::vector<Value> items;
  for (int64_t i = 0; i < n; ++i) {
    items.insert(items.end(), seq.list_data().items.begin(), seq.list_data().items.end());
  }
  return Value::list(std::move(items), seq.list_data().is_tuple);
}

bool is_sequence(const Value& v) {
  return v.is_string() || (v.is_list() && !v.list_data().is_generator);
}

}  // namespace

Result<Value> binary_op(const std::string& op, const Value& a, const Value& b) {
  if (op == "~") return Value::string(a.str() + b.str());
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  const bool nums = a.is_number() && b.is_number();
  const bool ints = nums && !a.is_float() && !b.is_float();
  if (op == "+") {
    if (ints) return checked([](int64_t x, int64_t y, int64_t* r) { return __builtin_add_overflow(x, y, r); }, a.as_int(), b.as_int());
    if (nums) return Value::number(a.as_double() + b.as_double());
    if (a.is_string() && b.is_string()) {
      // Markup + str (or str + Markup) escapes the plain side and stays Markup.
      if (a.is_markup() || b.is_markup()) {
        auto side = [](const Value& x) { return x.is_markup() ? x.as_string() : html_escape(x.as_string()); };
        return Value::markup(side(a) + side(b));
      }
      return Value::string(a.as_string() + b.as_string());
    }
    if (is_sequence(a) && a.is_list() && b.is_list() && !b.list_data().is_generator &&
        a.list_data().is_tuple == b.list_data().is_tuple) {
      std::vector<Value> items = a.list_data().items;
      items.insert(items.end(), b.list_data().items.begin(), b.list_data().items.end());
      return Value::list(std::move(items), a.list_data().is_tuple);
    }
    if (a.is_string() || b.is_string()) {
      return bad_input("can only concatenate str (not \"{}\") to str", a.is_string() ? b.type_name() : a.type_name());
    }
    return type_error(op, a, b);
  }
  if (op == "*") {
    if (ints) return checked([](int64_t x, int64_t y, int64_t* r) { return __builtin_mul_overflow(x, y, r); }, a.as_int(), b.as_int());
    if (nums) return Value::number(a.as_double() * b.as_double());
    if (is_sequence(a) && (b.is_int() || b.is_bool())) return repeat(a, b.as_int());
    if (is_sequence(b) && (a.is_int() || a.is_bool())) return repeat(b, a.as_int());
    return type_error(op, a, b);
  }
  if (!nums) return type_error(op, a, b);
  if (op == "-") {
    if (ints) return checked([](int64_t x, int64_t y, int64_t* r) { return __builtin_sub_overflow(x, y, r); }, a.as_int(), b.as_int());
    return Value::number(a.as_double() - b.as_double());
  }
  if (op == "**") {
    if (ints && b.as_int() >= 0) {  // square-and-multiply: 1 ** 10**18 must not loop
      int64_t acc = 1, base = a.as_int();
      for (int64_t e = b.as_int(); e > 0; e >>= 1) {
        if ((e & 1) && __builtin_mul_overflow(acc, base, &acc)) return overflow_error();
        if (e > 1 && __builtin_mul_overflow(base, base, &base)) return overflow_error();
      }
      return Value::integer(acc);
    }
    return Value::number(std::pow(a.as_double(), b.as_double()));
  }
  if (b.as_double() == 0) return bad_input("division by zero");
  if (op == "/") return Value::number(a.as_double() / b.as_double());
  if (ints) {  // Python floors toward negative infinity
    const int64_t x = a.as_int(), y = b.as_int();
    if (x == INT64_MIN && y == -1) return overflow_error();
    int64_t q = x / y, m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) {
      --q;
      m += y;
    }
    return Value::integer(op == "//" ? q : m);
  }
  const double x = a.as_double(), y = b.as_double();
  if (op == "//") return Value::number(std::floor(x / y));
  double m = std::fmod(x, y);
  if (m != 0 && ((m < 0) != (y < 0))) m += y;
  return Value::number(m);
}

Result<bool> contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined: return false;  // Undefined iterates as empty
    case Value::Kind::kString:
      if (!item.is_string()) {
        return bad_input("'in <string>' requires string as left operand, not {}", item.type_name());
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      for (const Value& v : container.list_data().items) {
        if (py_equal(v, item)) return true;
      }
      return false;
    case Value::Kind::kDict:
      if (container.dict_data().is_namespace) break;
    {
      OG_ASSIGN_OR_RETURN(std::string key, dict_key(item));
      return container.dict_data().find(key) != nullptr;
    }
    default: break;
  }
  return bad_input("argument of type '{}' is not iterable", container.type_name());
}

Result<Value> py_slice(const Value& obj, std::optional<int64_t> start, std::optional<int64_t> stop,
                       std::optional<int64_t> step) {
  if (obj.is_undefined()) return undefined_error(obj);
  if (obj.is_string()) {
    const std::u32string u = utf8_decode(obj.as_string());
    const SliceIndices s = adjust_slice(start, stop, step, static_cast<int64_t>(u.size()));
    std::u32string out;
    for (int64_t i = 0, k = s.start; i < s.count; ++i, k += s.step) out += u[k];
    return Value::string(encode_utf8(out));
  }
  if (obj.is_list() && !obj.list_data().is_generator) {
    const auto& items = obj.list_data().items;
    const SliceIndices s = adjust_slice(start, stop, step, static_cast<int64_t>(items.size()));
    std::vector<Value> out;
    for (int64_t i = 0, k = s.start; i < s.count; ++i, k += s.step) out.push_back(items[k]);
    return Value::list(std::move(out), obj.list_data().is_tuple);
  }
  return bad_input("'{}' object is not subscriptable", obj.type_name());
}

Result<Value> Interpreter::getattr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) return undefined_error(obj);
  if (obj.is_dict() && obj.dict_data().is_namespace) {
    const Value* v = obj.dict_data().find(name);
    return v ? *v : Value::undefined(name);
  }
  if (has_method(obj, name)) {  // Python attributes win over dict keys
    return Value::function(name, [obj, name](Interpreter& in, Args& args) {
      return call_method(in, obj, name, args);
    });
  }
  if (obj.is_dict()) {
    const Value* v = obj.dict_data().find(name);
    return v ? *v : Value::undefined(name);
  }
  return Value::undefined(name);
}

Result<Value> Interpreter::getitem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) return undefined_error(obj);
  const bool int_key = key.is_int() || key.is_bool();
  if (int_key && (obj.is_string() || (obj.is_list() && !obj.list_data().is_generator))) {
    int64_t i = key.as_int();
    if (obj.is_string()) {
      const std::u32string u = utf8_decode(obj.as_string());
      if (i < 0) i += static_cast<int64_t>(u.size());
      if (i < 0 || i >= static_cast<int64_t>(u.size())) return Value::undefined("index " + key.repr());
      return Value::string(encode_utf8(std::u32string(1, u[i])));
    }
    const auto& items = obj.list_data().items;
    if (i < 0) i += static_cast<int64_t>(items.size());
    if (i < 0 || i >= static_cast<int64_t>(items.size())) return Value::undefined("index " + key.repr());
    return items[i];
  }
  if (obj.is_mapping()) {
    // An unhashable key finds nothing (Jinja's getitem catches Python's TypeError).
    auto stored = dict_key(key);
    if (stored.is_ok())
      if (const Value* v = obj.dict_data().find(*stored)) return *v;
  }
  // Jinja falls back to attribute lookup for string keys (methods, namespace attributes).
  if (key.is_string()) return getattr(obj, key.as_string());
  return Value::undefined(key.repr());
}

Result<Value> Interpreter::call(const Value& fn, Args& args) {
  if (fn.is_function()) return fn.function_data().fn(*this, args);
  if (fn.is_undefined()) return undefined_error(fn);
  return bad_input("'{}' object is not callable", fn.type_name());
}

Result<std::vector<Value>> Interpreter::iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: return std::vector<Value>();
    case Value::Kind::kString: {
      std::vector<Value> out;
      for (char32_t c : utf8_decode(v.as_string())) out.push_back(Value::string(encode_utf8(std::u32string(1, c))));
      return out;
    }
    case Value::Kind::kList: {
      ListData& l = v.list_data();
      if (l.is_generator) {  // a generator yields its items once
        if (l.consumed) return std::vector<Value>();
        l.consumed = true;
      }
      return l.items;
    }
    case Value::Kind::kDict:
      if (!v.dict_data().is_namespace) {
        std::vector<Value> keys;
        for (const auto& kv : v.dict_data().items) keys.push_back(key_value(kv.first));
        return keys;
      }
      break;
    default: break;
  }
  return bad_input("'{}' object is not iterable", v.type_name());
}

}  // namespace og::chat
