// JSON Schema -> Grammar: the JSON texts a schema accepts, as the constrained sampler reads
// them. Objects are written with their properties in the schema's order (as OpenAI's
// structured outputs do), additional properties after; whitespace between tokens is bounded
// (at most a space, or one or two newlines and 20 spaces or tabs: llama-server's rule), so a
// generation always reaches its end. The supported and ignored keywords, and the error each
// other keyword gets, are listed in docs/serving.md ("Constrained output").
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "constrain/grammar.h"

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

}  // namespace og::constrain
