// JSON Schema's `pattern` (the ECMAScript regular expressions schemas use) as a grammar of a
// JSON string's contents: each character the expression matches is written as JSON writes it
// (raw UTF-8, or the escape JSON requires for '"', '\' and control characters), so the
// decoded string is what the expression matches. A pattern matches anywhere in the string
// unless anchored by ^ and $, as JSON Schema says.
//
// Supported: literals, '.', classes ([...], [^...], ranges, \d \w \s and their negations),
// escapes (\t \n \r \f \v \0 \xHH \uHHHH \u{H...} and escaped punctuation), groups ((...),
// (?:...), (?<name>...)), alternation, quantifiers (* + ? {n} {n,} {n,m}, lazy or not), ^ at
// the start and $ at the end. Refused with an error naming the construct: backreferences,
// lookaround, word boundaries, anchors elsewhere, flags.
#pragma once

#include <string_view>

#include "constrain/grammar.h"

namespace og::constrain {

// The contents (between the quotes) of the JSON strings whose value `pattern` matches; `raw`:
// the characters as themselves, none escaped (a string in a template's notation).
Result<ExprPtr> regex_string_contents(std::string_view pattern, bool raw = false);

}  // namespace og::constrain
