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

// The contents (between the quotes) of the JSON strings whose value `pattern` matches. With a
// `raw_quote` (a string in a template's notation, between that quote): the characters as
// themselves, none escaped, and never the quote's first character, so the string cannot run
// into its closing quote.
Result<ExprPtr> regex_string_contents(std::string_view pattern, std::string_view raw_quote = {});

// The same for a string as Python's repr writes it in single quotes: ' and \ escaped, \n \r
// \t and \xHH for control characters, every other character as itself.
Result<ExprPtr> regex_python_string_contents(std::string_view pattern);

// One character of a string in a notation between `quote`, as UTF-8: any but the quote's first.
ExprPtr raw_char_outside(std::string_view quote);

}  // namespace og::constrain
