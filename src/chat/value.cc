#include "chat/value.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "chat/text.h"

namespace og::chat {

const Value* Args::get(size_t i, std::string_view name) const {
  if (i < pos.size()) return &pos[i];
  for (const auto& [k, v] : kw) {
    if (k == name) return &v;
  }
  return nullptr;
}

const Value* DictData::find(std::string_view key) const {
  for (const auto& [k, v] : items) {
    if (k == key) return &v;
  }
  return nullptr;
}

void DictData::set(const std::string& key, Value v) {
  depth = std::max(depth, 1 + v.nesting());
  holds_namespace = holds_namespace || v.holds_namespace();
  for (auto& [k, old] : items) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  items.emplace_back(key, std::move(v));
}

namespace {
constexpr char kKeyTag = '\xff';  // never in UTF-8 text
}  // namespace

Result<std::string> dict_key(const Value& key) {
  switch (key.kind()) {
    case Value::Kind::kString: return key.as_string();
    case Value::Kind::kNone: return std::string{kKeyTag, 'n'};
    case Value::Kind::kBool: return std::string{kKeyTag, 'b', key.as_bool() ? '1' : '0'};
    case Value::Kind::kInt: return std::string{kKeyTag, 'i'} + std::to_string(key.as_int());
    case Value::Kind::kFloat:
      // Python: 2.0 == 2, so they are one key.
      if (std::isfinite(key.as_double()) && key.as_double() == std::floor(key.as_double()) &&
          std::fabs(key.as_double()) < 9.0e15)
        return std::string{kKeyTag, 'i'} + std::to_string(static_cast<int64_t>(key.as_double()));
      return std::string{kKeyTag, 'f'} + key.repr();
    case Value::Kind::kUndefined:
    case Value::Kind::kFunction: return std::string{kKeyTag, 'u'};  // hashable, and never a stored key
    default: return bad_input("unhashable type: '{}'", key.type_name());
  }
}

Value key_value(const std::string& stored) {
  if (stored.size() < 2 || stored[0] != kKeyTag) return Value::string(stored);
  const std::string rest = stored.substr(2);
  switch (stored[1]) {
    case 'n': return Value::none();
    case 'b': return Value::boolean(rest == "1");
    case 'i': return Value::integer(std::stoll(rest));
    case 'f': return Value::number(std::stod(rest));
    default: return Value::string(stored);
  }
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

Value Value::list(std::vector<Value> items, bool is_tuple) {
  auto data = std::make_shared<ListData>();
  for (const Value& v : items) {
    data->depth = std::max(data->depth, 1 + v.nesting());
    data->holds_namespace = data->holds_namespace || v.holds_namespace();
  }
  data->items = std::move(items);
  data->is_tuple = is_tuple;
  return Value(std::move(data));
}

Value Value::generator(std::vector<Value> items) {
  Value v = list(std::move(items));
  v.list_data().is_generator = true;
  return v;
}

Value Value::dict(std::vector<std::pair<std::string, Value>> items, bool is_namespace) {
  auto data = std::make_shared<DictData>();
  for (const auto& [k, v] : items) {
    data->depth = std::max(data->depth, 1 + v.nesting());
    data->holds_namespace = data->holds_namespace || v.holds_namespace();
  }
  data->items = std::move(items);
  data->is_namespace = is_namespace;
  return Value(std::move(data));
}

Value Value::function(std::string name, NativeFn fn) {
  return Value(std::make_shared<Function>(Function{std::move(name), std::move(fn)}));
}

static Result<Value> from_json_at(const nlohmann::ordered_json& j, int depth) {
  if ((j.is_array() || j.is_object()) && depth >= kMaxNesting)
    return bad_input("JSON nested deeper than {} levels", kMaxNesting);
  switch (j.type()) {
    case nlohmann::json::value_t::null: return Value::none();
    case nlohmann::json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: return Value::integer(static_cast<int64_t>(j.get<uint64_t>()));
    case nlohmann::json::value_t::number_float: return Value::number(j.get<double>());
    case nlohmann::json::value_t::string: return Value::string(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      std::vector<Value> items;
      for (const auto& e : j) {
        OG_ASSIGN_OR_RETURN(Value v, from_json_at(e, depth + 1));
        items.push_back(std::move(v));
      }
      return Value::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
      std::vector<std::pair<std::string, Value>> items;
      for (const auto& [k, e] : j.items()) {
        OG_ASSIGN_OR_RETURN(Value v, from_json_at(e, depth + 1));
        items.emplace_back(k, std::move(v));
      }
      return Value::dict(std::move(items));
    }
    default: return Value::none();
  }
}

Result<Value> Value::from_json(const nlohmann::ordered_json& j) { return from_json_at(j, 0); }

int Value::nesting() const {
  if (is_list()) return list_data().depth;
  return is_dict() ? dict_data().depth : 0;
}

bool Value::holds_namespace() const {
  if (is_list()) return list_data().holds_namespace;
  return is_dict() && (dict_data().is_namespace || dict_data().holds_namespace);
}

int64_t Value::as_int() const { return is_bool() ? (as_bool() ? 1 : 0) : std::get<int64_t>(v_); }

double Value::as_double() const {
  return is_float() ? std::get<double>(v_) : static_cast<double>(as_int());
}

const void* Value::identity() const {
  switch (kind()) {
    case Kind::kList: return &list_data();
    case Kind::kDict: return &dict_data();
    case Kind::kFunction: return &function_data();
    default: return nullptr;
  }
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return as_bool();
    case Kind::kInt: return as_int() != 0;
    case Kind::kFloat: return as_double() != 0.0;
    case Kind::kString: return !as_string().empty();
    case Kind::kList: return list_data().is_generator || !list_data().items.empty();
    case Kind::kDict: return dict_data().is_namespace || !dict_data().items.empty();
    case Kind::kFunction: return true;
  }
  return false;
}

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList:
      return list_data().is_generator ? "generator" : list_data().is_tuple ? "tuple" : "list";
    case Kind::kDict: return dict_data().is_namespace ? "Namespace" : "dict";
    case Kind::kFunction: return "function";
  }
  return "object";
}

std::string Value::str() const {
  switch (kind()) {
    case Kind::kUndefined: return "";
    case Kind::kString: return as_string();
    default: return repr();
  }
}

std::string Value::repr() const {
  switch (kind()) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "None";
    case Kind::kBool: return as_bool() ? "True" : "False";
    case Kind::kInt: return std::to_string(as_int());
    case Kind::kFloat: return py_float_repr(as_double());
    case Kind::kString: return py_repr_string(as_string());
    case Kind::kList: {
      const ListData& l = list_data();
      if (l.is_generator) return "<generator object>";
      std::string out = l.is_tuple ? "(" : "[";
      for (size_t i = 0; i < l.items.size(); ++i) out += (i ? ", " : "") + l.items[i].repr();
      if (l.is_tuple && l.items.size() == 1) out += ",";
      return out + (l.is_tuple ? ")" : "]");
    }
    case Kind::kDict: {
      const DictData& d = dict_data();
      std::string out = d.is_namespace ? "<Namespace {" : "{";
      for (size_t i = 0; i < d.items.size(); ++i) {
        out += (i ? ", " : "") + key_value(d.items[i].first).repr() + ": " + d.items[i].second.repr();
      }
      return out + (d.is_namespace ? "}>" : "}");
    }
    case Kind::kFunction: return "<function " + function_data().name + ">";
  }
  return "";
}

Result<int64_t> int_arg(const Value& v, std::string_view what) {
  if (v.is_int() || v.is_bool()) return v.as_int();
  return bad_input("{} must be an integer, not {}", what, v.type_name());
}

bool py_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      const ListData& x = a.list_data();
      const ListData& y = b.list_data();
      if (x.is_generator || y.is_generator) return &x == &y;
      if (x.is_tuple != y.is_tuple || x.items.size() != y.items.size()) return false;
      for (size_t i = 0; i < x.items.size(); ++i) {
        if (!py_equal(x.items[i], y.items[i])) return false;
      }
      return true;
    }
    case Value::Kind::kDict: {
      const DictData& x = a.dict_data();
      const DictData& y = b.dict_data();
      if (x.is_namespace || y.is_namespace) return &x == &y;
      if (x.items.size() != y.items.size()) return false;
      for (const auto& [k, v] : x.items) {
        const Value* other = y.find(k);
        if (!other || !py_equal(v, *other)) return false;
      }
      return true;
    }
    default: return a.identity() == b.identity();
  }
}

Result<bool> py_less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 keeps code point order
  if (a.is_list() && b.is_list() && a.list_data().is_tuple == b.list_data().is_tuple &&
      !a.list_data().is_generator && !b.list_data().is_generator) {
    const auto& x = a.list_data().items;
    const auto& y = b.list_data().items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!py_equal(x[i], y[i])) return py_less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  return bad_input("'<' not supported between instances of '{}' and '{}'", a.type_name(),
                   b.type_name());
}

static void json_quote(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  for (char32_t c : utf8_decode(s)) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || (ensure_ascii && c > 0x7E)) {
          if (c > 0xFFFF) {  // ensure_ascii writes astral code points as surrogate pairs
            const char32_t v = c - 0x10000;
            out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
          } else {
            out += fmt::format("\\u{:04x}", static_cast<uint32_t>(c));
          }
        } else {
          append_utf8(out, c);
        }
    }
  }
  out += '"';
}

static Status dump(const Value& v, const JsonOptions& o, int depth, std::string& out) {
  auto newline = [&](int d) {
    if (!o.indent) return;
    out += '\n';
    for (int i = 0; i < d; ++i) out += *o.indent;
  };
  switch (v.kind()) {
    case Value::Kind::kNone: out += "null"; return Status::ok();
    case Value::Kind::kBool: out += v.as_bool() ? "true" : "false"; return Status::ok();
    case Value::Kind::kInt: out += std::to_string(v.as_int()); return Status::ok();
    case Value::Kind::kFloat: {
      const double d = v.as_double();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : py_float_repr(d);
      return Status::ok();
    }
    case Value::Kind::kString: json_quote(out, v.as_string(), o.ensure_ascii); return Status::ok();
    case Value::Kind::kList: {
      const ListData& l = v.list_data();
      if (l.is_generator) break;
      if (l.items.empty()) {
        out += "[]";
        return Status::ok();
      }
      out += '[';
      for (size_t i = 0; i < l.items.size(); ++i) {
        if (i) out += o.item_sep;
        newline(depth + 1);
        OG_TRY(dump(l.items[i], o, depth + 1, out));
      }
      newline(depth);
      out += ']';
      return Status::ok();
    }
    case Value::Kind::kDict: {
      const DictData& d = v.dict_data();
      if (d.is_namespace) break;
      if (d.items.empty()) {
        out += "{}";
        return Status::ok();
      }
      // json.dumps writes a non-string key as the JSON text of its value, quoted (None as
      // "null", True as "true", 2.5 as "2.5"), and cannot sort keys of mixed kinds.
      std::vector<std::pair<std::string, const Value*>> items;
      for (const auto& kv : d.items) {
        const Value k = key_value(kv.first);
        std::string text = k.is_string() ? k.as_string() : "";
        if (!k.is_string()) OG_TRY(dump(k, o, depth, text));
        items.emplace_back(std::move(text), &kv.second);
      }
      if (o.sort_keys) {  // Python's <: keys of unordered kinds (str and int) are an error
        std::vector<Value> keys;
        std::vector<size_t> order(items.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i, keys.push_back(key_value(d.items[i].first));
        Status err;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
          auto lt = py_less(keys[a], keys[b]);
          if (!lt.is_ok()) err = lt.status();
          return lt.is_ok() && *lt;
        });
        OG_TRY(err);
        std::vector<std::pair<std::string, const Value*>> sorted;
        for (size_t i : order) sorted.push_back(items[i]);
        items = std::move(sorted);
      }
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += o.item_sep;
        newline(depth + 1);
        json_quote(out, items[i].first, o.ensure_ascii);
        out += o.key_sep;
        OG_TRY(dump(*items[i].second, o, depth + 1, out));
      }
      newline(depth);
      out += '}';
      return Status::ok();
    }
    default: break;
  }
  return bad_input("Object of type {} is not JSON serializable", v.type_name());
}

Result<std::string> to_json(const Value& v, const JsonOptions& options) {
  std::string out;
  OG_TRY(dump(v, options, 0, out));
  return out;
}

}  // namespace og::chat
