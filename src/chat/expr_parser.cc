#include "chat/expr_parser.h"

namespace og::chat {
namespace {

ExprPtr make(ExprKind kind, int line) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  return e;
}

ExprPtr binary(ExprPtr left, const std::string& op, ExprPtr right, int line) {
  ExprPtr b = make(ExprKind::kBinary, line);
  b->name = op;
  b->object = std::move(left);
  b->args.push_back(std::move(right));
  return b;
}

Result<ExprPtr> parse_or(TokenCursor& c);
Result<ExprPtr> parse_unary(TokenCursor& c, bool with_filter);
Result<ExprPtr> parse_unary_at_depth(TokenCursor& c, bool with_filter);

// One precedence level of left-associative operators, named or symbolic.
template <typename Next>
Result<ExprPtr> left_assoc(TokenCursor& c, std::initializer_list<const char*> ops, bool names,
                           Next next_level) {
  OG_ASSIGN_OR_RETURN(ExprPtr e, next_level(c));
  while (true) {
    const char* hit = nullptr;
    for (const char* op : ops) {
      if (names ? c.is_name(op) : c.is_op(op)) hit = op;
    }
    if (!hit) return e;
    const int line = c.next().line;
    OG_ASSIGN_OR_RETURN(ExprPtr r, next_level(c));
    e = binary(std::move(e), hit, std::move(r), line);
  }
}

Result<ExprPtr> parse_pow(TokenCursor& c) {
  return left_assoc(c, {"**"}, false, [](TokenCursor& t) { return parse_unary(t, true); });
}
Result<ExprPtr> parse_math2(TokenCursor& c) { return left_assoc(c, {"*", "/", "//", "%"}, false, parse_pow); }
Result<ExprPtr> parse_concat(TokenCursor& c) { return left_assoc(c, {"~"}, false, parse_math2); }
Result<ExprPtr> parse_math1(TokenCursor& c) { return left_assoc(c, {"+", "-"}, false, parse_concat); }

Result<ExprPtr> parse_compare(TokenCursor& c) {
  OG_ASSIGN_OR_RETURN(ExprPtr e, parse_math1(c));
  ExprPtr cmp;
  while (true) {
    std::string op;
    if (c.is_op("==") || c.is_op("!=") || c.is_op("<") || c.is_op("<=") || c.is_op(">") || c.is_op(">=")) {
      op = c.next().text;
    } else if (c.accept_name("in")) {
      op = "in";
    } else if (c.is_name("not") && c.peek(1).kind == TokenKind::kName && c.peek(1).text == "in") {
      c.next();
      c.next();
      op = "notin";
    } else {
      break;
    }
    if (!cmp) {
      cmp = make(ExprKind::kCompare, e->line);
      cmp->object = std::move(e);
    }
    cmp->ops.push_back(op);
    OG_ASSIGN_OR_RETURN(ExprPtr r, parse_math1(c));
    cmp->args.push_back(std::move(r));
  }
  if (cmp) return cmp;
  return e;
}

Result<ExprPtr> parse_not(TokenCursor& c) {
  if (c.is_name("not")) {
    ExprPtr u = make(ExprKind::kUnary, c.next().line);
    u->name = "not";
    OG_TRY(c.enter());
    auto operand = parse_not(c);
    c.leave();
    OG_ASSIGN_OR_RETURN(u->object, std::move(operand));
    return u;
  }
  return parse_compare(c);
}

Result<ExprPtr> parse_and(TokenCursor& c) { return left_assoc(c, {"and"}, true, parse_not); }
Result<ExprPtr> parse_or(TokenCursor& c) { return left_assoc(c, {"or"}, true, parse_and); }

// `(a, b=1)`: the cursor is on '('.
Status parse_call_args(TokenCursor& c, Expr& e) {
  OG_TRY(c.expect_op("("));
  bool first = true;
  while (!c.accept_op(")")) {
    if (!first) OG_TRY(c.expect_op(","));
    first = false;
    if (c.accept_op(")")) break;  // trailing comma
    if (c.is_op("*") || c.is_op("**")) return unsupported("line {}: *args and **kwargs are not supported", c.cur().line);
    if (c.cur().kind == TokenKind::kName && c.peek(1).kind == TokenKind::kOp && c.peek(1).text == "=") {
      std::string key = c.next().text;
      c.next();
      OG_ASSIGN_OR_RETURN(ExprPtr v, parse_expression(c, true));
      e.kwargs.emplace_back(std::move(key), std::move(v));
      continue;
    }
    if (!e.kwargs.empty()) return c.fail("positional argument after keyword argument");
    OG_ASSIGN_OR_RETURN(ExprPtr v, parse_expression(c, true));
    e.args.push_back(std::move(v));
  }
  return Status::ok();
}

Result<std::string> dotted_name(TokenCursor& c) {
  if (c.cur().kind != TokenKind::kName) return c.fail("expected a name, got {}", describe(c.cur()));
  std::string name = c.next().text;
  while (c.accept_op(".")) {
    if (c.cur().kind != TokenKind::kName) return c.fail("expected a name, got {}", describe(c.cur()));
    name += "." + c.next().text;
  }
  return name;
}

Result<ExprPtr> parse_primary(TokenCursor& c) {
  const Token& t = c.cur();
  const int line = t.line;
  ExprPtr e = make(ExprKind::kConst, line);
  switch (t.kind) {
    case TokenKind::kName:
      c.next();
      if (t.text == "true" || t.text == "True") e->value = Value::boolean(true);
      else if (t.text == "false" || t.text == "False") e->value = Value::boolean(false);
      else if (t.text == "none" || t.text == "None") e->value = Value::none();
      else {
        e->kind = ExprKind::kName;
        e->name = t.text;
      }
      return e;
    case TokenKind::kString: {
      std::string s;
      while (c.cur().kind == TokenKind::kString) s += c.next().text;  // adjacent literals join
      e->value = Value::string(std::move(s));
      return e;
    }
    case TokenKind::kInt: e->value = Value::integer(c.next().int_value); return e;
    case TokenKind::kFloat: e->value = Value::number(c.next().float_value); return e;
    default: break;
  }
  if (c.accept_op("(")) {
    OG_ASSIGN_OR_RETURN(e, parse_tuple(c, true, true));
    OG_TRY(c.expect_op(")"));
    return e;
  }
  const bool is_list = c.is_op("[");
  if (is_list || c.is_op("{")) {
    c.next();
    e->kind = is_list ? ExprKind::kList : ExprKind::kDict;
    const char* close = is_list ? "]" : "}";
    while (!c.accept_op(close)) {
      if (!e->args.empty()) {
        OG_TRY(c.expect_op(","));
        if (c.accept_op(close)) break;
      }
      OG_ASSIGN_OR_RETURN(ExprPtr item, parse_expression(c, true));
      e->args.push_back(std::move(item));
      if (is_list) continue;
      OG_TRY(c.expect_op(":"));
      OG_ASSIGN_OR_RETURN(ExprPtr v, parse_expression(c, true));
      e->args.push_back(std::move(v));
    }
    return e;
  }
  return c.fail("unexpected {}", describe(t));
}

// `[i]`, `[a:b:c]` after the '['.
Result<ExprPtr> parse_subscript(TokenCursor& c, ExprPtr obj, int line) {
  ExprPtr e = make(ExprKind::kItem, line);
  e->object = std::move(obj);
  ExprPtr parts[3];
  int n = 0;
  while (true) {
    if (!c.is_op(":") && !c.is_op("]")) {
      OG_ASSIGN_OR_RETURN(parts[n], parse_expression(c, true));
    }
    if (c.accept_op(":") && n < 2) {
      e->kind = ExprKind::kSlice;
      ++n;
      continue;
    }
    break;
  }
  OG_TRY(c.expect_op("]"));
  if (e->kind == ExprKind::kItem && !parts[0]) return c.fail("expected a subscript");
  const int count = e->kind == ExprKind::kSlice ? 3 : 1;
  for (int i = 0; i < count; ++i) e->args.push_back(std::move(parts[i]));
  return e;
}

Result<ExprPtr> parse_postfix(TokenCursor& c, ExprPtr e) {
  while (true) {
    const int line = c.cur().line;
    if (c.accept_op(".")) {
      const Token& t = c.next();
      if (t.kind == TokenKind::kName) {
        ExprPtr a = make(ExprKind::kAttr, line);
        a->name = t.text;
        a->object = std::move(e);
        e = std::move(a);
      } else if (t.kind == TokenKind::kInt) {  // `x.0` is `x[0]`
        ExprPtr a = make(ExprKind::kItem, line);
        a->object = std::move(e);
        a->args.push_back(make(ExprKind::kConst, line));
        a->args[0]->value = Value::integer(t.int_value);
        e = std::move(a);
      } else {
        return c.fail("expected an attribute name, got {}", describe(t));
      }
    } else if (c.accept_op("[")) {
      OG_ASSIGN_OR_RETURN(e, parse_subscript(c, std::move(e), line));
    } else if (c.is_op("(")) {
      ExprPtr call = make(ExprKind::kCall, line);
      call->object = std::move(e);
      OG_TRY(parse_call_args(c, *call));
      e = std::move(call);
    } else {
      return e;
    }
  }
}

// After `is`: `[not] name`, `name(args)` or `name arg` (one primary, as Jinja allows).
Result<ExprPtr> parse_test(TokenCursor& c, ExprPtr obj, int line) {
  ExprPtr e = make(ExprKind::kTest, line);
  e->object = std::move(obj);
  e->negated = c.accept_name("not");
  OG_ASSIGN_OR_RETURN(e->name, dotted_name(c));
  const Token& t = c.cur();
  if (c.is_op("(")) {
    OG_TRY(parse_call_args(c, *e));
  } else if ((t.kind == TokenKind::kName || t.kind == TokenKind::kString || t.kind == TokenKind::kInt ||
              t.kind == TokenKind::kFloat || c.is_op("[") || c.is_op("{")) &&
             !c.is_name("else") && !c.is_name("or") && !c.is_name("and")) {
    if (c.is_name("is")) return c.fail("you cannot chain multiple tests with is");
    OG_ASSIGN_OR_RETURN(ExprPtr arg, parse_primary(c));
    OG_ASSIGN_OR_RETURN(arg, parse_postfix(c, std::move(arg)));
    e->args.push_back(std::move(arg));
  }
  return e;
}

Result<ExprPtr> parse_unary(TokenCursor& c, bool with_filter) {
  OG_TRY(c.enter());
  auto e = parse_unary_at_depth(c, with_filter);
  c.leave();
  return e;
}

Result<ExprPtr> parse_unary_at_depth(TokenCursor& c, bool with_filter) {
  ExprPtr e;
  if (c.is_op("-") || c.is_op("+")) {
    e = make(ExprKind::kUnary, c.cur().line);
    e->name = c.next().text;
    OG_ASSIGN_OR_RETURN(e->object, parse_unary(c, false));
  } else {
    OG_ASSIGN_OR_RETURN(e, parse_primary(c));
  }
  OG_ASSIGN_OR_RETURN(e, parse_postfix(c, std::move(e)));
  while (with_filter) {
    const int line = c.cur().line;
    if (c.accept_op("|")) {
      OG_ASSIGN_OR_RETURN(e, parse_filter(c, std::move(e)));
    } else if (c.accept_name("is")) {
      OG_ASSIGN_OR_RETURN(e, parse_test(c, std::move(e), line));
    } else if (c.is_op("(")) {
      ExprPtr call = make(ExprKind::kCall, line);
      call->object = std::move(e);
      OG_TRY(parse_call_args(c, *call));
      e = std::move(call);
    } else {
      break;
    }
  }
  return e;
}

}  // namespace

std::string describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::kEnd: return "end of tag";
    case TokenKind::kString: return "string literal";
    default: return "'" + t.text + "'";
  }
}

Result<ExprPtr> parse_filter(TokenCursor& c, ExprPtr object) {
  ExprPtr f = make(ExprKind::kFilter, c.cur().line);
  f->object = std::move(object);
  OG_ASSIGN_OR_RETURN(f->name, dotted_name(c));
  if (c.is_op("(")) OG_TRY(parse_call_args(c, *f));
  return f;
}

static Result<ExprPtr> parse_expression_at_depth(TokenCursor& c, bool with_condexpr) {
  OG_ASSIGN_OR_RETURN(ExprPtr e, parse_or(c));
  while (with_condexpr && c.is_name("if")) {
    ExprPtr cond = make(ExprKind::kCond, c.next().line);
    OG_ASSIGN_OR_RETURN(ExprPtr test, parse_or(c));
    ExprPtr other;
    if (c.accept_name("else")) {
      OG_ASSIGN_OR_RETURN(other, parse_expression(c, true));
    }
    cond->args.push_back(std::move(test));
    cond->args.push_back(std::move(e));
    cond->args.push_back(std::move(other));
    e = std::move(cond);
  }
  return e;
}

Result<ExprPtr> parse_expression(TokenCursor& c, bool with_condexpr) {
  OG_TRY(c.enter());
  auto e = parse_expression_at_depth(c, with_condexpr);
  c.leave();
  return e;
}


Result<ExprPtr> parse_tuple(TokenCursor& c, bool with_condexpr, bool explicit_parens) {
  const int line = c.cur().line;
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) OG_TRY(c.expect_op(","));
    if (c.cur().kind == TokenKind::kEnd || c.is_op(")") || c.is_name("recursive") ||
        (!with_condexpr && c.is_name("if"))) {
      break;
    }
    OG_ASSIGN_OR_RETURN(ExprPtr e, parse_expression(c, with_condexpr));
    items.push_back(std::move(e));
    if (!c.is_op(",")) break;
    is_tuple = true;
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parens) return c.fail("expected an expression, got {}", describe(c.cur()));
  }
  ExprPtr t = make(ExprKind::kTuple, line);
  t->args = std::move(items);
  return t;
}

}  // namespace og::chat
