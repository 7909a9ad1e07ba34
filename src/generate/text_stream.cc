#include "generate/text_stream.h"

#include "constrain/special_marks.h"

namespace og::generate {

TextStream::TextStream(const tokenizer::Tokenizer& tokenizer, std::vector<std::string> stop_strings, bool mark_specials)
    : tokenizer_(tokenizer), decoder_(tokenizer, /*skip_special=*/true), stops_(std::move(stop_strings)), mark_specials_(mark_specials) {}

Result<std::string> TextStream::push(int32_t token) {
  tokens_.push_back(token);
  OG_ASSIGN_OR_RETURN(std::string piece, decoder_.step(token));
  decoded_bytes_ += piece.size();
  if (mark_specials_ && tokenizer_.is_special(token))
    piece += constrain::mark_special(tokenizer_.decode(std::span<const int32_t>(&token, 1), false));
  return stops_.push(piece);
}

std::string TextStream::finish() {
  if (stops_.stopped()) return "";
  std::string tail;
  const std::string all = tokenizer_.decode(tokens_, /*skip_special=*/true);
  if (all.size() > decoded_bytes_) tail = stops_.push(std::string_view(all).substr(decoded_bytes_));
  decoded_bytes_ = all.size();
  return tail + stops_.flush();
}

}  // namespace og::generate
