#include "constrain/grammar.h"

#include <fmt/format.h>

namespace og::constrain {

ExprPtr byte_ranges(std::vector<std::pair<uint8_t, uint8_t>> ranges) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kBytes;
  e->ranges = std::move(ranges);
  return e;
}

ExprPtr lit(std::string_view bytes) {
  std::vector<ExprPtr> items;
  for (char c : bytes) items.push_back(byte_ranges({{static_cast<uint8_t>(c), static_cast<uint8_t>(c)}}));
  return items.size() == 1 ? items[0] : seq(std::move(items));
}

ExprPtr seq(std::vector<ExprPtr> items) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kSeq;
  e->items = std::move(items);
  return e;
}

ExprPtr alt(std::vector<ExprPtr> items) {
  if (items.size() == 1) return items[0];
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kAlt;
  e->items = std::move(items);
  return e;
}

ExprPtr repeat(ExprPtr item, int32_t min, int32_t max) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kRepeat;
  e->items = {std::move(item)};
  e->min = min;
  e->max = max;
  return e;
}

ExprPtr call(int32_t rule) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::kCall;
  e->rule = rule;
  return e;
}

// Thompson's construction of one rule: emit(e, from) adds e's states after `from` and returns
// the state where e has been read. Every construct gets fresh states, so loops never share a
// state with what precedes them.
struct Grammar::Builder {
  std::vector<std::vector<Edge>> out;  // [local states]
  int64_t budget;                      // states still allowed
  Status error;

  int32_t add() {
    if (--budget < 0 && error.is_ok())
      error = bad_input("the grammar needs more than {} states (a schema too large or too deeply repeated)", kMaxStates);
    out.emplace_back();
    return static_cast<int32_t>(out.size() - 1);
  }
  void eps(int32_t from, int32_t to) { out[static_cast<size_t>(from)].push_back({.kind = Edge::Kind::kEps, .to = to}); }

  int32_t emit(const Expr& e, int32_t from) {
    if (!error.is_ok()) return from;
    switch (e.kind) {
      case Expr::Kind::kBytes: {
        const int32_t to = add();
        for (auto [lo, hi] : e.ranges)
          out[static_cast<size_t>(from)].push_back({.kind = Edge::Kind::kByte, .lo = lo, .hi = hi, .to = to});
        return to;
      }
      case Expr::Kind::kSeq:
        for (const ExprPtr& item : e.items) from = emit(*item, from);
        return from;
      case Expr::Kind::kAlt: {
        const int32_t to = add();
        for (const ExprPtr& item : e.items) {
          const int32_t start = add();
          eps(from, start);
          eps(emit(*item, start), to);
        }
        return to;
      }
      case Expr::Kind::kRepeat: {
        const Expr& item = *e.items[0];
        for (int32_t i = 0; i < e.min; ++i) from = emit(item, from);
        if (e.max < 0) {  // the loop head is also the exit
          const int32_t head = add();
          eps(from, head);
          eps(emit(item, head), head);
          return head;
        }
        const int32_t to = add();
        eps(from, to);
        for (int32_t i = e.min; i < e.max && error.is_ok(); ++i) {
          from = emit(item, from);
          eps(from, to);
        }
        return to;
      }
      case Expr::Kind::kCall: {
        const int32_t to = add();
        out[static_cast<size_t>(from)].push_back({.kind = Edge::Kind::kCall, .callee = e.rule, .to = to});
        return to;
      }
    }
    return from;
  }
};

int32_t Grammar::add_rule(std::string name) {
  names_.push_back(std::move(name));
  rule_start_.push_back(-1);
  return static_cast<int32_t>(names_.size() - 1);
}

Status Grammar::define(int32_t rule, const ExprPtr& body) {
  if (finished_ || rule < 0 || rule >= n_rules() || rule_start_[static_cast<size_t>(rule)] >= 0)
    return Status(ErrorCode::kInternal, fmt::format("grammar rule {} defined twice or after finish", rule));
  Builder b{.budget = kMaxStates - n_states()};
  const int32_t start = b.add();
  const int32_t end = b.emit(*body, start);
  OG_TRY(b.error);
  const auto offset = static_cast<int32_t>(states_.size());
  rule_start_[static_cast<size_t>(rule)] = offset;
  for (size_t s = 0; s < b.out.size(); ++s) {
    State st{.rule = rule, .accept = static_cast<int32_t>(s) == end, .first_edge = static_cast<uint32_t>(edges_.size()),
             .n_edges = static_cast<uint32_t>(b.out[s].size())};
    for (Edge e : b.out[s]) {
      e.to += offset;  // a call's callee stays a rule id until finish()
      edges_.push_back(e);
    }
    states_.push_back(st);
  }
  return Status::ok();
}

Status Grammar::finish(int32_t root) {
  if (root < 0 || root >= n_rules()) return Status(ErrorCode::kInternal, "grammar root out of range");
  for (int32_t r = 0; r < n_rules(); ++r)
    if (rule_start_[static_cast<size_t>(r)] < 0) return bad_input("grammar rule '{}' is never defined", names_[static_cast<size_t>(r)]);
  for (Edge& e : edges_)
    if (e.kind == Edge::Kind::kCall) e.callee = rule_start_[static_cast<size_t>(e.callee)];
  root_ = root;
  finished_ = true;
  OG_TRY(check_progress());
  trim();
  return Status::ok();
}

// live[s]: from state s its rule can still end (reading bytes and calling rules that can
// end). Computed backwards from the accepting states in linear time; then every edge into a
// dead state, or calling a rule that cannot end, is dropped. After this every prefix the
// matcher reads can be completed: a sampler never walks into a dead end.
void Grammar::trim() {
  const size_t n = states_.size();
  std::vector<uint8_t> live(n, 0);
  std::vector<std::vector<uint32_t>> into(n), calling(n);  // edges by their target / callee start
  for (size_t s = 0; s < n; ++s)
    for (uint32_t k = 0; k < states_[s].n_edges; ++k) {
      const Edge& e = edges_[states_[s].first_edge + k];
      into[static_cast<size_t>(e.to)].push_back(states_[s].first_edge + k);
      if (e.kind == Edge::Kind::kCall) calling[static_cast<size_t>(e.callee)].push_back(states_[s].first_edge + k);
    }
  std::vector<int32_t> from_of(edges_.size());
  for (size_t s = 0; s < n; ++s)
    for (uint32_t k = 0; k < states_[s].n_edges; ++k) from_of[states_[s].first_edge + k] = static_cast<int32_t>(s);
  std::vector<int32_t> work;
  for (size_t s = 0; s < n; ++s)
    if (states_[s].accept) live[s] = 1, work.push_back(static_cast<int32_t>(s));
  const auto edge_live = [&](const Edge& e) {
    return live[static_cast<size_t>(e.to)] && (e.kind != Edge::Kind::kCall || live[static_cast<size_t>(e.callee)]);
  };
  while (!work.empty()) {
    const auto t = static_cast<size_t>(work.back());
    work.pop_back();
    for (const auto* list : {&into[t], &calling[t]})
      for (uint32_t k : *list) {
        const auto s = static_cast<size_t>(from_of[k]);
        if (!live[s] && edge_live(edges_[k])) live[s] = 1, work.push_back(static_cast<int32_t>(s));
      }
  }
  std::vector<Edge> kept;
  for (State& st : states_) {
    const uint32_t first = static_cast<uint32_t>(kept.size());
    for (uint32_t k = 0; k < st.n_edges; ++k)
      if (edge_live(edges_[st.first_edge + k])) kept.push_back(edges_[st.first_edge + k]);
    st.first_edge = first;
    st.n_edges = static_cast<uint32_t>(kept.size()) - first;
  }
  edges_ = std::move(kept);
  matches_nothing_ = !live[static_cast<size_t>(root_state())];
}

// A rule that can reach a call of itself without reading a byte would make the matcher
// push frames forever ($ref cycles without progress, left recursion): refused here.
Status Grammar::check_progress() const {
  const size_t n_rules_u = names_.size();
  // Which rules can end without reading a byte (a fixpoint over the rules).
  std::vector<uint8_t> nullable(n_rules_u, 0);
  // The rules each rule can call before reading a byte; `through_nullable` follows calls of
  // rules known to be nullable to the state they return to.
  auto first_calls = [&](int32_t r, std::vector<int32_t>* callees) {
    std::vector<uint8_t> seen(states_.size(), 0);
    std::vector<int32_t> work{rule_start_[static_cast<size_t>(r)]};
    bool ends = false;
    while (!work.empty()) {
      const int32_t s = work.back();
      work.pop_back();
      if (seen[static_cast<size_t>(s)]) continue;
      seen[static_cast<size_t>(s)] = 1;
      const State& st = states_[static_cast<size_t>(s)];
      ends = ends || st.accept;
      for (uint32_t k = 0; k < st.n_edges; ++k) {
        const Edge& e = edges_[st.first_edge + k];
        if (e.kind == Edge::Kind::kEps) work.push_back(e.to);
        if (e.kind != Edge::Kind::kCall) continue;
        const int32_t callee = states_[static_cast<size_t>(e.callee)].rule;
        if (callees) callees->push_back(callee);
        if (nullable[static_cast<size_t>(callee)]) work.push_back(e.to);
      }
    }
    return ends;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (int32_t r = 0; r < n_rules(); ++r)
      if (!nullable[static_cast<size_t>(r)] && first_calls(r, nullptr)) nullable[static_cast<size_t>(r)] = changed = true;
  }
  std::vector<std::vector<int32_t>> calls(n_rules_u);
  for (int32_t r = 0; r < n_rules(); ++r) first_calls(r, &calls[static_cast<size_t>(r)]);
  // A cycle in "calls before reading": iterative depth-first search with colours.
  std::vector<uint8_t> colour(n_rules_u, 0);  // 0 new, 1 on the path, 2 done
  for (int32_t r0 = 0; r0 < n_rules(); ++r0) {
    if (colour[static_cast<size_t>(r0)]) continue;
    std::vector<std::pair<int32_t, size_t>> path{{r0, 0}};
    colour[static_cast<size_t>(r0)] = 1;
    while (!path.empty()) {
      auto& [r, next] = path.back();
      const auto& out = calls[static_cast<size_t>(r)];
      if (next == out.size()) {
        colour[static_cast<size_t>(r)] = 2;
        path.pop_back();
        continue;
      }
      const int32_t c = out[next++];
      if (colour[static_cast<size_t>(c)] == 1)
        return bad_input("'{}' refers to itself without reading anything (a $ref cycle that makes no progress)",
                         names_[static_cast<size_t>(c)]);
      if (colour[static_cast<size_t>(c)] == 0) {
        colour[static_cast<size_t>(c)] = 1;
        path.push_back({c, 0});
      }
    }
  }
  return Status::ok();
}

}  // namespace og::constrain
