// Segments → statement tree, following Jinja2's grammar and operator precedence.
//
// Precedence, loosest first, as in jinja2/parser.py: `x if c else y`, or, and, not,
// comparisons (== != < <= > >= in, not in), + -, ~, * / // %, **, unary - +, then
// primaries with postfix . [] () and the tightest `|filter` and `is test`. That last rule is
// why `'<|user|>\n' + message.content | trim` trims only the content.
//
// Tags Jinja knows but this subset does not (call, with, include, extends, ...) are
// kUnsupported errors; tags Jinja itself rejects (do, endfoo, ...) are kBadInput. Both name
// the line.
#pragma once

#include <vector>

#include "base/status.h"
#include "chat/ast.h"
#include "chat/lexer.h"

namespace og::chat {

Result<Body> parse_template(const std::vector<Segment>& segments);

}  // namespace og::chat
