// The JSON pieces every schema's grammar is made of (RFC 8259), each a rule of the grammar
// being built: bounded whitespace, a string character, strings, numbers, any value.
#pragma once

#include <string>
#include <vector>

#include "constrain/grammar.h"

namespace og::constrain {

struct JsonRules {
  int32_t ws = -1;       // "" | " " | "\n"{1,2} [ \t]{0,20}: bounded, as llama.cpp's
  int32_t chr = -1;      // one character of a string: unescaped UTF-8 or an escape
  int32_t string = -1;   // '"' chr* '"'
  int32_t integer = -1;  // -?(0|[1-9][0-9]{0,15})
  int32_t number = -1;   // integer ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?
  int32_t value = -1;    // any JSON value (objects and arrays of any values)
};

// Adds the rules to `g` (none of them calls a rule of the caller's).
Result<JsonRules> add_json_rules(Grammar& g);

// The JSON text of one member key: '"' + the key's escaped characters + '"'.
std::string json_key_literal(const std::string& key);

// A member key (with its quotes) that is none of `names` (additional properties beside the
// declared ones). Exact for keys written without escapes: a key that spells a name with an
// escape ("\u0066oo" for "foo") is not recognised as it, and a key whose UTF-8 character
// starts like a name's character there but differs in a later byte is not offered.
ExprPtr key_except(const std::vector<std::string>& names, int32_t chr);

}  // namespace og::constrain
