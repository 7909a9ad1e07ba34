// The JSON pieces every schema's grammar is made of (RFC 8259): bounded whitespace and a string
// character as expressions (written inline where they are used: the token masks are cached
// per state of a rule, and a token that crossed many tiny rules would depend on the whole
// stack), and strings, numbers and any value as rules.
#pragma once

#include <string>
#include <vector>

#include "constrain/grammar.h"

namespace og::constrain {

struct JsonRules {
  ExprPtr ws;            // "" | " " | "\n"{1,2} [ \t]{0,20}: bounded, as the reference server's
  ExprPtr chr;           // one character of a string: unescaped UTF-8 or an escape
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
ExprPtr key_except(const std::vector<std::string>& names, const ExprPtr& chr);

}  // namespace og::constrain
