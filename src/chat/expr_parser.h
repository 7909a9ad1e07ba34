// Expression half of the parser (internal): a cursor over one tag's tokens and the
// precedence-climbing functions described in parser.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/status.h"
#include "chat/ast.h"
#include "chat/lexer.h"

namespace og::chat {

std::string describe(const Token& t);

// Tokens of one tag; always ends with a kEnd token, which `next()` never passes.
class TokenCursor {
 public:
  explicit TokenCursor(const std::vector<Token>* toks) : toks_(toks) {}

  const Token& cur() const { return (*toks_)[pos_]; }
  const Token& peek(size_t k) const { return (*toks_)[std::min(pos_ + k, toks_->size() - 1)]; }
  const Token& next() {
    const Token& t = (*toks_)[pos_];
    if (pos_ + 1 < toks_->size()) ++pos_;
    return t;
  }
  bool is_op(std::string_view op) const { return cur().kind == TokenKind::kOp && cur().text == op; }
  bool is_name(std::string_view name) const {
    return cur().kind == TokenKind::kName && cur().text == name;
  }
  bool accept_op(std::string_view op) { return is_op(op) && (next(), true); }
  bool accept_name(std::string_view name) { return is_name(name) && (next(), true); }
  Status expect_op(std::string_view op) {
    if (accept_op(op)) return Status::ok();
    return fail("expected '{}', got {}", op, describe(cur()));
  }
  Status expect_end() const {
    if (cur().kind == TokenKind::kEnd) return Status::ok();
    return fail("expected end of tag, got {}", describe(cur()));
  }
  template <typename... A>
  Status fail(fmt::format_string<A...> f, A&&... a) const {
    return bad_input("line {}: {}", cur().line, fmt::format(f, std::forward<A>(a)...));
  }

  // Nesting guard: the parser and interpreter recurse per nesting level, so a hostile
  // "((((..." must be an error, not a stack overflow.
  static constexpr int kMaxDepth = 200;
  Status enter() {
    if (++depth_ > kMaxDepth) return fail("expression nested deeper than {} levels", kMaxDepth);
    return Status::ok();
  }
  void leave() { --depth_; }

 private:
  const std::vector<Token>* toks_;
  size_t pos_ = 0;
  int depth_ = 0;
};

// Jinja's parse_tuple: `a`, `a, b` (a tuple), or nothing when `explicit_parens`.
// Without `with_condexpr` a bare `if` ends the expression (for-loop filters, if tags).
Result<ExprPtr> parse_tuple(TokenCursor& c, bool with_condexpr, bool explicit_parens);
Result<ExprPtr> parse_expression(TokenCursor& c, bool with_condexpr);
// `name(args)` after a '|'; `object` may be null for {% filter %} and {% set x | f %}.
Result<ExprPtr> parse_filter(TokenCursor& c, ExprPtr object);

}  // namespace og::chat
