#include "chat/parser.h"

#include <set>

#include <fmt/format.h>

#include "chat/expr_parser.h"

namespace og::chat {
namespace {

class Parser {
 public:
  explicit Parser(const std::vector<Segment>& segs) : segs_(segs) {}

  Result<Body> run() {
    std::string end;
    OG_ASSIGN_OR_RETURN(Body body, parse_body({}, &end, "", 0));
    return body;
  }

 private:
  // ---- statements ----

  // Parses nodes until one of `ends` opens a tag; leaves the cursor after that tag name.
  Result<Body> parse_body(const std::set<std::string>& ends, std::string* found, const char* block,
                          int block_line) {
    // Blocks nest by recursion here and in the interpreter: bound it like expressions.
    if (depth_ >= TokenCursor::kMaxDepth) {
      return bad_input("line {}: blocks nested deeper than {} levels", block_line, TokenCursor::kMaxDepth);
    }
    ++depth_;
    auto body = parse_body_at_depth(ends, found, block, block_line);
    --depth_;
    return body;
  }

  Result<Body> parse_body_at_depth(const std::set<std::string>& ends, std::string* found, const char* block,
                                   int block_line) {
    Body body;
    while (seg_ < segs_.size()) {
      const Segment& s = segs_[seg_++];
      if (s.kind == Segment::Kind::kText) {
        Node n;
        n.kind = NodeKind::kText;
        n.line = s.line;
        n.text = s.text;
        body.push_back(std::move(n));
        continue;
      }
      c_ = TokenCursor(&s.tokens);
      if (s.kind == Segment::Kind::kOutput) {
        Node n;
        n.kind = NodeKind::kOutput;
        n.line = s.line;
        OG_ASSIGN_OR_RETURN(n.expr, parse_tuple(true, false));
        OG_TRY(expect_end());
        body.push_back(std::move(n));
        continue;
      }
      if (cur().kind != TokenKind::kName) return fail("expected a tag name, got {}", describe(cur()));
      const std::string tag = next().text;
      if (ends.count(tag)) {
        *found = tag;
        return body;
      }
      OG_ASSIGN_OR_RETURN(Node n, parse_statement(tag, s.line));
      body.push_back(std::move(n));
    }
    if (!ends.empty()) {
      return bad_input("line {}: unexpected end of template: the '{}' block opened here is not closed",
                       block_line, block);
    }
    return body;
  }

  // A body closed only by `end<block>`, which must be a bare tag.
  Result<Body> parse_block(const std::set<std::string>& ends, std::string* found, const char* block,
                           int line) {
    OG_ASSIGN_OR_RETURN(Body body, parse_body(ends, found, block, line));
    OG_TRY(expect_end());
    return body;
  }

  Result<Node> parse_statement(const std::string& tag, int line) {
    Node n;
    n.line = line;
    std::string found;
    if (tag == "if") {
      n.kind = NodeKind::kIf;
      std::string branch = "if";
      while (true) {
        ExprPtr cond;
        if (branch != "else") {
          OG_ASSIGN_OR_RETURN(cond, parse_tuple(false, false));
        }
        OG_TRY(expect_end());
        const std::set<std::string> ends = branch == "else" ? std::set<std::string>{"endif"}
                                                            : std::set<std::string>{"elif", "else", "endif"};
        OG_ASSIGN_OR_RETURN(Body body, parse_body(ends, &found, "if", line));
        n.branches.emplace_back(std::move(cond), std::move(body));
        if (found == "endif") break;
        branch = found;
      }
      OG_TRY(expect_end());
    } else if (tag == "for") {
      n.kind = NodeKind::kFor;
      OG_ASSIGN_OR_RETURN(n.targets, parse_names(true));
      if (!accept_name("in")) return fail("expected 'in' in for loop, got {}", describe(cur()));
      OG_ASSIGN_OR_RETURN(n.expr, parse_tuple(false, false));
      if (accept_name("if")) {
        OG_ASSIGN_OR_RETURN(n.cond, parse_expression(true));
      }
      if (cur().kind == TokenKind::kName && cur().text == "recursive") {
        return unsupported("line {}: recursive for loops are not supported", line);
      }
      OG_TRY(expect_end());
      ++loop_depth_;
      OG_ASSIGN_OR_RETURN(n.body, parse_body({"endfor", "else"}, &found, "for", line));
      if (found == "else") {
        OG_TRY(expect_end());
        OG_ASSIGN_OR_RETURN(n.else_body, parse_body({"endfor"}, &found, "for", line));
      }
      --loop_depth_;
      OG_TRY(expect_end());
    } else if (tag == "set") {
      OG_ASSIGN_OR_RETURN(n.targets, parse_names(true));
      if (n.targets.size() == 1 && accept_op(".")) {
        if (cur().kind != TokenKind::kName) return fail("expected an attribute name, got {}", describe(cur()));
        n.attr = next().text;
      }
      if (accept_op("=")) {
        n.kind = NodeKind::kSet;
        OG_ASSIGN_OR_RETURN(n.expr, parse_tuple(true, false));
        OG_TRY(expect_end());
      } else {
        if (n.targets.size() != 1 || !n.attr.empty()) return fail("expected '=' in set, got {}", describe(cur()));
        n.kind = NodeKind::kSetBlock;
        while (accept_op("|")) {
          OG_ASSIGN_OR_RETURN(ExprPtr f, parse_filter(nullptr));
          n.filters.push_back(std::move(f));
        }
        OG_TRY(expect_end());
        OG_ASSIGN_OR_RETURN(n.body, parse_block({"endset"}, &found, "set", line));
      }
    } else if (tag == "macro") {
      n.kind = NodeKind::kMacro;
      if (cur().kind != TokenKind::kName) return fail("expected a macro name, got {}", describe(cur()));
      n.text = next().text;
      OG_TRY(expect_op("("));
      while (!accept_op(")")) {
        if (!n.targets.empty()) OG_TRY(expect_op(","));
        if (cur().kind != TokenKind::kName) return fail("expected a parameter name, got {}", describe(cur()));
        n.targets.push_back(next().text);
        ExprPtr def;
        if (accept_op("=")) {
          OG_ASSIGN_OR_RETURN(def, parse_expression(true));
        }
        n.defaults.push_back(std::move(def));
      }
      OG_TRY(expect_end());
      const int saved = loop_depth_;
      loop_depth_ = 0;
      OG_ASSIGN_OR_RETURN(n.body, parse_block({"endmacro"}, &found, "macro", line));
      loop_depth_ = saved;
    } else if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) return fail("'{}' outside of a for loop", tag);
      n.kind = tag == "break" ? NodeKind::kBreak : NodeKind::kContinue;
      OG_TRY(expect_end());
    } else if (tag == "filter") {
      n.kind = NodeKind::kFilterBlock;
      do {
        OG_ASSIGN_OR_RETURN(ExprPtr f, parse_filter(nullptr));
        n.filters.push_back(std::move(f));
      } while (accept_op("|"));
      OG_TRY(expect_end());
      OG_ASSIGN_OR_RETURN(n.body, parse_block({"endfilter"}, &found, "filter", line));
    } else if (tag == "generation") {
      // transformers' AssistantTracker tag: only marks assistant spans, renders its body.
      n.kind = NodeKind::kScope;
      OG_TRY(expect_end());
      OG_ASSIGN_OR_RETURN(n.body, parse_block({"endgeneration"}, &found, "generation", line));
    } else {
      static const std::set<std::string> kJinjaOnly = {"call", "with", "include", "import", "from",
                                                       "extends", "block", "autoescape"};
      if (kJinjaOnly.count(tag)) return unsupported("line {}: the '{}' tag is not supported", line, tag);
      return bad_input("line {}: unknown tag '{}'", line, tag);
    }
    return n;
  }

  // `a`, `a, b` or `(a, b)`: loop and set targets.
  Result<std::vector<std::string>> parse_names(bool allow_tuple) {
    std::vector<std::string> names;
    const bool paren = accept_op("(");
    do {
      if (cur().kind != TokenKind::kName) return fail("expected a variable name, got {}", describe(cur()));
      names.push_back(next().text);
    } while (allow_tuple && accept_op(","));
    if (paren) OG_TRY(expect_op(")"));
    return names;
  }

  // ---- cursor shorthands ----

  const Token& cur() const { return c_.cur(); }
  const Token& next() { return c_.next(); }
  bool accept_op(std::string_view op) { return c_.accept_op(op); }
  bool accept_name(std::string_view name) { return c_.accept_name(name); }
  Status expect_op(std::string_view op) { return c_.expect_op(op); }
  Status expect_end() const { return c_.expect_end(); }
  template <typename... A>
  Status fail(fmt::format_string<A...> f, A&&... a) const {
    return c_.fail(f, std::forward<A>(a)...);
  }
  Result<ExprPtr> parse_tuple(bool with_condexpr, bool explicit_parens) {
    return og::chat::parse_tuple(c_, with_condexpr, explicit_parens);
  }
  Result<ExprPtr> parse_expression(bool with_condexpr) { return og::chat::parse_expression(c_, with_condexpr); }
  Result<ExprPtr> parse_filter(ExprPtr object) { return og::chat::parse_filter(c_, std::move(object)); }

  const std::vector<Segment>& segs_;
  size_t seg_ = 0;
  TokenCursor c_{nullptr};  // over the current tag's tokens
  int loop_depth_ = 0;
  int depth_ = 0;  // open blocks
};

}  // namespace

Result<Body> parse_template(const std::vector<Segment>& segments) { return Parser(segments).run(); }

}  // namespace og::chat
