// UTF-8 encoding of code points, shared by the tokenizer and the chat-template renderer.
// Decoding is not here: each of those follows a different library's rules for invalid bytes.
#pragma once

#include <string>
#include <string_view>

namespace og {

// Appends the UTF-8 bytes of code point `c` (1 to 4 bytes; `c` is not validated).
void append_utf8(std::string& out, char32_t c);
std::string encode_utf8(std::u32string_view s);

}  // namespace og
