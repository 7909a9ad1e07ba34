// Jinja's built-in filters and tests used by chat templates, with jinja2/filters.py and
// jinja2/tests.py semantics (tojson is transformers' override: json.dumps, no HTML escaping).
// An unknown filter or test is an error when it is reached, as in Jinja.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "chat/interpreter.h"
#include "chat/text.h"

namespace og::chat {
namespace {

using FilterFn = Result<Value> (*)(Interpreter&, const Value&, Args&);
using TestFn = Result<bool> (*)(Interpreter&, const Value&, Args&);

bool flag(const Args& a, size_t i, const char* name, bool def) {
  const Value* v = a.get(i, name);
  return v ? v->truthy() : def;
}

std::optional<std::string> opt_str(const Args& a, size_t i, const char* name) {
  const Value* v = a.get(i, name);
  if (!v || v->is_none() || v->is_undefined()) return std::nullopt;
  return v->str();
}

Result<int64_t> len_of(Interpreter& in, const Value& v) {
  if (v.is_string()) return static_cast<int64_t>(utf8_length(v.as_string()));
  if ((v.is_list() && !v.list_data().is_generator) || v.is_mapping()) {
    OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(v));
    return static_cast<int64_t>(items.size());
  }
  if (v.is_undefined()) return 0;
  return bad_input("object of type '{}' has no len()", v.type_name());
}

// Jinja's make_attrgetter: "a.b.0" looks up a, then b, then index 0, each via getitem.
Result<Value> attr_path(Interpreter& in, Value v, const std::string& path) {
  for (const std::string& part : py_split(path, std::string("."), -1, false)) {
    const bool digits = !part.empty() && part.size() < 18 && std::all_of(part.begin(), part.end(), ::isdigit);
    OG_ASSIGN_OR_RETURN(v, in.getitem(v, digits ? Value::integer(std::stoll(part)) : Value::string(part)));
  }
  return v;
}

// Sort/compare key: lower-cased strings unless case_sensitive, as Jinja's ignore_case.
Value sort_key(const Value& v, bool case_sensitive) {
  return !case_sensitive && v.is_string() ? Value::string(py_lower(v.as_string())) : v;
}

// An indent given as a string, or as a count of spaces (negative means none).
Result<std::string> indent_arg(const Value& v) {
  if (v.is_string()) return v.as_string();
  OG_ASSIGN_OR_RETURN(int64_t n, int_arg(v, "indent"));
  if (n > 4096) return unsupported("indent of {} spaces", n);
  return std::string(static_cast<size_t>(std::max<int64_t>(0, n)), ' ');
}

bool in_int_range(double d) { return std::isfinite(d) && std::fabs(d) < 9.2e18; }

Result<Value> f_trim(Interpreter&, const Value& v, Args& a) {
  return Value::string(py_strip(v.str(), opt_str(a, 0, "chars"), true, true));
}
Result<Value> f_length(Interpreter& in, const Value& v, Args&) {
  OG_ASSIGN_OR_RETURN(int64_t n, len_of(in, v));
  return Value::integer(n);
}
Result<Value> f_upper(Interpreter&, const Value& v, Args&) { return Value::string(py_upper(v.str())); }
Result<Value> f_lower(Interpreter&, const Value& v, Args&) { return Value::string(py_lower(v.str())); }
Result<Value> f_title(Interpreter&, const Value& v, Args&) { return Value::string(py_title(v.str())); }
Result<Value> f_capitalize(Interpreter&, const Value& v, Args&) { return Value::string(py_capitalize(v.str())); }
Result<Value> f_string(Interpreter&, const Value& v, Args&) { return Value::string(v.str()); }
// Markup(value): a string (str() of anything else) that `+` does not escape.
Result<Value> f_safe(Interpreter&, const Value& v, Args&) { return Value::markup(v.is_string() ? v.as_string() : v.str()); }

Result<Value> f_tojson(Interpreter&, const Value& v, Args& a) {
  JsonOptions o;
  o.ensure_ascii = flag(a, 0, "ensure_ascii", false);
  if (const Value* ind = a.get(1, "indent"); ind && !ind->is_none()) {
    OG_ASSIGN_OR_RETURN(o.indent, indent_arg(*ind));
    o.item_sep = ",";
  }
  if (const Value* sep = a.get(2, "separators"); sep && sep->is_list() && sep->list_data().items.size() == 2) {
    o.item_sep = sep->list_data().items[0].str();
    o.key_sep = sep->list_data().items[1].str();
  }
  o.sort_keys = flag(a, 3, "sort_keys", false);
  OG_ASSIGN_OR_RETURN(std::string s, to_json(v, o));
  return Value::string(std::move(s));
}

Result<Value> f_items(Interpreter&, const Value& v, Args&) {
  if (v.is_undefined()) return Value::generator({});
  if (!v.is_mapping()) return bad_input("can only get item pairs from a mapping, not {}", v.type_name());
  std::vector<Value> out;
  for (const auto& [k, x] : v.dict_data().items) out.push_back(Value::list({key_value(k), x}, true));
  return Value::generator(std::move(out));
}

Result<Value> f_first(Interpreter& in, const Value& v, Args&) {
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(v));
  if (items.empty()) return Value::undefined("first item of an empty sequence");
  return items.front();
}

Result<Value> f_last(Interpreter& in, const Value& v, Args&) {
  if (v.is_list() && v.list_data().is_generator) return bad_input("'generator' object is not reversible");
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(v));
  if (items.empty()) return Value::undefined("last item of an empty sequence");
  return items.back();
}

Result<Value> f_default(Interpreter&, const Value& v, Args& a) {
  const Value* def = a.get(0, "default_value");
  if (v.is_undefined() || (flag(a, 1, "boolean", false) && !v.truthy())) return def ? *def : Value::string("");
  return v;
}

Result<Value> f_join(Interpreter& in, const Value& v, Args& a) {
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(v));
  const std::string sep = opt_str(a, 0, "d").value_or("");
  const std::optional<std::string> attr = opt_str(a, 1, "attribute");
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (attr) {
      OG_ASSIGN_OR_RETURN(items[i], attr_path(in, items[i], *attr));
    }
    out += (i ? sep : "") + items[i].str();
  }
  return Value::string(std::move(out));
}

Result<Value> f_replace(Interpreter&, const Value& v, Args& a) {
  const Value* old = a.get(0, "old");
  const Value* repl = a.get(1, "new");
  if (!old || !repl) return bad_input("replace() needs 'old' and 'new'");
  const Value* count = a.get(2, "count");
  int64_t n = -1;
  if (count && !count->is_none()) {
    OG_ASSIGN_OR_RETURN(n, int_arg(*count, "replace() count"));
  }
  return Value::string(py_replace(v.str(), old->str(), repl->str(), n));
}

// Python int()/float() of a string, accepting surrounding whitespace and '_' separators.
std::optional<double> parse_number(const std::string& s, bool integer_only) {
  std::string t = py_strip(s, std::nullopt, true, true);
  t.erase(std::remove(t.begin(), t.end(), '_'), t.end());
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double d = integer_only ? static_cast<double>(std::strtoll(t.c_str(), &end, 10)) : std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return std::nullopt;
  return d;
}

Result<Value> f_int(Interpreter&, const Value& v, Args& a) {
  const Value* def = a.get(0, "default");
  if (v.is_int() || v.is_bool()) return Value::integer(v.as_int());
  if (v.is_float() && in_int_range(v.as_double())) return Value::integer(static_cast<int64_t>(v.as_double()));
  if (v.is_string()) {  // int("3") else int(float("3.7"))
    if (auto i = parse_number(v.as_string(), true)) return Value::integer(static_cast<int64_t>(*i));
    if (auto d = parse_number(v.as_string(), false); d && in_int_range(*d)) return Value::integer(static_cast<int64_t>(*d));
  }
  return def ? *def : Value::integer(0);
}

Result<Value> f_float(Interpreter&, const Value& v, Args& a) {
  const Value* def = a.get(0, "default");
  if (v.is_number()) return Value::number(v.as_double());
  if (v.is_string()) {
    if (auto d = parse_number(v.as_string(), false)) return Value::number(*d);
  }
  return def ? *def : Value::number(0.0);
}

Result<Value> f_list(Interpreter& in, const Value& v, Args&) {
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(v));
  return Value::list(std::move(items));
}

Result<Value> f_abs(Interpreter&, const Value& v, Args&) {
  if (v.is_float()) return Value::number(std::fabs(v.as_double()));
  if (v.is_number()) {
    const int64_t x = v.as_int();
    if (x == INT64_MIN) return unsupported("abs({}) overflows 64 bits", x);
    return Value::integer(x < 0 ? -x : x);
  }
  return bad_input("bad operand type for abs(): '{}'", v.type_name());
}

Result<Value> f_round(Interpreter&, const Value& v, Args& a) {
  if (!v.is_number()) return bad_input("type {} doesn't define __round__", v.type_name());
  int64_t prec = 0;
  if (const Value* p = a.get(0, "precision")) {
    OG_ASSIGN_OR_RETURN(prec, int_arg(*p, "round() precision"));
  }
  const std::string method = opt_str(a, 1, "method").value_or("common");
  if (method == "common") {
    if (!v.is_float() && prec >= 0) return Value::integer(v.as_int());  // round(int, n) stays an int
    if (prec < 0) {  // round(x, -2): to hundreds, ties to even
      const double scale = std::pow(10.0, static_cast<double>(-prec));
      const double r = std::nearbyint(v.as_double() / scale) * scale;
      if (!v.is_float() && in_int_range(r)) return Value::integer(static_cast<int64_t>(r));
      return Value::number(r);
    }
    // printf rounds the exact binary value half-to-even, which is what Python's round() does.
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(std::clamp<int64_t>(prec, 0, 300)), v.as_double());
    return Value::number(std::strtod(buf, nullptr));
  }
  if (method != "ceil" && method != "floor") return bad_input("method must be common, ceil or floor");
  const double scale = std::pow(10.0, static_cast<double>(prec));
  const double x = v.as_double() * scale;
  return Value::number((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
}

Result<Value> f_indent(Interpreter&, const Value& v, Args& a) {
  std::string ind = "    ";
  if (const Value* w = a.get(0, "width")) {
    OG_ASSIGN_OR_RETURN(ind, indent_arg(*w));
  }
  const bool first = flag(a, 1, "first", false), blank = flag(a, 2, "blank", false);
  std::vector<std::string> lines = py_split(v.str() + "\n", std::string("\n"), -1, false);
  lines.pop_back();  // Jinja appends "\n" so splitlines() keeps a trailing empty line
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += "\n";
    if (i == 0 ? first : (blank || !lines[i].empty())) out += ind;
    out += lines[i];
  }
  return Value::string(std::move(out));
}

// escape/e return Markup, leaving Markup as it is; forceescape escapes Markup too.
Result<Value> f_escape(Interpreter&, const Value& v, Args&) {
  if (v.is_markup()) return v;
  return Value::markup(html_escape(v.str()));
}

Result<Value> f_forceescape(Interpreter&, const Value& v, Args&) { return Value::markup(html_escape(v.str())); }

// Python getattr() only: unlike `.name`, never falls back to a dict key.
Result<Value> f_attr(Interpreter& in, const Value& v, Args& a) {
  const Value* name = a.get(0, "name");
  if (!name) return bad_input("attr() needs a name");
  if (v.is_mapping() && !has_method(v, name->str())) return Value::undefined(name->str());
  return in.getattr(v, name->str());
}

// select/reject/selectattr/rejectattr share Jinja's select_or_reject.
Result<Value> select_impl(Interpreter& in, const Value& v, Args& a, bool with_attr, bool keep_on) {
  if (!v.truthy()) return Value::generator({});  // Jinja checks `if value:` first (tools=None)
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(v));
  size_t next = 0;
  std::string attr;
  if (with_attr) {
    if (a.pos.empty()) return bad_input("missing parameter for attribute name");
    attr = a.pos[next++].str();
  }
  std::optional<std::string> test;
  if (next < a.pos.size()) test = a.pos[next++].str();
  Args targs;
  targs.pos.assign(a.pos.begin() + next, a.pos.end());
  std::vector<Value> out;
  for (const Value& item : items) {
    Value x = item;
    if (with_attr) {
      OG_ASSIGN_OR_RETURN(x, attr_path(in, item, attr));
    }
    bool ok = x.truthy();
    if (test) {
      OG_ASSIGN_OR_RETURN(ok, apply_test(in, *test, x, targs));
    }
    if (ok == keep_on) out.push_back(item);
  }
  return Value::generator(std::move(out));
}
Result<Value> f_select(Interpreter& in, const Value& v, Args& a) { return select_impl(in, v, a, false, true); }
Result<Value> f_reject(Interpreter& in, const Value& v, Args& a) { return select_impl(in, v, a, false, false); }
Result<Value> f_selectattr(Interpreter& in, const Value& v, Args& a) { return select_impl(in, v, a, true, true); }
Result<Value> f_rejectattr(Interpreter& in, const Value& v, Args& a) { return select_impl(in, v, a, true, false); }

Result<Value> f_map(Interpreter& in, const Value& v, Args& a) {
  if (!v.truthy()) return Value::generator({});  // as select(): a falsy input maps to nothing
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(v));
  const std::optional<std::string> attr = opt_str(a, 99, "attribute");
  if (!attr && a.pos.empty()) return bad_input("map() needs a filter name or attribute=");
  std::vector<Value> out;
  for (const Value& item : items) {
    if (attr) {
      OG_ASSIGN_OR_RETURN(Value x, attr_path(in, item, *attr));
      const Value* def = a.get(99, "default");
      out.push_back(x.is_undefined() && def ? *def : x);
      continue;
    }
    Args fargs;
    fargs.pos.assign(a.pos.begin() + 1, a.pos.end());
    fargs.kw = a.kw;
    OG_ASSIGN_OR_RETURN(Value x, apply_filter(in, a.pos[0].str(), item, fargs));
    out.push_back(std::move(x));
  }
  return Value::generator(std::move(out));
}

// Items ordered by `key_of`, stably, with Python's < (mixed kinds are an error).
Result<std::vector<Value>> sorted(std::vector<Value> items, const std::function<Result<Value>(const Value&)>& key_of, bool reverse) {
  std::vector<std::pair<Value, Value>> keyed;
  for (Value& it : items) {
    OG_ASSIGN_OR_RETURN(Value k, key_of(it));
    keyed.emplace_back(std::move(k), std::move(it));
  }
  Status err;
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    auto lt = reverse ? py_less(y.first, x.first) : py_less(x.first, y.first);
    if (!lt.is_ok()) err = lt.status();
    return lt.is_ok() && *lt;
  });
  OG_TRY(err);
  std::vector<Value> out;
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return out;
}

Result<Value> f_sort(Interpreter& in, const Value& v, Args& a) {
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(v));
  const bool cs = flag(a, 1, "case_sensitive", false);
  const std::optional<std::string> attr = opt_str(a, 2, "attribute");
  OG_ASSIGN_OR_RETURN(items, sorted(std::move(items), [&](const Value& x) -> Result<Value> {
    Value k = x;
    if (attr) {
      OG_ASSIGN_OR_RETURN(k, attr_path(in, x, *attr));
    }
    return sort_key(k, cs);
  }, flag(a, 0, "reverse", false)));
  return Value::list(std::move(items));
}

Result<Value> f_dictsort(Interpreter& in, const Value& v, Args& a) {
  OG_ASSIGN_OR_RETURN(Value pairs, f_items(in, v, a));
  const bool cs = flag(a, 0, "case_sensitive", false);
  const size_t pos = opt_str(a, 1, "by").value_or("key") == "value" ? 1 : 0;
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, sorted(pairs.list_data().items, [&](const Value& x) -> Result<Value> {
    return sort_key(x.list_data().items[pos], cs);
  }, flag(a, 2, "reverse", false)));
  return Value::list(std::move(items));
}

Result<Value> f_unique(Interpreter& in, const Value& v, Args& a) {
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(v));
  const bool cs = flag(a, 0, "case_sensitive", false);
  const std::optional<std::string> attr = opt_str(a, 1, "attribute");
  std::vector<Value> out, seen;
  for (const Value& x : items) {
    Value k = x;
    if (attr) {
      OG_ASSIGN_OR_RETURN(k, attr_path(in, x, *attr));
    }
    k = sort_key(k, cs);
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return py_equal(s, k); })) {
      seen.push_back(k);
      out.push_back(x);
    }
  }
  return Value::generator(std::move(out));
}

Result<Value> f_reverse(Interpreter& in, const Value& v, Args&) {
  if (v.is_string()) return py_slice(v, std::nullopt, std::nullopt, -1);
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(v));
  std::reverse(items.begin(), items.end());
  return Value::generator(std::move(items));  // Jinja returns a reverse iterator
}

Result<Value> min_max(Interpreter& in, const Value& v, Args& a, bool want_max) {
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(v));
  if (items.empty()) return Value::undefined(want_max ? "max of an empty sequence" : "min of an empty sequence");
  const bool cs = flag(a, 0, "case_sensitive", false);
  const std::optional<std::string> attr = opt_str(a, 1, "attribute");
  OG_ASSIGN_OR_RETURN(items, sorted(std::move(items), [&](const Value& x) -> Result<Value> {
    Value k = x;
    if (attr) {
      OG_ASSIGN_OR_RETURN(k, attr_path(in, x, *attr));
    }
    return sort_key(k, cs);
  }, false));
  return want_max ? items.back() : items.front();
}
Result<Value> f_min(Interpreter& in, const Value& v, Args& a) { return min_max(in, v, a, false); }
Result<Value> f_max(Interpreter& in, const Value& v, Args& a) { return min_max(in, v, a, true); }

Result<Value> f_sum(Interpreter& in, const Value& v, Args& a) {
  OG_ASSIGN_OR_RETURN(std::vector<Value> items, in.iterate(v));
  const std::optional<std::string> attr = opt_str(a, 0, "attribute");
  const Value* start = a.get(1, "start");
  Value acc = start ? *start : Value::integer(0);
  for (const Value& x : items) {
    Value k = x;
    if (attr) {
      OG_ASSIGN_OR_RETURN(k, attr_path(in, x, *attr));
    }
    OG_ASSIGN_OR_RETURN(acc, binary_op("+", acc, k));
  }
  return acc;
}

const std::unordered_map<std::string, FilterFn>& filters() {
  static const std::unordered_map<std::string, FilterFn> kFilters = {
      {"trim", f_trim}, {"length", f_length}, {"count", f_length}, {"upper", f_upper},
      {"lower", f_lower}, {"title", f_title}, {"capitalize", f_capitalize}, {"string", f_string},
      {"safe", f_safe}, {"tojson", f_tojson}, {"items", f_items}, {"first", f_first},
      {"last", f_last}, {"default", f_default}, {"d", f_default}, {"join", f_join},
      {"replace", f_replace}, {"int", f_int}, {"float", f_float}, {"list", f_list},
      {"abs", f_abs}, {"round", f_round}, {"indent", f_indent}, {"escape", f_escape},
      {"e", f_escape}, {"forceescape", f_forceescape}, {"attr", f_attr}, {"select", f_select},
      {"reject", f_reject}, {"selectattr", f_selectattr}, {"rejectattr", f_rejectattr},
      {"map", f_map}, {"sort", f_sort}, {"dictsort", f_dictsort}, {"unique", f_unique},
      {"reverse", f_reverse}, {"min", f_min}, {"max", f_max}, {"sum", f_sum},
  };
  return kFilters;
}

}  // namespace

Result<Value> apply_filter(Interpreter& in, const std::string& name, const Value& input, Args& args) {
  auto it = filters().find(name);
  if (it == filters().end()) return bad_input("no filter named '{}'", name);
  auto r = it->second(in, input, args);
  if (!r.is_ok()) return r.status().with_context("filter '" + name + "'");
  return r;
}

bool has_filter(const std::string& name) { return filters().count(name) > 0; }

}  // namespace og::chat
