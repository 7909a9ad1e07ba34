#include "constrain/special_marks.h"

#include <algorithm>

namespace og::constrain {

SpecialTexts::SpecialTexts(std::vector<std::string> texts) : texts_(std::move(texts)) {
  std::erase_if(texts_, [](const std::string& t) { return t.empty(); });
  std::stable_sort(texts_.begin(), texts_.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string SpecialTexts::mark(std::string_view text) const {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const std::string* hit = nullptr;
    for (const std::string& t : texts_)
      if (text.compare(i, t.size(), t) == 0) {
        hit = &t;
        break;
      }
    if (hit) {
      out += mark_special(*hit);
      i += hit->size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string unmark(std::string_view marked) {
  std::string out;
  for (char c : marked)
    if (c != kSpecialMark) out += c;
  return out;
}

}  // namespace og::constrain
