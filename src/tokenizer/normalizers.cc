// Normalizers (tokenizers' normalizers/*.rs) on plain strings: offsets are not tracked
// because offgraph needs ids, not alignments.
#include "tokenizer/pipeline.h"
#include "tokenizer/unicode.h"

namespace og::tokenizer {

Result<Matcher> compile_pattern(const PatternSpec& p, const std::string& where) {
  if (!p.is_regex) return Matcher::literal(p.text);
  OG_ASSIGN_OR_RETURN(auto re, Regex::compile(p.text, where));
  return Matcher::regex(std::move(re));
}

namespace {

// NormalizedString::replace: every match becomes `content`.
Status replace_all(const Matcher& m, const std::string& content, std::string& s) {
  thread_local std::vector<Span> spans;
  OG_TRY(m.find_matches(s, spans));
  bool any = false;
  for (const Span& sp : spans) any |= sp.is_match;
  if (!any) return Status::ok();
  std::string out;
  out.reserve(s.size());
  for (const Span& sp : spans) {
    if (sp.is_match) out += content;
    else out.append(s, sp.begin, sp.end - sp.begin);
  }
  s = std::move(out);
  return Status::ok();
}

void strip_white_space(std::string& s, bool left, bool right) {
  size_t begin = 0, end = s.size();
  if (left) {
    while (begin < end) {
      size_t next = begin;
      if (!is_white_space(next_char(s, next))) break;
      begin = next;
    }
  }
  if (right) {
    while (end > begin) {
      size_t start = end - 1;
      while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
      size_t i = start;
      if (!is_white_space(next_char(s, i))) break;
      end = start;
    }
  }
  s = s.substr(begin, end - begin);
}

std::string without_combining_marks(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t begin = i;
    if (!is_combining_mark(next_char(s, i))) out.append(s.substr(begin, i - begin));
  }
  return out;
}

}  // namespace

Status Normalizer::init(const std::vector<NormalizerStep>& steps) {
  steps_spec_ = &steps;
  steps_.clear();
  for (size_t k = 0; k < steps.size(); ++k) {
    if (steps[k].kind != NormalizerStep::Kind::kReplace) {
      steps_.push_back(Matcher::literal(""));
      continue;
    }
    if (steps[k].pattern.text.empty()) return bad_input("tokenizer: normalizer {}: Replace with an empty pattern", k);
    OG_ASSIGN_OR_RETURN(Matcher m, compile_pattern(steps[k].pattern, fmt::format("normalizer {} (Replace)", k)));
    steps_.push_back(std::move(m));
  }
  return Status::ok();
}

Status Normalizer::apply(std::string& s) const {
  using K = NormalizerStep::Kind;
  for (size_t k = 0; k < steps_.size(); ++k) {
    const NormalizerStep& step = (*steps_spec_)[k];
    switch (step.kind) {
      case K::kReplace: OG_TRY(replace_all(steps_[k], step.content, s)); break;
      case K::kPrepend:
        if (!s.empty()) s.insert(0, step.content);
        break;
      case K::kNfc: { OG_ASSIGN_OR_RETURN(s, normalize_unicode(s, NormalForm::kNfc)); break; }
      case K::kNfd: { OG_ASSIGN_OR_RETURN(s, normalize_unicode(s, NormalForm::kNfd)); break; }
      case K::kNfkc: { OG_ASSIGN_OR_RETURN(s, normalize_unicode(s, NormalForm::kNfkc)); break; }
      case K::kNfkd: { OG_ASSIGN_OR_RETURN(s, normalize_unicode(s, NormalForm::kNfkd)); break; }
      case K::kLowercase: s = lowercase(s); break;
      case K::kStrip: strip_white_space(s, step.strip_left, step.strip_right); break;
      case K::kStripAccents: s = without_combining_marks(s); break;
      case K::kByteLevel: s = to_byte_level(s); break;
    }
  }
  return Status::ok();
}

}  // namespace og::tokenizer
