// A context-free grammar over bytes, the form the constrained sampler reads: each rule is a
// small NFA whose edges read a byte range, call another rule (and come back), or move
// freely (epsilon). Rules are written as expressions (Expr) and compiled by Grammar::define;
// JSON Schema compiles to one (json_schema.h). This layer knows bytes and rules, never
// tokens, models or families.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace og::constrain {

// A rule body: byte ranges, sequences, alternatives, bounded or unbounded repeats, calls.
struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;
struct Expr {
  enum class Kind : uint8_t { kBytes, kSeq, kAlt, kRepeat, kCall };
  Kind kind = Kind::kSeq;
  std::vector<std::pair<uint8_t, uint8_t>> ranges;  // kBytes: inclusive ranges (none: matches nothing)
  std::vector<ExprPtr> items;                       // kSeq, kAlt (an empty kAlt matches nothing); kRepeat: one
  int32_t min = 0, max = 0;                         // kRepeat: max < 0 is unbounded
  int32_t rule = -1;                                // kCall
};

ExprPtr byte_ranges(std::vector<std::pair<uint8_t, uint8_t>> ranges);
ExprPtr lit(std::string_view bytes);  // the bytes in order
ExprPtr seq(std::vector<ExprPtr> items);
ExprPtr alt(std::vector<ExprPtr> items);
ExprPtr repeat(ExprPtr e, int32_t min, int32_t max);
inline ExprPtr opt(ExprPtr e) { return repeat(std::move(e), 0, 1); }
inline ExprPtr star(ExprPtr e) { return repeat(std::move(e), 0, -1); }
ExprPtr call(int32_t rule);

// One NFA state of the flattened grammar (Grammar::state): its edges and whether its rule may
// end (return to the caller) there. States are numbered across all rules.
struct Edge {
  enum class Kind : uint8_t { kByte, kCall, kEps };
  Kind kind;
  uint8_t lo = 0, hi = 0;  // kByte: the inclusive range read
  int32_t callee = -1;     // kCall: the start state of the called rule
  int32_t to = -1;         // where the edge goes (kCall: where the callee returns to)
};
struct State {
  int32_t rule = -1;
  bool accept = false;
  uint32_t first_edge = 0, n_edges = 0;  // into Grammar::edges()
};

class Grammar {
 public:
  // A bound on the states of all rules together: a hostile schema gets an error, not an OOM.
  static constexpr int64_t kMaxStates = 1 << 21;

  // Declares a rule (defined later: rules may call each other recursively).
  int32_t add_rule(std::string name);
  Status define(int32_t rule, const ExprPtr& body);
  // Checks that every rule is defined and none can call itself before reading a byte (such
  // a grammar would recurse forever), and fixes the root. Nothing is added after.
  Status finish(int32_t root);

  // No sentence at all (a schema no value satisfies).
  bool matches_nothing() const { return matches_nothing_; }
  int32_t root_state() const { return rule_start_[static_cast<size_t>(root_)]; }
  const State& state(int32_t s) const { return states_[static_cast<size_t>(s)]; }
  const std::vector<Edge>& edges() const { return edges_; }
  const std::string& rule_name(int32_t r) const { return names_[static_cast<size_t>(r)]; }
  int32_t n_rules() const { return static_cast<int32_t>(names_.size()); }
  int64_t n_states() const { return static_cast<int64_t>(states_.size()); }

 private:
  struct Builder;
  Status check_progress() const;
  void trim();

  std::vector<std::string> names_;
  std::vector<int32_t> rule_start_;  // [n_rules] global start state; -1 until defined
  std::vector<State> states_;
  std::vector<Edge> edges_;
  int32_t root_ = -1;
  bool finished_ = false;
  bool matches_nothing_ = false;
};

}  // namespace og::constrain
