// Pre-tokenizers (tokenizers' pre_tokenizers/*.rs): each step maps the current list of words
// to a new one, in order, dropping empty words as PreTokenizedString::split does.
#include "tokenizer/pipeline.h"
#include "tokenizer/unicode.h"

namespace og::tokenizer {
namespace {

// byte_level.rs: GPT-2's split, in Oniguruma syntax like the original.
constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// whitespace.rs: `\w+|[^\w\s]+` of the Rust regex crate, whose \w is Alphabetic, M, Nd, Pc
// and Join_Control and whose \s is White_Space; spelled out because PCRE2's differ.
constexpr const char* kRustWordPattern =
    R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}]+|[^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}\t-\r\x{85}\p{Z}]+)";

void split_words(const Matcher& m, SplitBehavior behavior, bool invert, std::vector<Word>& words, Status& status) {
  std::vector<Word> out;
  out.reserve(words.size() * 2);
  thread_local std::vector<Span> spans;
  for (const Word& w : words) {
    status = m.find_matches(w.text, spans);
    if (!status.is_ok()) return;
    for (const auto& [begin, end] : split_spans(spans, behavior, invert))
      out.push_back({w.text.substr(begin, end - begin), w.at_origin && begin == 0});
  }
  words.swap(out);
}

}  // namespace

Status PreTokenizer::init(const std::vector<PreTokenizerStep>& steps) {
  using K = PreTokenizerStep::Kind;
  steps_spec_ = &steps;
  matchers_.clear();
  for (size_t k = 0; k < steps.size(); ++k) {
    const PreTokenizerStep& s = steps[k];
    const std::string where = fmt::format("pre_tokenizer step {}", k);
    switch (s.kind) {
      case K::kSplit: {
        OG_ASSIGN_OR_RETURN(Matcher m, compile_pattern(s.pattern, where + " (Split)"));
        matchers_.push_back(std::move(m));
        break;
      }
      case K::kByteLevel: {
        if (!s.use_regex) {
          matchers_.push_back(Matcher::literal(""));
          break;
        }
        OG_ASSIGN_OR_RETURN(auto re, Regex::compile(kGpt2Pattern, where + " (ByteLevel)"));
        matchers_.push_back(Matcher::regex(std::move(re)));
        break;
      }
      case K::kMetaspace: matchers_.push_back(Matcher::single_char(s.replacement)); break;
      case K::kDigits: matchers_.push_back(Matcher::char_class(CharClass::kNumeric)); break;
      case K::kWhitespace: {
        OG_ASSIGN_OR_RETURN(auto re, Regex::compile(kRustWordPattern, where + " (Whitespace)"));
        matchers_.push_back(Matcher::regex(std::move(re)));
        break;
      }
      case K::kWhitespaceSplit: matchers_.push_back(Matcher::char_class(CharClass::kWhiteSpace)); break;
    }
  }
  return Status::ok();
}

Status PreTokenizer::apply(std::string_view piece, bool at_origin, std::vector<Word>& words) const {
  words.clear();
  if (piece.empty()) return Status::ok();
  words.push_back({std::string(piece), at_origin});
  for (size_t k = 0; k < matchers_.size(); ++k) OG_TRY(apply_step(k, words));
  return Status::ok();
}

Status PreTokenizer::apply_step(size_t k, std::vector<Word>& words) const {
  using K = PreTokenizerStep::Kind;
  const PreTokenizerStep& s = (*steps_spec_)[k];
  Status status;
  switch (s.kind) {
    case K::kSplit: split_words(matchers_[k], s.behavior, s.invert, words, status); break;
    case K::kDigits:
      split_words(matchers_[k], s.individual_digits ? SplitBehavior::kIsolated : SplitBehavior::kContiguous, false, words, status);
      break;
    case K::kWhitespace: split_words(matchers_[k], SplitBehavior::kRemoved, true, words, status); break;
    case K::kWhitespaceSplit: split_words(matchers_[k], SplitBehavior::kRemoved, false, words, status); break;
    case K::kByteLevel:
      if (s.add_prefix_space)
        for (Word& w : words)
          if (w.text[0] != ' ') w.text.insert(w.text.begin(), ' ');
      if (s.use_regex) split_words(matchers_[k], SplitBehavior::kIsolated, false, words, status);
      for (Word& w : words) w.text = to_byte_level(w.text);
      break;
    case K::kMetaspace: {
      std::string rep;
      append_utf8(rep, s.replacement);
      for (Word& w : words) {
        std::string replaced;
        replaced.reserve(w.text.size() + rep.size());
        for (char ch : w.text) {
          if (ch == ' ') replaced += rep;
          else replaced += ch;
        }
        const bool starts = replaced.compare(0, rep.size(), rep) == 0;
        const bool prepend = s.prepend_scheme == PrependScheme::kAlways ||
                             (s.prepend_scheme == PrependScheme::kFirst && w.at_origin);
        if (prepend && !starts) replaced.insert(0, rep);
        w.text = std::move(replaced);
      }
      if (s.split) split_words(matchers_[k], SplitBehavior::kMergedWithNext, false, words, status);
      break;
    }
  }
  return status;
}

}  // namespace og::tokenizer
