// Jinja's tests, the Python methods templates call on str/dict/list, and the globals
// transformers provides (raise_exception, strftime_now) next to Jinja's (range, namespace).
#include <chrono>
#include <ctime>
#include <unordered_set>

#include "chat/interpreter.h"
#include "chat/text.h"

namespace og::chat {

bool has_filter(const std::string& name);  // filters.cc

namespace {

const Value& arg0(const Args& a) {
  static const Value kUndefined = Value::undefined("test argument");
  return a.pos.empty() ? kUndefined : a.pos[0];
}

bool is_cased_all(const std::string& s, bool upper) {
  bool any = false;
  for (char c : s) {
    if ((upper && c >= 'a' && c <= 'z') || (!upper && c >= 'A' && c <= 'Z')) return false;
    any |= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }
  return any;
}

Result<bool> compare_test(const std::string& op, const Value& v, const Args& a) {
  const Value& other = arg0(a);
  if (op == "==") return py_equal(v, other);
  if (op == "!=") return !py_equal(v, other);
  if (op == "<") return py_less(v, other);
  if (op == ">") return py_less(other, v);
  OG_ASSIGN_OR_RETURN(bool lt, op == "<=" ? py_less(other, v) : py_less(v, other));
  return !lt;
}

// Python str.format: {} {0} {name}, {{ and }}; conversions and format specs are not supported.
Result<Value> str_format(const std::string& s, const Args& a) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((s[i] == '{' || s[i] == '}') && i + 1 < s.size() && s[i + 1] == s[i]) {
      out += s[i++];
      continue;
    }
    if (s[i] == '}') return bad_input("single '}}' encountered in format string");
    if (s[i] != '{') {
      out += s[i];
      continue;
    }
    const size_t end = s.find('}', i);
    if (end == std::string::npos) return bad_input("single '{{' encountered in format string");
    const std::string field = s.substr(i + 1, end - i - 1);
    if (field.find_first_of("!:.[") != std::string::npos) {
      return unsupported("str.format field '{{{}}}' is not supported", field);
    }
    const Value* v = nullptr;
    if (field.empty() || std::isdigit(static_cast<unsigned char>(field[0]))) {
      if (field.size() > 6) return unsupported("str.format field '{{{}}}'", field);
      const size_t idx = field.empty() ? auto_index++ : std::stoul(field);
      if (idx < a.pos.size()) v = &a.pos[idx];
    } else {
      v = a.get(SIZE_MAX, field);
    }
    if (!v) return bad_input("str.format: no argument for field '{{{}}}'", field);
    out += v->str();
    i = end;
  }
  return Value::string(std::move(out));
}

Result<Value> string_method(Interpreter& in, const std::string& s, const std::string& name, Args& a) {
  auto opt = [&](size_t i, const char* key) -> std::optional<std::string> {
    const Value* v = a.get(i, key);
    if (!v || v->is_none()) return std::nullopt;
    return v->str();
  };
  auto num = [&](size_t i, const char* key, int64_t def) {
    const Value* v = a.get(i, key);
    return v && v->is_number() ? v->as_int() : def;
  };
  if (name == "startswith" || name == "endswith") {
    const Value& p = arg0(a);
    std::vector<Value> prefixes = p.is_list() ? p.list_data().items : std::vector<Value>{p};
    for (const Value& x : prefixes) {
      if (!x.is_string()) return bad_input("{} first arg must be str or a tuple of str, not {}", name, x.type_name());
      const std::string& t = x.as_string();
      const bool hit = t.size() <= s.size() &&
                       (name == "startswith" ? s.compare(0, t.size(), t) == 0 : s.compare(s.size() - t.size(), t.size(), t) == 0);
      if (hit) return Value::boolean(true);
    }
    return Value::boolean(false);
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    return Value::string(py_strip(s, opt(0, "chars"), name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    std::vector<Value> parts;
    const auto sep = opt(0, "sep");
    if (sep && sep->empty()) return bad_input("empty separator");
    for (std::string& p : py_split(s, sep, num(1, "maxsplit", -1), name == "rsplit")) parts.push_back(Value::string(std::move(p)));
    return Value::list(std::move(parts));
  }
  if (name == "splitlines") {
    std::vector<Value> parts;
    for (std::string& p : py_split(s, std::string("\n"), -1, false)) parts.push_back(Value::string(std::move(p)));
    if (!parts.empty() && parts.back().as_string().empty()) parts.pop_back();
    return Value::list(std::move(parts));
  }
  if (name == "upper") return Value::string(py_upper(s));
  if (name == "lower") return Value::string(py_lower(s));
  if (name == "title") return Value::string(py_title(s));
  if (name == "capitalize") return Value::string(py_capitalize(s));
  if (name == "replace") return Value::string(py_replace(s, opt(0, "old").value_or(""), opt(1, "new").value_or(""), num(2, "count", -1)));
  if (name == "find" || name == "rfind" || name == "count") {
    const std::string sub = opt(0, "sub").value_or("");
    if (name == "count") {
      int64_t n = 0;
      if (sub.empty()) return Value::integer(static_cast<int64_t>(utf8_length(s)) + 1);
      for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
      return Value::integer(n);
    }
    const size_t p = name == "find" ? s.find(sub) : s.rfind(sub);
    return Value::integer(p == std::string::npos ? -1 : static_cast<int64_t>(utf8_length(s.substr(0, p))));
  }
  if (name == "join") {
    OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(arg0(a)));
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_string()) return bad_input("sequence item {}: expected str instance, {} found", i, items[i].type_name());
      out += (i ? s : "") + items[i].as_string();
    }
    return Value::string(std::move(out));
  }
  if (name == "format") return str_format(s, a);
  const std::u32string u = utf8_decode(s);
  auto all = [&](auto pred) { return Value::boolean(!u.empty() && std::all_of(u.begin(), u.end(), pred)); };
  if (name == "isdigit") return all([](char32_t c) { return c >= '0' && c <= '9'; });
  if (name == "isalpha") return all([](char32_t c) { return (c | 32) >= 'a' && (c | 32) <= 'z'; });
  if (name == "isalnum") return all([](char32_t c) { return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'); });
  if (name == "isspace") return all(py_isspace);
  if (name == "islower") return Value::boolean(is_cased_all(s, false));
  if (name == "isupper") return Value::boolean(is_cased_all(s, true));
  return unsupported("str.{}() is not supported", name);
}

const std::unordered_set<std::string> kStrMethods = {
    "startswith", "endswith", "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "upper", "lower",
    "title", "capitalize", "replace", "find", "rfind", "count", "join", "format", "isdigit", "isalpha",
    "isalnum", "isspace", "islower", "isupper"};
const std::unordered_set<std::string> kDictMethods = {"items", "keys", "values", "get", "copy"};
const std::unordered_set<std::string> kListMethods = {"index", "count", "copy"};
// The ImmutableSandboxedEnvironment lets templates see these but refuses to call them.
const std::unordered_set<std::string> kUnsafeDict = {"pop", "popitem", "update", "clear", "setdefault"};
const std::unordered_set<std::string> kUnsafeList = {"append", "pop", "extend", "insert", "remove", "reverse", "sort", "clear"};

}  // namespace

Result<bool> apply_test(Interpreter& in, const std::string& name, const Value& v, Args& a) {
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "boolean") return v.is_bool();
  if (name == "true" || name == "false") return v.is_bool() && v.as_bool() == (name == "true");
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "number") return v.is_number();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_mapping();
  if (name == "iterable") return v.is_undefined() || v.is_string() || v.is_list() || v.is_mapping();
  if (name == "sequence") {
    return v.is_undefined() || v.is_string() || v.is_mapping() || (v.is_list() && !v.list_data().is_generator);
  }
  if (name == "callable") return v.is_function();
  if (name == "sameas") {
    const Value& o = arg0(a);
    if (v.identity() || o.identity()) return v.identity() == o.identity();
    return v.kind() == o.kind() && py_equal(v, o);
  }
  if (name == "escaped") return false;
  if (name == "in") return contains(arg0(a), v);
  if (name == "eq" || name == "equalto" || name == "==") return compare_test("==", v, a);
  if (name == "ne" || name == "!=") return compare_test("!=", v, a);
  if (name == "lt" || name == "lessthan" || name == "<") return compare_test("<", v, a);
  if (name == "le" || name == "<=") return compare_test("<=", v, a);
  if (name == "gt" || name == "greaterthan" || name == ">") return compare_test(">", v, a);
  if (name == "ge" || name == ">=") return compare_test(">=", v, a);
  if (name == "odd" || name == "even" || name == "divisibleby") {
    int64_t d = 2;
    if (name == "divisibleby") {
      OG_ASSIGN_OR_RETURN(d, int_arg(arg0(a), "divisibleby argument"));
    }
    if (!v.is_number() || v.is_float() || d == 0 || d == -1) return bad_input("test '{}' needs integers", name);
    const int64_t m = ((v.as_int() % d) + d) % d;
    return name == "odd" ? m == 1 : m == 0;
  }
  if (name == "lower" || name == "upper") return is_cased_all(v.str(), name == "upper");
  if (name == "filter") return has_filter(v.str());
  if (name == "test") {
    static const std::unordered_set<std::string> kTests = {"defined", "undefined", "none", "boolean", "true", "false",
        "integer", "float", "number", "string", "mapping", "iterable", "sequence", "callable", "sameas", "escaped",
        "in", "eq", "equalto", "ne", "lt", "lessthan", "le", "gt", "greaterthan", "ge", "odd", "even",
        "divisibleby", "lower", "upper", "filter", "test"};
    return kTests.count(v.str()) > 0;
  }
  (void)in;
  return bad_input("no test named '{}'", name);
}

bool has_method(const Value& obj, const std::string& name) {
  if (obj.is_string()) return kStrMethods.count(name) > 0;
  if (obj.is_mapping()) return kDictMethods.count(name) > 0 || kUnsafeDict.count(name) > 0;
  if (obj.is_list() && !obj.list_data().is_generator) return kListMethods.count(name) > 0 || kUnsafeList.count(name) > 0;
  return false;
}

Result<Value> call_method(Interpreter& in, const Value& obj, const std::string& name, Args& a) {
  if ((obj.is_mapping() && kUnsafeDict.count(name)) || (obj.is_list() && kUnsafeList.count(name))) {
    return bad_input("access to attribute '{}' of '{}' object is unsafe.", name, obj.type_name());
  }
  if (obj.is_string()) return string_method(in, obj.as_string(), name, a);
  if (obj.is_mapping()) {
    const DictData& d = obj.dict_data();
    if (name == "get") {
      const Value& key = arg0(a);
      OG_ASSIGN_OR_RETURN(std::string stored, dict_key(key));
      const Value* v = d.find(stored);
      if (v) return *v;
      const Value* def = a.get(1, "default");
      return def ? *def : Value::none();  // dict.get returns None, not undefined
    }
    if (name == "copy") return Value::dict(d.items);
    std::vector<Value> out;
    for (const auto& [k, v] : d.items) {
      if (name == "keys") out.push_back(key_value(k));
      else if (name == "values") out.push_back(v);
      else out.push_back(Value::list({key_value(k), v}, true));
    }
    return Value::list(std::move(out));
  }
  const auto& items = obj.list_data().items;
  if (name == "copy") return Value::list(items, obj.list_data().is_tuple);
  int64_t n = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!py_equal(items[i], arg0(a))) continue;
    if (name == "index") return Value::integer(static_cast<int64_t>(i));
    ++n;
  }
  if (name == "index") return bad_input("{} is not in list", arg0(a).repr());
  return Value::integer(n);
}

void add_globals(Scope& g, std::optional<std::tm> now) {
  g.vars["raise_exception"] = Value::function("raise_exception", [](Interpreter&, Args& a) -> Result<Value> {
    return bad_input("{}", arg0(a).str());
  });
  if (now) {  // fill in tm_wday/tm_yday for %a, %A, %j
    std::tm copy = *now;
    const std::time_t t = timegm(&copy);
    gmtime_r(&t, &*now);
  }
  g.vars["strftime_now"] = Value::function("strftime_now", [now](Interpreter&, Args& a) -> Result<Value> {
    std::tm local{};
    if (now) {
      local = *now;
    } else {
      const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
      localtime_r(&t, &local);
    }
    char buf[256];
    const size_t n = std::strftime(buf, sizeof(buf), arg0(a).str().c_str(), &local);
    return Value::string(std::string(buf, n));
  });
  g.vars["range"] = Value::function("range", [](Interpreter&, Args& a) -> Result<Value> {
    for (const Value& v : a.pos) {
      if (!v.is_int() && !v.is_bool()) return bad_input("range() needs integers, got {}", v.type_name());
    }
    if (a.pos.empty() || a.pos.size() > 3) return bad_input("range expected 1 to 3 arguments");
    const int64_t start = a.pos.size() > 1 ? a.pos[0].as_int() : 0;
    const int64_t stop = a.pos.size() > 1 ? a.pos[1].as_int() : a.pos[0].as_int();
    const int64_t step = a.pos.size() > 2 ? a.pos[2].as_int() : 1;
    if (step == 0) return bad_input("range() arg 3 must not be zero");
    std::vector<Value> out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      if (out.size() >= 100000) return bad_input("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
      out.push_back(Value::integer(i));
    }
    return Value::list(std::move(out));
  });
  auto make_dict = [](bool ns) {
    return [ns](Interpreter&, Args& a) -> Result<Value> {
      Value d = Value::dict({}, ns);
      for (const Value& p : a.pos) {
        if (!p.is_mapping()) return bad_input("{}() positional argument must be a mapping", ns ? "namespace" : "dict");
        for (const auto& [k, v] : p.dict_data().items) d.dict_data().set(k, v);
      }
      for (const auto& [k, v] : a.kw) d.dict_data().set(k, v);
      if (ns && d.dict_data().holds_namespace) return unsupported("a namespace cannot hold a namespace");
      return d;
    };
  };
  g.vars["namespace"] = Value::function("namespace", make_dict(true));
  g.vars["dict"] = Value::function("dict", make_dict(false));
}

}  // namespace og::chat
