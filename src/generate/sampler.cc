#include "generate/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace og::generate {

Status SamplingParams::validate() const {
  if (min_tokens < 0) return usage_error("min_tokens {} must be >= 0", min_tokens);
  if (!(temperature >= 0) || !std::isfinite(temperature)) return usage_error("--temp {} must be >= 0", temperature);
  if (top_k < 0) return usage_error("--top-k {} must be >= 0", top_k);
  if (!(top_p > 0 && top_p <= 1)) return usage_error("--top-p {} must be in (0, 1]", top_p);
  if (!(min_p >= 0 && min_p <= 1)) return usage_error("--min-p {} must be in [0, 1]", min_p);
  if (!(repetition_penalty > 0) || !std::isfinite(repetition_penalty))
    return usage_error("--repeat-penalty {} must be > 0", repetition_penalty);
  if (repeat_last_n < -1) return usage_error("--repeat-last-n {} must be >= -1", repeat_last_n);
  if (!(presence_penalty >= -2 && presence_penalty <= 2))
    return usage_error("presence_penalty {} must be in [-2, 2]", presence_penalty);
  if (!(frequency_penalty >= -2 && frequency_penalty <= 2))
    return usage_error("frequency_penalty {} must be in [-2, 2]", frequency_penalty);
  return Status::ok();
}

Sampler::Sampler(const SamplingParams& params, std::span<const int32_t> end_ids)
    : p_(params), end_ids_(end_ids.begin(), end_ids.end()), rng_(params.seed) {
  if (p_.grammar && p_.grammar_trigger.empty()) matcher_.emplace(p_.grammar->grammar());
  waiting_ = p_.grammar && !p_.grammar_trigger.empty();
  paused_ = waiting_ && p_.grammar_starts_paused && !p_.grammar_pause_close.empty();
}

void Sampler::watch_trigger(int32_t token) {
  free_text_ += p_.grammar->trie().bytes(token);
  for (;;) {
    if (paused_) {
      const size_t close = free_text_.find(p_.grammar_pause_close, scan_);
      if (close == std::string::npos) return;
      paused_ = false;
      scan_ = close + p_.grammar_pause_close.size();
      continue;
    }
    const size_t open = p_.grammar_pause_open.empty() ? std::string::npos : free_text_.find(p_.grammar_pause_open, scan_);
    const size_t trigger = free_text_.find(p_.grammar_trigger, scan_);
    if (open != std::string::npos && (trigger == std::string::npos || open < trigger)) {
      paused_ = true;
      scan_ = open + p_.grammar_pause_open.size();
      continue;
    }
    if (trigger == std::string::npos) return;
    // The grammar reads the text from the trigger on; a token that went past the trigger in a
    // way the grammar refuses leaves the text free (the reply parser reads it as content).
    constrain::Matcher m(p_.grammar->grammar());
    if (m.advance(std::string_view(free_text_).substr(trigger))) {
      matcher_.emplace(std::move(m));
      waiting_ = false;
      free_text_.clear();
      return;
    }
    scan_ = trigger + 1;
  }
}

// logit_bias, then the grammar's mask: refused tokens get -inf, which every later rule keeps
// (penalties scale or shift it, softmax gives it 0, the filters drop it).
void Sampler::constrain(std::span<float> logits) {
  const auto V = static_cast<int32_t>(logits.size());
  for (const auto& [id, bias] : p_.logit_bias)
    if (id >= 0 && id < V) logits[static_cast<size_t>(id)] += bias;
  // The text may not end before min_tokens, nor before a required grammar's part.
  const bool no_end = sampled_ <= p_.min_tokens || (!matcher_ && waiting_ && p_.grammar_required);
  if (no_end)
    for (int32_t id : end_ids_)
      if (id >= 0 && id < V) logits[static_cast<size_t>(id)] = -std::numeric_limits<float>::infinity();
  if (!matcher_) return;
  const constrain::TokenMask mask = p_.grammar->allowed(*matcher_);
  const int32_t known = std::min(V, p_.grammar->trie().vocab_size());
  constexpr float kRefused = -std::numeric_limits<float>::infinity();
  for (int32_t i = 0; i < known; ++i)
    if (!constrain::mask_has(mask, i)) logits[static_cast<size_t>(i)] = kRefused;
  for (int32_t i = known; i < V; ++i) logits[static_cast<size_t>(i)] = kRefused;
  // The end may come where the text is whole, and also at a dead end (a vocabulary without a
  // token for some byte the grammar needs): the text then stops, invalid, rather than go on
  // outside the grammar.
  const bool dead_end = std::none_of(mask.begin(), mask.end(), [](uint64_t w) { return w != 0; });
  if ((matcher_->accepting() || dead_end) && sampled_ > p_.min_tokens)  // restore the end ids' own logits (+ bias)
    for (int32_t id : end_ids_)
      if (id >= 0 && id < V) {
        float l = 0;
        for (const auto& [b, bias] : p_.logit_bias) l += b == id ? bias : 0.0f;
        logits[static_cast<size_t>(id)] = l + original_[static_cast<size_t>(id)];
      }
}

double Sampler::uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
  int32_t token;
  ++sampled_;  // this draw's token is the sampled_-th
  if (p_.logit_bias.empty() && !matcher_ && !(waiting_ && p_.grammar_required) && sampled_ > p_.min_tokens) {
    token = pick(logits, history);
    if (waiting_ && std::find(end_ids_.begin(), end_ids_.end(), token) == end_ids_.end()) watch_trigger(token);
  } else if (!matcher_) {
    original_ = logits;
    biased_.assign(logits.begin(), logits.end());
    constrain(biased_);
    token = pick(biased_, history);
    if (waiting_ && std::find(end_ids_.begin(), end_ids_.end(), token) == end_ids_.end()) watch_trigger(token);
  } else {
    original_ = logits;
    biased_.assign(logits.begin(), logits.end());
    constrain(biased_);
    token = pick(biased_, history);
    if (matcher_ && std::find(end_ids_.begin(), end_ids_.end(), token) == end_ids_.end()) {
      const std::string_view bytes = p_.grammar->trie().bytes(token);
      // Only an all-refused row (every logit -inf or NaN) can pick outside the mask.
      if (bytes.empty() || !matcher_->advance(bytes)) matcher_.reset();
    }
  }
  if (p_.presence_penalty != 0.0f || p_.frequency_penalty != 0.0f) ++generated_counts_[token];
  return token;
}

int32_t Sampler::pick(std::span<const float> logits, std::span<const int32_t> history) {
  const int32_t V = static_cast<int32_t>(logits.size());
  scratch_.assign(logits.begin(), logits.end());
  // Repetition penalty (HF): seen tokens' logits divided by the penalty if positive, multiplied if negative.
  if (p_.repetition_penalty != 1.0f) {
    size_t from = p_.repeat_last_n < 0 || static_cast<size_t>(p_.repeat_last_n) >= history.size()
                      ? 0
                      : history.size() - static_cast<size_t>(p_.repeat_last_n);
    std::unordered_set<int32_t> seen(history.begin() + static_cast<std::ptrdiff_t>(from), history.end());
    for (int32_t t : seen)
      if (t >= 0 && t < V) scratch_[t] = scratch_[t] < 0 ? scratch_[t] * p_.repetition_penalty : scratch_[t] / p_.repetition_penalty;
  }
  // OpenAI's presence and frequency penalties over the generated tokens.
  for (const auto& [t, count] : generated_counts_)
    if (t >= 0 && t < V) scratch_[t] -= p_.presence_penalty + p_.frequency_penalty * static_cast<float>(count);
  if (p_.temperature == 0.0f)
    return static_cast<int32_t>(std::max_element(scratch_.begin(), scratch_.end()) - scratch_.begin());

  // No filter (OpenAI's defaults: top_k off, top_p 1, min_p 0): sample the softmax directly,
  // in id order, without sorting the vocabulary.
  if ((p_.top_k == 0 || p_.top_k >= V) && p_.top_p >= 1.0f && p_.min_p == 0.0f) {
    const auto top = std::max_element(scratch_.begin(), scratch_.end());
    const float mx = *top;
    const auto argmax = static_cast<int32_t>(top - scratch_.begin());
    double sum = 0;
    for (float& l : scratch_) {
      l = std::exp((l - mx) / p_.temperature);
      sum += l;
    }
    double r = uniform() * sum;
    for (int32_t i = 0; i < V; ++i) {
      r -= scratch_[i];
      if (r < 0) return i;
    }
    return argmax;  // rounding left r >= 0: the most likely token
  }
  candidates_.clear();
  constexpr float kRefused = -std::numeric_limits<float>::infinity();  // masked: never a candidate
  for (int32_t i = 0; i < V; ++i)
    if (scratch_[i] != kRefused) candidates_.emplace_back(scratch_[i] / p_.temperature, i);
  if (candidates_.empty()) return static_cast<int32_t>(std::max_element(scratch_.begin(), scratch_.end()) - scratch_.begin());
  auto by_logit = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
  size_t keep = candidates_.size();
  if (p_.top_k > 0 && static_cast<size_t>(p_.top_k) < keep) {
    keep = static_cast<size_t>(p_.top_k);
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(keep), candidates_.end(), by_logit);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), by_logit);
  }
  candidates_.resize(keep);
  // Softmax over the survivors (sorted, so the first is the max).
  const float max = candidates_[0].first;
  double sum = 0;
  for (auto& c : candidates_) {
    c.first = std::exp(c.first - max);
    sum += c.first;
  }
  for (auto& c : candidates_) c.first = static_cast<float>(c.first / sum);
  // top-p: the smallest prefix whose mass reaches top_p (at least one token).
  if (p_.top_p < 1.0f) {
    double mass = 0;
    size_t n = 0;
    while (n < candidates_.size()) {
      mass += candidates_[n++].first;
      if (mass >= p_.top_p) break;
    }
    candidates_.resize(n);
  }
  // min-p: drop tokens below min_p times the most likely one.
  if (p_.min_p > 0.0f) {
    const float floor = p_.min_p * candidates_[0].first;
    size_t n = 1;
    while (n < candidates_.size() && candidates_[n].first >= floor) ++n;
    candidates_.resize(n);
  }
  double total = 0;
  for (const auto& c : candidates_) total += c.first;
  double r = uniform() * total;
  for (const auto& c : candidates_) {
    r -= c.first;
    if (r < 0) return c.second;
  }
  return candidates_.back().second;
}

}  // namespace og::generate
