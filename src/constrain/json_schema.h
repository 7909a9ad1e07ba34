// JSON Schema -> Grammar: the JSON texts a schema accepts, as the constrained sampler reads
// them. Objects are written with their properties in the schema's order (as OpenAI's
// structured outputs do), additional properties after; whitespace between tokens is bounded
// (at most a space, or one or two newlines and 20 spaces or tabs: the reference server's rule), so a
// generation always reaches its end. The supported and ignored keywords, and the error each
// other keyword gets, are listed in docs/serving.md ("Constrained output").
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "constrain/grammar.h"
#include "constrain/value_notation.h"

namespace og::constrain {

struct JsonSchemaLimits {
  int32_t max_depth = 64;          // nesting of schemas inside schemas ($ref targets start again)
  int32_t max_enum_values = 4096;  // an enum's values
};

// Every compiled schema's grammar starts with the same JSON rules (json_grammar.h): its states
// [0, json_library_states()) are the same in each, so their token classes can be shared
// (constrain::SharedStateTokens).
int32_t json_library_states();

// The grammar of the JSON texts `schema` accepts (a draft-07 or 2020-12 schema, or a boolean).
// Errors (kBadInput) name the keyword and its JSON pointer: "/properties/a: 'not' is not
// supported".
Result<std::shared_ptr<const Grammar>> compile_json_schema(const nlohmann::ordered_json& schema,
                                                           const JsonSchemaLimits& limits = {});

// Literal text around JSON values (a tool call in a chat template's own syntax): the grammar of
//   prefix item (separator item)* suffix,  min_items..max_items items (max < 0: no bound),
// each item one of `frames`, a frame a sequence of literal bytes, JSON values of a schema
// (each its own root for $ref), runs of ASCII letters and digits of a fixed length (ids), free
// text (a parameter written as itself between tags) and optional groups of pieces.
struct FramePiece {
  enum class Kind : uint8_t { kLiteral, kJson, kAlnum, kText, kOptional };
  Kind kind = Kind::kLiteral;
  std::string text;                // kLiteral
  nlohmann::ordered_json schema;   // kJson: the root its $refs resolve in
  std::string pointer;             // kJson: the value's schema within `schema` ("": all of it)
  int32_t length = 0;              // kAlnum; kText: at most this many characters (0: any number)
  std::vector<std::string> choices;  // kText: one of these texts (empty: any text) ...
  // ... kText: any text that does not hold `text` (whose first byte it holds once only; else
  // any text at all), so that a parameter cannot run into the tag that closes it; with a
  // `length`, UTF-8 characters without `text`'s first byte.
  std::vector<FramePiece> group;   // kOptional: pieces that come all together or not at all
  std::optional<ValueNotation> notation;  // kJson: the value written in this notation, not as JSON
};
// With `answer`, a JSON value of that schema may stand instead of the framed items, and
// `lead` (literal) comes before either:  lead (prefix items suffix | answer).
struct FramedJson {
  std::string prefix, separator, suffix;
  std::vector<std::vector<FramePiece>> frames;
  int32_t min_items = 1, max_items = -1;
  std::string lead;
  std::optional<nlohmann::ordered_json> answer;
};
Result<std::shared_ptr<const Grammar>> compile_framed_json(const FramedJson& spec, const JsonSchemaLimits& limits = {});

}  // namespace og::constrain
