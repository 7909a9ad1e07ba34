#include "constrain/json_schema.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "constrain/json_grammar.h"
#include "constrain/json_numbers.h"
#include "constrain/regex.h"

namespace og::constrain {
namespace {

using json = nlohmann::ordered_json;

// Keywords that do not change which texts are valid here (annotations; `format` asserts
// nothing unless a validator opts in, and the $defs are reached through $ref).
const std::set<std::string, std::less<>> kAnnotations = {
    "$schema", "$id", "$comment", "$anchor", "title", "description", "default", "examples", "readOnly", "writeOnly",
    "deprecated", "format", "contentMediaType", "contentEncoding", "$defs", "definitions"};
// Standard keywords that change validity and are not compiled (yet): each is an error naming
// it. Keywords in neither list are not JSON Schema's and are ignored, as the standard says.
const std::set<std::string, std::less<>> kUnsupported = {
    "multipleOf", "not", "contains",
    "minContains", "maxContains", "if", "then", "else", "dependencies", "dependentRequired", "dependentSchemas",
    "patternProperties", "propertyNames", "minProperties", "maxProperties", "unevaluatedProperties",
    "unevaluatedItems", "$dynamicRef", "$recursiveRef"};
// Keywords compiled into the grammar.
const std::set<std::string, std::less<>> kSupported = {
    "type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "properties", "required", "additionalProperties",
    "items", "prefixItems", "additionalItems", "minItems", "maxItems", "minLength", "maxLength", "uniqueItems",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern"};
const char* const kTypes[] = {"null", "boolean", "object", "array", "number", "string"};  // number: integers too

ExprPtr nothing() { return alt({}); }
ExprPtr ch(char c) { return lit(std::string_view(&c, 1)); }

Status at(const std::string& path, const std::string& what) {
  return bad_input("json schema {}: {}", path.empty() ? "/" : path, what);
}

// RFC 6901 with the URI fragment's percent-encoding ("#/a~1b/%25c" -> "/a~1b/%c").
Result<std::string> unescape_fragment(const std::string& ref) {
  const auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
  std::string out;
  for (size_t i = 1; i < ref.size(); ++i) {
    if (ref[i] != '%') {
      out += ref[i];
      continue;
    }
    if (i + 2 >= ref.size() || hex(ref[i + 1]) < 0 || hex(ref[i + 2]) < 0) return bad_input("$ref '{}': a bad %-escape", ref);
    out += static_cast<char>(hex(ref[i + 1]) * 16 + hex(ref[i + 2]));
    i += 2;
  }
  return out;
}

// A number with no fractional part (1 and 1.0 alike: JSON Schema's integers).
bool is_integral(const json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  return v.is_number_float() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>();
}

class Compiler {
 public:
  Compiler(const json& root, const JsonSchemaLimits& limits) : root_(&root), limits_(limits) {}

  Result<std::shared_ptr<const Grammar>> run() {
    OG_ASSIGN_OR_RETURN(json_, add_json_rules(*g_));
    const int32_t top = g_->add_rule("root");
    OG_ASSIGN_OR_RETURN(ExprPtr body, schema(*root_, "", 0));
    OG_TRY(g_->define(top, body));  // no whitespace around the value: the text ends where it does
    OG_TRY(define_pending());
    OG_TRY(g_->finish(top));
    return std::shared_ptr<const Grammar>(std::move(g_));
  }

  // prefix item (separator item){min-1, max-1} suffix; each item one of the frames.
  Result<std::shared_ptr<const Grammar>> run(const FramedJson& spec) {
    if (spec.frames.empty()) return bad_input("framed JSON: no frames");
    if (spec.min_items < 1 || (spec.max_items >= 0 && spec.max_items < spec.min_items))
      return bad_input("framed JSON: {}..{} items", spec.min_items, spec.max_items);
    OG_ASSIGN_OR_RETURN(json_, add_json_rules(*g_));
    const int32_t top = g_->add_rule("root");
    const int32_t item = g_->add_rule("item");
    std::vector<ExprPtr> frames;
    for (size_t f = 0; f < spec.frames.size(); ++f) {
      OG_ASSIGN_OR_RETURN(ExprPtr frame, pieces_rule(spec.frames[f], fmt::format("/frames/{}", f)));
      frames.push_back(std::move(frame));
    }
    OG_TRY(g_->define(item, alt(std::move(frames))));
    const int32_t more_max = spec.max_items < 0 ? -1 : spec.max_items - 1;
    ExprPtr calls = seq({lit(spec.prefix), call(item), repeat(seq({lit(spec.separator), call(item)}), spec.min_items - 1, more_max),
                         lit(spec.suffix)});
    if (spec.answer) {
      root_ = &*spec.answer;  // its $refs are its own
      ++root_index_;
      OG_ASSIGN_OR_RETURN(ExprPtr answer, value_rule(*spec.answer, "/answer", 0));
      OG_TRY(define_pending());
      calls = alt({std::move(calls), std::move(answer)});
    }
    OG_TRY(g_->define(top, seq({lit(spec.lead), std::move(calls)})));
    OG_TRY(g_->finish(top));
    return std::shared_ptr<const Grammar>(std::move(g_));
  }

 private:
  // Bytes of [lo, hi] other than those listed, as ranges.
  static ExprPtr bytes_in_except(uint8_t lo, uint8_t hi, std::vector<uint8_t> out) {
    std::sort(out.begin(), out.end());
    std::vector<std::pair<uint8_t, uint8_t>> ranges;
    int from = lo;
    for (uint8_t b : out) {
      if (b < lo || b > hi) continue;
      if (b > from) ranges.emplace_back(static_cast<uint8_t>(from), static_cast<uint8_t>(b - 1));
      from = b + 1;
    }
    if (from <= hi) ranges.emplace_back(static_cast<uint8_t>(from), hi);
    return byte_ranges(std::move(ranges));
  }
  // Bytes other than those listed and the special-token mark 0xFF.
  static ExprPtr bytes_except(std::vector<uint8_t> out) { return bytes_in_except(0x00, 0xFE, std::move(out)); }
  // Text that does not hold `s` (s0 = s[0] held once in s): segments  [^s0]  |  s0 s1..s(k-1) c
  // with c neither s_k nor s0  |  s0 s1..s(k-1) followed by another s0 or the end:
  //   (A | B | C+ B)* C*   where C are the cut prefixes.
  static ExprPtr text_without(const std::string& s) {
    if (s.empty() || s.find(s[0], 1) != std::string::npos) return star(bytes_except({}));
    const uint8_t s0 = static_cast<uint8_t>(s[0]);
    std::vector<ExprPtr> broken, cut;  // B_k, C_k for k = 1 .. |s| - 1
    for (size_t k = 1; k < s.size(); ++k) {
      broken.push_back(seq({lit(s.substr(0, k)), bytes_except({static_cast<uint8_t>(s[k]), s0})}));
      cut.push_back(lit(s.substr(0, k)));
    }
    ExprPtr b = alt(broken), c = alt(cut);
    ExprPtr a = bytes_except({s0});
    return seq({star(alt({a, b, seq({repeat(c, 1, -1), b})})), star(c)});
  }

  // Where a value is written in a template's notation (value_notation.h) instead of JSON:
  // no whitespace, strings between its quote, bare keys.
  ExprPtr ws() const { return notation_ ? seq({}) : json_.ws; }
  ExprPtr quote() const { return python() ? ch('\'') : notation_ ? lit(notation_->quote) : ch('"'); }
  ExprPtr any_value() { return notation_ ? call(notation_rules().value) : call(json_.value); }
  // Python's str() of a value (value_notation.h `python`): ", " and ": " between the pieces,
  // True, False and None, strings as repr writes them.
  bool python() const { return notation_ && notation_->python; }
  ExprPtr comma() const { return python() ? lit(", ") : ch(','); }
  ExprPtr colon() const { return python() ? lit(": ") : ch(':'); }
  ExprPtr null_literal() const { return lit(python() ? "None" : "null"); }
  ExprPtr boolean_literals() const { return python() ? alt({lit("True"), lit("False")}) : alt({lit("true"), lit("false")}); }
  // One character of a string in single quotes as Python writes it: any but the quote, the
  // backslash and controls, or the escapes \\ \' \n \r \t (repr's own; a model writes no others).
  // (`excluded`: first bytes it may not start with.)
  static ExprPtr python_char(const std::vector<uint8_t>& excluded = {}) {
    const ExprPtr tail = byte_ranges({{0x80, 0xBF}});
    std::vector<uint8_t> ascii_out = excluded;
    ascii_out.insert(ascii_out.end(), {'\'', '\\'});
    return alt({bytes_in_except(0x20, 0x7E, ascii_out), seq({bytes_in_except(0xC2, 0xDF, excluded), tail}),
                seq({bytes_in_except(0xE0, 0xEF, excluded), tail, tail}), seq({bytes_in_except(0xF0, 0xF4, excluded), tail, tail, tail}),
                seq({bytes_in_except('\\', '\\', excluded), byte_ranges({{'\'', '\''}, {'\\', '\\'}, {'n', 'n'}, {'r', 'r'}, {'t', 't'}})})});
  }
  // A key in Python's notation that is none of `names`, as the grammar writes it (in single
  // quotes). Names that need an escape leave no extra keys at all (nothing()).
  static ExprPtr python_key_except(const std::vector<std::string>& names) {
    for (const std::string& n : names)
      for (const char c : n)
        if (c == '\'' || c == '\\' || static_cast<uint8_t>(c) < 0x20 || c == 0x7F) return nothing();
    return seq({ch('\''), key_trie_except(names, [](size_t) { return ch('\''); }, [](const std::vector<uint8_t>& next) {
                  return seq({python_char(next), star(python_char()), ch('\'')});
                })});
  }
  // A key that is none of `names`: a trie of the names, left (`leave`) at any character no name
  // has there, ended (`end`, null: not there) where no name ends.
  static ExprPtr key_trie_except(std::vector<std::string> names, const std::function<ExprPtr(size_t depth)>& end,
                                 const std::function<ExprPtr(const std::vector<uint8_t>& next)>& leave) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::function<ExprPtr(size_t, size_t, size_t)> node = [&](size_t begin, size_t stop, size_t depth) -> ExprPtr {
      std::vector<uint8_t> next;
      bool a_name_ends = false;
      for (size_t i = begin; i < stop; ++i) {
        if (names[i].size() == depth) a_name_ends = true;
        else next.push_back(static_cast<uint8_t>(names[i][depth]));
      }
      std::vector<ExprPtr> alts;
      if (ExprPtr e = a_name_ends ? nullptr : end(depth)) alts.push_back(e);
      alts.push_back(leave(next));
      for (size_t i = begin; i < stop;) {
        if (names[i].size() == depth) {
          ++i;
          continue;
        }
        const char b = names[i][depth];
        size_t j = i;
        while (j < stop && names[j].size() > depth && names[j][depth] == b) ++j;
        alts.push_back(seq({ch(b), node(i, j, depth + 1)}));
        i = j;
      }
      return alt(std::move(alts));
    };
    return node(0, names.size(), 0);
  }
  // A bare key's characters (an identifier's, as templates' keys are).
  static std::vector<std::pair<uint8_t, uint8_t>> key_bytes() { return {{'$', '$'}, {'-', '.'}, {'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; }
  // A bare key that is none of `names` (additional properties beside the declared ones).
  static ExprPtr bare_key_except(const std::vector<std::string>& names) {
    return key_trie_except(
        names, [](size_t depth) { return depth > 0 ? seq({}) : nullptr; },
        [](const std::vector<uint8_t>& next) {
          std::vector<std::pair<uint8_t, uint8_t>> leave;  // key characters no name has here
          for (auto [lo, hi] : key_bytes())
            for (int b = lo; b <= hi; ++b)
              if (std::find(next.begin(), next.end(), static_cast<uint8_t>(b)) == next.end()) leave.emplace_back(b, b);
          return seq({byte_ranges(std::move(leave)), star(byte_ranges(key_bytes()))});
        });
  }
  // Any value in the current notation (its rules made once per quote).
  struct NotationRules {
    int32_t string = -1, value = -1;
  };
  const NotationRules& notation_rules() {
    auto [it, fresh] = notation_rules_.try_emplace(python() ? std::string("\x01python") : notation_->quote);
    if (!fresh) return it->second;
    NotationRules& r = it->second;
    r.string = g_->add_rule("notation string");
    r.value = g_->add_rule("notation value");
    const int32_t object = g_->add_rule("notation object"), array = g_->add_rule("notation array");
    const ExprPtr q = quote();
    // (A definition over the state budget leaves its rule undefined, which finish() reports.)
    (void)g_->define(r.string, seq({q, python() ? star(python_char()) : text_without(notation_->quote), q}));
    // Keys: Python's are strings; a template's own notation writes them bare.
    const ExprPtr key = python() ? call(r.string) : repeat(byte_ranges(key_bytes()), 1, -1);
    const ExprPtr member = seq({key, colon(), call(r.value)});
    (void)g_->define(object, seq({ch('{'), opt(seq({member, star(seq({comma(), member}))})), ch('}')}));
    (void)g_->define(array, seq({ch('['), opt(seq({call(r.value), star(seq({comma(), call(r.value)}))})), ch(']')}));
    (void)g_->define(r.value, alt({call(object), call(array), call(r.string), call(json_.number), boolean_literals(), null_literal()}));
    return r;
  }

  // A frame's pieces in sequence.
  Result<ExprPtr> pieces_rule(const std::vector<FramePiece>& frame, const std::string& path) {
    std::vector<ExprPtr> pieces;
    for (size_t k = 0; k < frame.size(); ++k) {
      const FramePiece& p = frame[k];
      switch (p.kind) {
        case FramePiece::Kind::kLiteral: pieces.push_back(lit(p.text)); break;
        case FramePiece::Kind::kAlnum:
          pieces.push_back(repeat(byte_ranges({{'0', '9'}, {'A', 'Z'}, {'a', 'z'}}), p.length, p.length));
          break;
        case FramePiece::Kind::kText: {  // any bytes but a special token's mark (0xFF), or a choice
          if (p.choices.empty() && p.length > 0) {  // a bounded string: whole UTF-8 characters
            std::vector<uint8_t> ascii_out;
            if (!p.text.empty()) ascii_out.push_back(static_cast<uint8_t>(p.text[0]));
            const ExprPtr tail = byte_ranges({{0x80, 0xBF}});
            const ExprPtr ch = alt({bytes_in_except(0x00, 0x7F, std::move(ascii_out)), seq({byte_ranges({{0xC2, 0xDF}}), tail}),
                                    seq({byte_ranges({{0xE0, 0xEF}}), tail, tail}), seq({byte_ranges({{0xF0, 0xF4}}), tail, tail, tail})});
            pieces.push_back(repeat(ch, 0, p.length));
            break;
          }
          if (p.choices.empty()) {
            pieces.push_back(text_without(p.text));
            break;
          }
          std::vector<ExprPtr> options;
          for (const std::string& c : p.choices) options.push_back(lit(c));
          pieces.push_back(alt(std::move(options)));
          break;
        }
        case FramePiece::Kind::kOptional: {
          OG_ASSIGN_OR_RETURN(ExprPtr g, pieces_rule(p.group, fmt::format("{}/{}", path, k)));
          pieces.push_back(opt(std::move(g)));
          break;
        }
        case FramePiece::Kind::kJson: {
          root_ = &p.schema;  // its $refs are its own
          ++root_index_;
          const json::json_pointer ptr(p.pointer);
          if (!p.schema.contains(ptr)) return bad_input("framed JSON: no schema at '{}'", p.pointer);
          notation_ = p.notation ? &*p.notation : nullptr;
          if (notation_ && notation_->quote.empty() && !notation_->python) return bad_input("framed JSON: a notation without a string quote");
          OG_ASSIGN_OR_RETURN(ExprPtr e, value_rule(p.schema.at(ptr), fmt::format("{}/{}", path, k), 0));
          pieces.push_back(e);
          OG_TRY(define_pending());
          notation_ = nullptr;
          break;
        }
      }
    }
    return seq(std::move(pieces));
  }

  // $ref targets, each once, after the schema that names them (no recursion in C++ here).
  Status define_pending() {
    while (!pending_.empty()) {
      auto [rule, target, path] = pending_.back();
      pending_.pop_back();
      OG_ASSIGN_OR_RETURN(ExprPtr e, schema(*target, path, 0));
      OG_TRY(g_->define(rule, e));
    }
    return Status::ok();
  }

  // A rule for the values of schema `s` (keeps each rule's expression shallow).
  Result<ExprPtr> value_rule(const json& s, const std::string& path, int32_t depth) {
    if (s.is_boolean()) return s.get<bool>() ? any_value() : nothing();
    if (s.is_object() && s.contains("$ref")) return schema(s, path, depth);
    const int32_t r = g_->add_rule(path);
    OG_ASSIGN_OR_RETURN(ExprPtr e, schema(s, path, depth + 1));
    OG_TRY(g_->define(r, e));
    return call(r);
  }

  Result<ExprPtr> schema(const json& s, const std::string& path, int32_t depth) {
    if (depth > limits_.max_depth) return at(path, fmt::format("schemas nest deeper than {}", limits_.max_depth));
    if (s.is_boolean()) return s.get<bool>() ? any_value() : nothing();
    if (!s.is_object()) return at(path, "a schema must be an object or a boolean");
    for (const auto& [key, v] : s.items())
      if (kUnsupported.count(key)) return at(path, fmt::format("'{}' is not supported", key));
    if (s.contains("$ref")) return ref(s["$ref"], path + "/$ref");  // draft-07: siblings of $ref are ignored
    if (s.contains("allOf")) {
      OG_ASSIGN_OR_RETURN(json merged, merge_all_of(s, path));
      return schema(merged, path, depth);
    }
    for (const char* key : {"anyOf", "oneOf"}) {  // oneOf as anyOf: exclusivity is not a grammar's
      if (!s.contains(key)) continue;
      const json& branches = s[key];
      if (!branches.is_array() || branches.empty()) return at(path, fmt::format("'{}' must be a non-empty array", key));
      json rest = s;
      rest.erase(key);
      for (const std::string& a : kAnnotations) rest.erase(a);
      std::vector<ExprPtr> alts;
      for (size_t i = 0; i < branches.size(); ++i) {
        const std::string p = fmt::format("{}/{}/{}", path, key, i);
        OG_ASSIGN_OR_RETURN(json b, resolve_shallow(branches[i], p));
        OG_ASSIGN_OR_RETURN(json both, merge(rest, b, p));
        OG_ASSIGN_OR_RETURN(ExprPtr e, value_rule(both, p, depth));
        alts.push_back(e);
      }
      return alt(std::move(alts));
    }
    std::vector<std::string> types;
    if (s.contains("type")) {
      const json& t = s["type"];
      for (const json& one : t.is_array() ? t : json::array({t})) {
        if (!one.is_string() || (std::find(std::begin(kTypes), std::end(kTypes), one.get<std::string>()) == std::end(kTypes) &&
                                 one != "integer"))
          return at(path + "/type", fmt::format("unknown type {}", one.dump()));
        types.push_back(one.get<std::string>());
      }
    } else {
      types.assign(std::begin(kTypes), std::end(kTypes));
    }
    if (s.contains("const")) return values({s["const"]}, types, path + "/const");
    if (s.contains("enum")) {
      const json& e = s["enum"];
      if (!e.is_array()) return at(path + "/enum", "must be an array");
      if (static_cast<int64_t>(e.size()) > limits_.max_enum_values)
        return at(path + "/enum", fmt::format("{} values, more than the {} allowed", e.size(), limits_.max_enum_values));
      return values(std::vector<json>(e.begin(), e.end()), types, path + "/enum");
    }
    std::vector<ExprPtr> alts;
    for (const std::string& t : types) {
      OG_ASSIGN_OR_RETURN(ExprPtr e, typed(s, t, path, depth));
      alts.push_back(e);
    }
    return alt(std::move(alts));
  }

  // The literal texts of `vs` whose JSON type is one of `types`.
  Result<ExprPtr> values(const std::vector<json>& vs, const std::vector<std::string>& types, const std::string&) {
    const auto has = [&](const char* t) { return std::find(types.begin(), types.end(), t) != types.end(); };
    std::vector<ExprPtr> alts;
    for (const json& v : vs) {
      const bool ok = v.is_null()      ? has("null")
                      : v.is_boolean() ? has("boolean")
                      : v.is_object()  ? has("object")
                      : v.is_array()   ? has("array")
                      : v.is_string()  ? has("string")
                      : is_integral(v)   ? has("number") || has("integer")
                          : has("number");
      if (ok) alts.push_back(lit(notation_ ? notation_text(v, *notation_) : v.dump()));
    }
    return alt(std::move(alts));
  }

  Result<ExprPtr> typed(const json& s, const std::string& type, const std::string& path, int32_t depth) {
    if (type == "null") return null_literal();
    if (type == "boolean") return boolean_literals();
    if (type == "integer" || type == "number") {
      OG_ASSIGN_OR_RETURN(std::optional<NumberBounds> b, bounds(s, path));
      if (!b) return call(type == "integer" ? json_.integer : json_.number);
      auto e = bounded_number(*b, type == "integer");
      if (!e.is_ok()) return at(path, e.status().message());
      return *e;
    }
    if (type == "string") {
      OG_ASSIGN_OR_RETURN(int32_t min, count(s, "minLength", 0, path));
      OG_ASSIGN_OR_RETURN(int32_t max, count(s, "maxLength", -1, path));
      // A pattern, or a format with a grammar of its own (others are annotations), decides the
      // characters; lengths on top of one would need the two languages' intersection.
      std::string pattern;
      if (s.contains("pattern")) {
        if (!s["pattern"].is_string()) return at(path + "/pattern", "must be a string");
        pattern = s["pattern"].get<std::string>();
      } else if (s.contains("format") && s["format"].is_string()) {
        pattern = format_pattern(s["format"].get<std::string>());
      }
      if (!pattern.empty()) {
        if (min != 0 || max >= 0) return at(path, "'pattern' or 'format' together with 'minLength'/'maxLength' is not supported");
        auto contents = python() ? regex_python_string_contents(pattern)
                                 : regex_string_contents(pattern, notation_ ? std::string_view(notation_->quote) : std::string_view());
        if (!contents.is_ok()) return at(path + (s.contains("pattern") ? "/pattern" : "/format"), contents.status().message());
        return seq({quote(), *contents, quote()});
      }
      if (notation_) {  // raw text that cannot hold the quote (bounded: nor its first character)
        if (min == 0 && max < 0) return call(notation_rules().string);
        return seq({quote(), repeat(python() ? python_char() : raw_char_outside(notation_->quote), min, max), quote()});
      }
      if (min == 0 && max < 0) return call(json_.string);
      return seq({ch('"'), repeat(json_.chr, min, max), ch('"')});
    }
    if (type == "array") return array(s, path, depth);
    return object(s, path, depth);
  }

  // The formats written by a grammar (RFC 3339's full-date, full-time and date-time; RFC 4122's
  // uuid); "" for the others, which stay annotations.
  static std::string format_pattern(const std::string& format) {
    static const std::string kDate =
        "[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-9]))";
    static const std::string kTime = "(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\\.[0-9]{1,9})?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
    if (format == "date") return "^" + kDate + "$";
    if (format == "time") return "^" + kTime + "$";
    if (format == "date-time") return "^" + kDate + "[Tt]" + kTime + "$";
    if (format == "uuid") return "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";
    return "";
  }

  // minimum / maximum / exclusiveMinimum / exclusiveMaximum (draft 6 and later: numbers), the
  // tighter of each side; none: no bounds.
  static Result<std::optional<NumberBounds>> bounds(const json& s, const std::string& path) {
    NumberBounds b;
    bool any = false;
    for (const char* key : {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}) {
      if (!s.contains(key)) continue;
      const json& v = s[key];
      if (!v.is_number()) return at(path + "/" + key, "must be a number (draft-04's boolean form is not supported)");
      const double x = v.get<double>();
      const bool excl = key[0] == 'e', low = std::string(key).find("inimum") != std::string::npos;
      auto& side = low ? b.lo : b.hi;
      bool& side_excl = low ? b.lo_exclusive : b.hi_exclusive;
      const bool tighter = !side || (low ? x > *side : x < *side) || (x == *side && excl);
      if (tighter) side = x, side_excl = excl;
      any = true;
    }
    return any ? std::optional<NumberBounds>(b) : std::nullopt;
  }

  // A non-negative integer keyword (absent: `absent`); bounded so that repeats stay in budget.
  static Result<int32_t> count(const json& s, const char* key, int32_t absent, const std::string& path) {
    if (!s.contains(key)) return absent;
    const json& v = s[key];
    if (!is_integral(v) || v.get<double>() < 0) return at(path + "/" + key, "must be a non-negative integer");
    if (v.get<double>() > 100000) return at(path + "/" + key, "larger than 100000 is not supported");
    return static_cast<int32_t>(v.get<double>());
  }

  Result<ExprPtr> object(const json& s, const std::string& path, int32_t depth) {
    const ExprPtr ws = this->ws();
    // The properties in the schema's order; a required name without a schema takes any value.
    std::vector<std::pair<std::string, const json*>> props;
    static const json kAny = true;
    if (s.contains("properties")) {
      if (!s["properties"].is_object()) return at(path + "/properties", "must be an object");
      for (const auto& [k, v] : s["properties"].items()) props.emplace_back(k, &v);
    }
    std::set<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) return at(path + "/required", "must be an array of names");
      for (const json& r : s["required"]) {
        if (!r.is_string()) return at(path + "/required", "must be an array of names");
        required.insert(r.get<std::string>());
        if (std::none_of(props.begin(), props.end(), [&](const auto& p) { return p.first == r; }))
          props.emplace_back(r.get<std::string>(), &kAny);
      }
    }
    if (notation_) {  // the notation's member order
      std::vector<std::string> names;
      for (const auto& p : props) names.push_back(p.first);
      std::vector<std::pair<std::string, const json*>> ordered;
      for (const std::string& n : notation_key_order(names, *notation_))
        ordered.push_back(*std::find_if(props.begin(), props.end(), [&](const auto& p) { return p.first == n; }));
      props = std::move(ordered);
    }
    std::vector<ExprPtr> member;  // [props] key ws ':' ws value
    for (const auto& [name, sub] : props) {
      OG_ASSIGN_OR_RETURN(ExprPtr v, value_rule(*sub, path + "/properties/" + name, depth));
      const std::string key = python() ? python_string_repr(name) : notation_ ? name : json_key_literal(name);
      member.push_back(seq({lit(key), ws, colon(), ws, v}));
    }
    ExprPtr extra = nothing();  // additional members
    const json add = s.contains("additionalProperties") ? s["additionalProperties"] : json(true);
    if (!(add.is_boolean() && !add.get<bool>())) {
      OG_ASSIGN_OR_RETURN(ExprPtr v, value_rule(add, path + "/additionalProperties", depth));
      std::vector<std::string> names;
      for (const auto& p : props) names.push_back(p.first);
      // (Never a declared key again: a dict's last value would stand for it.)
      const ExprPtr key = python()     ? python_key_except(names)
                          : notation_ ? bare_key_except(names)
                          : names.empty() ? call(json_.string)
                                          : key_except(names, json_.chr);
      extra = seq({key, ws, colon(), ws, v});
    }
    // rest[i]: members i.. after at least one was written; first[i]: none written yet.
    const size_t n = props.size();
    ExprPtr rest = star(seq({comma(), ws, extra, ws}));
    ExprPtr first = opt(seq({extra, ws, star(seq({comma(), ws, extra, ws}))}));
    for (size_t i = n; i-- > 0;) {
      const bool req = required.count(props[i].first) > 0;
      const ExprPtr here = seq({comma(), ws, member[i], ws});
      const ExprPtr first_here = seq({member[i], ws, rest});
      first = req ? first_here : alt({first_here, first});
      rest = req ? seq({here, rest}) : seq({opt(here), rest});
    }
    return seq({ch('{'), ws, first, ch('}')});
  }

  Result<ExprPtr> array(const json& s, const std::string& path, int32_t depth) {
    const ExprPtr ws = this->ws();
    std::vector<ExprPtr> prefix;
    json rest_schema = true;
    const json* tuple = s.contains("prefixItems") ? &s["prefixItems"] : (s.contains("items") && s["items"].is_array() ? &s["items"] : nullptr);
    if (tuple) {
      const std::string key = s.contains("prefixItems") ? "prefixItems" : "items";
      if (!tuple->is_array()) return at(path + "/" + key, "must be an array of schemas");
      for (size_t i = 0; i < tuple->size(); ++i) {
        OG_ASSIGN_OR_RETURN(ExprPtr e, value_rule((*tuple)[i], fmt::format("{}/{}/{}", path, key, i), depth));
        prefix.push_back(e);
      }
      if (key == "prefixItems" && s.contains("items")) rest_schema = s["items"];
      if (key == "items" && s.contains("additionalItems")) rest_schema = s["additionalItems"];
    } else if (s.contains("items")) {
      rest_schema = s["items"];
    }
    if (s.contains("uniqueItems") && !(s["uniqueItems"].is_boolean() && !s["uniqueItems"].get<bool>()))
      return at(path + "/uniqueItems", "'uniqueItems': true is not supported");
    OG_ASSIGN_OR_RETURN(int32_t lo, count(s, "minItems", 0, path));
    OG_ASSIGN_OR_RETURN(int32_t hi, count(s, "maxItems", -1, path));
    const bool rest_allowed = !(rest_schema.is_boolean() && !rest_schema.get<bool>());
    ExprPtr rest = nothing();
    if (rest_allowed) {
      OG_ASSIGN_OR_RETURN(rest, value_rule(rest_schema, path + "/items", depth));
    }
    // Positions past the tuple take `rest`; all past `lo` are optional; none past `hi`.
    const auto k = static_cast<int32_t>(hi >= 0 ? std::min<size_t>(prefix.size(), static_cast<size_t>(hi)) : prefix.size());
    const auto elem = [&](int32_t j) { return j < k ? prefix[static_cast<size_t>(j)] : rest; };
    ExprPtr tail;  // the elements after position j, each preceded by a comma
    const auto more_rest = [&](int32_t from) {  // positions from.. all `rest`
      if (!rest_allowed || (hi >= 0 && hi <= from)) return from >= lo ? seq({}) : nothing();
      return repeat(seq({comma(), ws, rest, ws}), std::max(0, lo - from), hi < 0 ? -1 : hi - from);
    };
    tail = more_rest(std::max(k, 1));
    for (int32_t j = k - 1; j >= 1; --j) {
      const ExprPtr here = seq({comma(), ws, elem(j), ws, tail});
      tail = j >= lo ? opt(here) : here;
    }
    ExprPtr body = (hi == 0 || (k == 0 && !rest_allowed)) ? nothing() : seq({elem(0), ws, tail});
    if (lo == 0) body = opt(body);
    return seq({ch('['), ws, body, ch(']')});
  }

  Result<ExprPtr> ref(const json& r, const std::string& path) {
    if (!r.is_string()) return at(path, "must be a string");
    const std::string target = r.get<std::string>();
    const std::string key = fmt::format("{}:{}", root_index_, target);  // each root's references are its own
    if (auto it = ref_rules_.find(key); it != ref_rules_.end()) return call(it->second);
    OG_ASSIGN_OR_RETURN(const json* s, resolve(target, path));
    const int32_t rule = g_->add_rule(target);
    ref_rules_[key] = rule;
    pending_.push_back({rule, s, target.substr(1)});
    return call(rule);
  }

  Result<const json*> resolve(const std::string& target, const std::string& path) {
    if (target.empty() || target[0] != '#')
      return at(path, fmt::format("$ref '{}' is not supported: only references inside the schema (\"#...\")", target));
    OG_ASSIGN_OR_RETURN(std::string pointer, unescape_fragment(target));
    try {
      const json& s = root_->at(json::json_pointer(pointer));
      return &s;
    } catch (const std::exception&) {
      return at(path, fmt::format("$ref '{}' points at nothing", target));
    }
  }

  // A branch that is only a $ref stands for its target when merged (one level, no recursion).
  Result<json> resolve_shallow(const json& s, const std::string& path) {
    if (!s.is_object() || !s.contains("$ref")) return s;
    const json& r = s["$ref"];
    if (!r.is_string()) return at(path + "/$ref", "must be a string");
    OG_ASSIGN_OR_RETURN(const json* t, resolve(r.get<std::string>(), path + "/$ref"));
    if (t->is_object() && t->contains("$ref")) return s;  // a chain: keep the reference
    return *t;
  }

  // allOf folded into its schema, branch by branch.
  Result<json> merge_all_of(json s, const std::string& path) {
    const json branches = s["allOf"];
    s.erase("allOf");
    if (!branches.is_array() || branches.empty()) return at(path + "/allOf", "must be a non-empty array");
    for (size_t i = 0; i < branches.size(); ++i) {
      const std::string p = fmt::format("{}/allOf/{}", path, i);
      OG_ASSIGN_OR_RETURN(json b, resolve_shallow(branches[i], p));
      OG_ASSIGN_OR_RETURN(s, merge(s, b, p));
    }
    return s;
  }

  // The schema valid where both are: keywords of one side taken over; properties and
  // required joined (a property in both gets an allOf of its two schemas); types met; any
  // other keyword on both sides must agree.
  Result<json> merge(const json& a, const json& b, const std::string& path) {
    if (b.is_boolean()) return b.get<bool>() ? a : json(false);
    if (a.is_boolean()) return a.get<bool>() ? b : json(false);
    if (a.is_object() && a.empty()) return b;
    if (b.is_object() && b.empty()) return a;
    if (!b.is_object()) return at(path, "a schema must be an object or a boolean");
    if (a.contains("$ref") || b.contains("$ref"))
      return at(path, "'$ref' combined with other keywords through allOf/anyOf is not supported");
    json out = a;
    for (const auto& [key, v] : b.items()) {
      if (!out.contains(key) || !kSupported.count(key)) {
        if (!out.contains(key)) out[key] = v;
        continue;
      }
      json& mine = out[key];
      if (key == "properties") {
        for (const auto& [name, sub] : v.items())
          mine[name] = mine.contains(name) ? json{{"allOf", json::array({mine[name], sub})}} : sub;
      } else if (key == "required") {
        for (const json& r : v)
          if (std::find(mine.begin(), mine.end(), r) == mine.end()) mine.push_back(r);
      } else if (key == "type") {
        const json ta = mine.is_array() ? mine : json::array({mine}), tb = v.is_array() ? v : json::array({v});
        json both = json::array();
        for (const json& t : ta) {
          const bool in_b = std::find(tb.begin(), tb.end(), t) != tb.end();
          const bool int_in_number = t == "integer" && std::find(tb.begin(), tb.end(), "number") != tb.end();
          if (in_b || int_in_number) both.push_back(t);
          else if (t == "number" && std::find(tb.begin(), tb.end(), "integer") != tb.end()) both.push_back("integer");
        }
        if (both.empty()) return json(false);
        mine = both;
      } else if (mine != v) {
        return at(path, fmt::format("'{}' differs between schemas that must both hold (allOf); not supported", key));
      }
    }
    if (out.contains("allOf")) return merge_all_of(out, path);
    return out;
  }

  const json* root_;       // the schema whose $refs are being resolved
  int32_t root_index_ = 0;
  JsonSchemaLimits limits_;
  std::unique_ptr<Grammar> g_ = std::make_unique<Grammar>();
  JsonRules json_;
  std::map<std::string, int32_t> ref_rules_;
  const ValueNotation* notation_ = nullptr;  // the kJson piece being compiled writes this notation
  std::map<std::string, NotationRules> notation_rules_;  // by quote
  struct Pending {
    int32_t rule;
    const json* target;
    std::string path;
  };
  std::vector<Pending> pending_;
};

}  // namespace

int32_t json_library_states() {
  static const int32_t n = [] {
    Grammar g;
    return add_json_rules(g).is_ok() ? static_cast<int32_t>(g.n_states()) : 0;
  }();
  return n;
}

Result<std::shared_ptr<const Grammar>> compile_json_schema(const nlohmann::ordered_json& schema, const JsonSchemaLimits& limits) {
  return Compiler(schema, limits).run();
}

Result<std::shared_ptr<const Grammar>> compile_framed_json(const FramedJson& spec, const JsonSchemaLimits& limits) {
  static const json kNone;
  return Compiler(kNone, limits).run(spec);
}

}  // namespace og::constrain
