// The parsed form of a chat template: expression and statement trees.
//
// One Expr struct with a kind tag and generic children (rather than a class per node) keeps
// the parser and the interpreter each a single switch. Every node keeps its source line so a
// render error can say where it happened.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/value.h"

namespace og::chat {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  kConst,    // value
  kName,     // name
  kList,     // args: items
  kTuple,    // args: items
  kDict,     // args: key0, value0, key1, value1, ...
  kAttr,     // object.name
  kItem,     // object[args[0]]
  kSlice,    // object[args[0]:args[1]:args[2]], each may be null
  kCall,     // object(args, kwargs)
  kFilter,   // object|name(args, kwargs); object is null inside {% filter %} / {% set x | f %}
  kTest,     // object is [not] name(args, kwargs)
  kUnary,    // op applied to object: "-", "+", "not"
  kBinary,   // object op args[0]: + - * / // % ** ~ and or
  kCompare,  // object ops[0] args[0] ops[1] args[1] ...: == != < <= > >= in notin
  kCond,     // args[1] if args[0] else args[2] (args[2] may be null)
};

struct Expr {
  ExprKind kind = ExprKind::kConst;
  int line = 0;
  Value value;                // kConst
  std::string name;           // kName, kAttr, kFilter, kTest, and the operator of kUnary/kBinary
  ExprPtr object;             // the operand / callee / filtered value
  std::vector<ExprPtr> args;  // see ExprKind
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;  // kCompare
  bool negated = false;          // kTest: `is not`
};

struct Node;
using Body = std::vector<Node>;

enum class NodeKind {
  kText,        // text
  kOutput,      // {{ expr }}
  kIf,          // branches: (cond, body)...; a null cond is the else branch
  kFor,         // for targets in expr [if cond] body [else else_body]
  kSet,         // set targets = expr, or set targets[0].attr = expr (attr non-empty)
  kSetBlock,    // set targets[0] [| filters] body endset
  kMacro,       // macro name(targets with defaults) body
  kBreak,
  kContinue,
  kFilterBlock, // filter filters body endfilter
  kScope,       // body rendered in place ({% generation %})
};

struct Node {
  NodeKind kind = NodeKind::kText;
  int line = 0;
  std::string text;                  // kText; macro name
  std::vector<std::string> targets;  // for/set names; macro parameters
  std::string attr;                  // kSet on a namespace attribute
  ExprPtr expr;                      // output/set value/for iterable
  ExprPtr cond;                      // for ... if cond
  std::vector<ExprPtr> defaults;     // macro parameter defaults (null when none)
  std::vector<ExprPtr> filters;      // kFilter nodes with a null object
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body, else_body;
};

}  // namespace og::chat
