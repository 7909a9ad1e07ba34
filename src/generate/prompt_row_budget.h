// How many prompt rows a step may carry beside decoding streams (Scheduler): enough that a
// new prompt reaches its first token soon, few enough that the streams keep their pace.
//
// A step with prompt rows should cost at most about (1 + ratio) decode-only steps: the
// median of the last five, so that one step the host slowed (single steps stray by 50 %
// here with nothing else running) does not raise the target of the steps after it. Each row
// of such a mixed step is taken to cost seconds / rows, as if the step were compute bound:
// the median of the last five mixed steps. The host of these machines stalls every half
// second or so for one or two steps (2-4x a decode step, with nothing else running), and
// the most of the last four, the earlier rule, took each stall for the rows' cost: the rows
// fell to one, doubled back over four steps and fell again, 2-4 rows a step where 15 fit,
// and prompts under 4 clients waited 5x a lone prompt's time to first token.
// That bounds every step, not only the mean over steps: a step costs at least its rows'
// compute, so the rows this estimate allows cannot cost more than the target. Where a step
// is still memory bound (decode-sized), the estimate is too high and the rows grow, at most
// doubling per step. (A running mean of the extra cost per prompt row, the earlier rule,
// sees nearly free rows while the step is memory bound, then allows a step far over the
// target.)
//
// The decode steps that set the target must be current. While prompts keep arriving every
// step can carry prompt rows, and a target measured before the host slowed (by half or more
// here, for minutes) makes every decode-sized step look like a whole budget: the prompt rows
// fell to one or two per step and prompts waited many times their time (seen: 2-row chunks
// for 30 steps, time to first token 5x a lone request's). So when the rows have stayed
// starved (two or fewer, or a quarter of their peak or less) for kStarvedSteps mixed steps,
// the next kRefreshSteps steps carry no prompt rows and measure the decode step again (a
// majority of the median's ring). Only then: decode steps measured beside a long prefill
// ran ~20 % slower than before it here, and a target that followed them every few steps
// let the streams' longest gap grow.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace og::generate {

class PromptRowBudget {
 public:
  // first: rows of the first mixed step, before anything is measured; max_rows: the most
  // rows a step can carry.
  PromptRowBudget(double ratio, int64_t first, int64_t max_rows)
      : ratio_(ratio), max_rows_(std::max<int64_t>(1, max_rows)), rows_(std::clamp<int64_t>(first, 1, max_rows_)) {}

  // Mixed steps in a row with starved rows (two or fewer, or a quarter of their peak or less)
  // before the decode step is measured again, and the decode-only steps that measure it.
  static constexpr int kStarvedSteps = 4;
  static constexpr int kRefreshSteps = 3;

  // Prompt rows the next step may carry beside decoding rows; 0 asks for a decode-only step.
  int64_t rows() const { return refresh_left_ > 0 ? 0 : rows_; }

  // A step of `decodes` decoding rows and `prompt_rows` prompt rows took `seconds` (to the
  // end of its bookkeeping: the streams wait for all of it).
  void observe(int64_t decodes, int64_t prompt_rows, double seconds) {
    if (decodes <= 0) return;  // nothing to keep pace with
    if (prompt_rows == 0) {
      decode_steps_[decode_seen_++ % decode_steps_.size()] = seconds;
      if (refresh_left_ > 0) --refresh_left_;
      return;
    }
    if (decode_seen_ == 0) return;  // no decode-only step to compare with yet
    const double decode_step_s = median_decode_step();
    // The median per-row cost of the last few mixed steps: neither a stall nor one step that
    // ran fast moves it (and the rows grow at most 2x a step).
    recent_[recent_seen_++ % recent_.size()] = seconds / static_cast<double>(decodes + prompt_rows);
    const double row_s = median(recent_, recent_seen_);
    const auto fit = static_cast<int64_t>((1 + ratio_) * decode_step_s / row_s) - decodes;
    rows_ = std::clamp<int64_t>(fit, 1, std::min(2 * rows_, max_rows_));
    peak_rows_ = std::max(peak_rows_, rows_);
    starved_steps_ = rows_ <= 2 || 4 * rows_ <= peak_rows_ ? starved_steps_ + 1 : 0;
    if (starved_steps_ >= kStarvedSteps) {
      refresh_left_ = kRefreshSteps;
      starved_steps_ = 0;
      peak_rows_ = rows_;  // what the fresh target allows becomes the reference
    }
  }

 private:
  // The median of a ring's first min(seen, N) values.
  template <size_t N>
  static double median(std::array<double, N> v, size_t seen) {
    const size_t n = std::min(seen, N);
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.begin() + static_cast<std::ptrdiff_t>(n));
    return v[n / 2];
  }
  double median_decode_step() const { return median(decode_steps_, decode_seen_); }

  double ratio_;
  int64_t max_rows_;
  int64_t rows_;
  // Seconds of the last decode-only steps (a ring): five, so that a refresh's three make
  // the median.
  std::array<double, 5> decode_steps_{};
  size_t decode_seen_ = 0;  // decode-only steps observed
  int64_t peak_rows_ = 0;   // the most rows allowed since the last refresh
  int starved_steps_ = 0;   // mixed steps in a row with starved rows
  int refresh_left_ = 0;    // decode-only steps still to run for a refresh
  std::array<double, 5> recent_{};    // seconds per row of the last mixed steps (a ring)
  size_t recent_seen_ = 0;            // mixed steps observed
};

}  // namespace og::generate
