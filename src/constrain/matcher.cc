#include "constrain/matcher.h"

namespace og::constrain {

Matcher::Matcher(std::shared_ptr<const Grammar> grammar) : g_(std::move(grammar)) {
  seeds_.push_back(frame(-1, g_->root_state()));
  close_level();
}

Matcher Matcher::inside(std::shared_ptr<const Grammar> grammar, int32_t state) {
  Matcher m;
  m.g_ = std::move(grammar);
  m.seeds_.push_back(m.frame(kUnknownCaller, state));
  m.close_level();
  return m;
}

bool Matcher::reads_after_return(int32_t f, std::string_view bytes) {
  const int32_t parent = frames_[static_cast<size_t>(f)].parent;
  if (parent < 0) return bytes.empty();  // the root rule returning ends the sentence
  seeds_.push_back(parent);
  close_level();
  size_t n = 1;
  bool ok = true;
  for (char c : bytes) {
    if (!advance(static_cast<uint8_t>(c))) {
      ok = false;
      break;
    }
    ++n;
  }
  rollback(n);
  return ok;
}

int32_t Matcher::frame(int32_t parent, int32_t state) {
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(parent)) << 32) | static_cast<uint32_t>(state);
  auto [it, inserted] = frame_ids_.try_emplace(key, static_cast<int32_t>(frames_.size()));
  if (inserted) frames_.push_back({parent, state});
  return it->second;
}

void Matcher::close_level() {
  Level level;
  level.tops_begin = tops_.size();
  if (++epoch_ == 0) std::fill(seen_.begin(), seen_.end(), 0), epoch_ = 1;
  work_.swap(seeds_);
  seeds_.clear();
  const std::vector<Edge>& edges = g_->edges();
  while (!work_.empty()) {
    const int32_t f = work_.back();
    work_.pop_back();
    if (seen_.size() < frames_.size()) seen_.resize(frames_.size() * 2, 0);
    if (seen_[static_cast<size_t>(f)] == epoch_) continue;
    seen_[static_cast<size_t>(f)] = epoch_;
    const Frame fr = frames_[static_cast<size_t>(f)];
    const State& st = g_->state(fr.state);
    bool reads = false;
    for (uint32_t k = 0; k < st.n_edges; ++k) {
      const Edge& e = edges[st.first_edge + k];
      switch (e.kind) {
        case Edge::Kind::kByte:
          reads = true;
          for (int b = e.lo; b <= e.hi; ++b) level.next[static_cast<size_t>(b) >> 6] |= uint64_t{1} << (b & 63);
          break;
        case Edge::Kind::kEps: work_.push_back(frame(fr.parent, e.to)); break;
        case Edge::Kind::kCall: work_.push_back(frame(frame(fr.parent, e.to), e.callee)); break;
      }
    }
    if (reads) tops_.push_back(f);
    if (st.accept) {  // the rule may return here: to its caller's frame, or the sentence ends
      if (fr.parent == kUnknownCaller) level.popped = true;
      else if (fr.parent < 0) level.accept = true;
      else work_.push_back(fr.parent);
    }
  }
  level.tops_end = tops_.size();
  levels_.push_back(level);
}

bool Matcher::advance(uint8_t byte) {
  if (!allows(byte)) return false;
  const Level cur = levels_.back();
  const std::vector<Edge>& edges = g_->edges();
  for (size_t i = cur.tops_begin; i < cur.tops_end; ++i) {
    const Frame fr = frames_[static_cast<size_t>(tops_[i])];
    const State& st = g_->state(fr.state);
    for (uint32_t k = 0; k < st.n_edges; ++k) {
      const Edge& e = edges[st.first_edge + k];
      if (e.kind == Edge::Kind::kByte && e.lo <= byte && byte <= e.hi) seeds_.push_back(frame(fr.parent, e.to));
    }
  }
  close_level();
  // A path can still die after the byte (in a part that matches nothing: an empty enum).
  if (!accepting() && !can_continue() && !popped()) {
    rollback(1);
    return false;
  }
  return true;
}

bool Matcher::advance(std::string_view bytes) {
  size_t n = 0;
  for (char c : bytes) {
    if (!advance(static_cast<uint8_t>(c))) {
      rollback(n);
      return false;
    }
    ++n;
  }
  return true;
}

void Matcher::rollback(size_t n) {
  levels_.resize(levels_.size() - n);
  tops_.resize(levels_.back().tops_end);
}

void Matcher::truncate(size_t mark) {
  for (size_t f = mark; f < frames_.size(); ++f) {
    const Frame fr = frames_[f];
    frame_ids_.erase((static_cast<uint64_t>(static_cast<uint32_t>(fr.parent)) << 32) | static_cast<uint32_t>(fr.state));
  }
  frames_.resize(mark);
}

}  // namespace og::constrain
