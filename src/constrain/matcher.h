// Matcher: parses bytes against a Grammar one at a time, keeping the parse after each byte so
// that bytes can be tried and taken back (the token mask walks every token this way) and a
// sampled token undone.
//
// The parse is the set of the grammar's possible call stacks (a nondeterministic pushdown
// automaton). Stacks are frames in an arena, shared by their common bottoms and hash-consed, so
// two paths that reach the same stack merge into one; a level holds the stacks whose top state
// reads a byte, after every epsilon move, call and return has been followed.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "constrain/grammar.h"

namespace og::constrain {

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Grammar> grammar);
  // A matcher that starts inside a rule, at `state`, with unknown frames below it: where the
  // rule would return, the level records popped() instead (the token masks' precomputation:
  // what a token does from a state whatever called its rule).
  static Matcher inside(std::shared_ptr<const Grammar> grammar, int32_t state);

  // Reads one byte; false, and nothing changes, when the grammar cannot read it next.
  bool advance(uint8_t byte);
  // Reads all of `bytes` or none of them.
  bool advance(std::string_view bytes);
  // Takes back the last n bytes read (n <= bytes_read()).
  void rollback(size_t n);
  size_t bytes_read() const { return levels_.size() - 1; }

  // The bytes read form a whole sentence of the grammar.
  bool accepting() const { return levels_.back().accept; }
  // Some byte can still come (else only the end can).
  bool can_continue() const { return levels_.back().tops_end > levels_.back().tops_begin; }
  // inside(): the rule of the start state has just returned, with the last byte read.
  bool popped() const { return levels_.back().popped; }
  // The frames of the current level whose top state reads a byte, and a frame's state.
  std::span<const int32_t> tops() const {
    return {tops_.data() + levels_.back().tops_begin, levels_.back().tops_end - levels_.back().tops_begin};
  }
  int32_t frame_state(int32_t frame) const { return frames_[static_cast<size_t>(frame)].state; }
  // Whether, were `frame`'s rule to return now, the frames below it would read all of
  // `bytes` (nothing is changed).
  bool reads_after_return(int32_t frame, std::string_view bytes);

  // Whether `byte` can come next (a 256-bit set, built with the level).
  bool allows(uint8_t byte) const { return (levels_.back().next[byte >> 6] >> (byte & 63)) & 1; }

  // Frames allocated past this point are dropped by truncate(): the mask walk explores many
  // paths that are never taken, and their frames would otherwise grow the arena without end.
  size_t arena_mark() const { return frames_.size(); }
  void truncate(size_t mark);

 private:
  struct Frame {
    int32_t parent;  // -1: the root rule's frame
    int32_t state;   // global state (Grammar::state)
  };
  struct Level {
    size_t tops_begin = 0, tops_end = 0;  // into tops_
    bool accept = false;
    bool popped = false;                  // inside(): the start rule returned here
    std::array<uint64_t, 4> next{};       // the bytes some top can read
  };
  static constexpr int32_t kUnknownCaller = -2;  // below inside()'s first frame
  Matcher() = default;
  int32_t frame(int32_t parent, int32_t state);
  // Follows epsilon moves, calls and returns from the seeds_ into a new level.
  void close_level();

  std::shared_ptr<const Grammar> g_;
  std::vector<Frame> frames_;
  std::unordered_map<uint64_t, int32_t> frame_ids_;  // (parent, state) -> frame
  std::vector<int32_t> tops_;                        // every level's tops, level after level
  std::vector<Level> levels_;                        // [bytes_read + 1]
  // Scratch of close_level.
  std::vector<int32_t> seeds_, work_;
  std::vector<uint32_t> seen_;  // [frames] epoch of the last visit
  uint32_t epoch_ = 0;
};

}  // namespace og::constrain
