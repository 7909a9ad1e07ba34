// Stop strings over streamed text (OpenAI `stop`): a stop string may span token boundaries
// and is never emitted. Text that could be the start of a stop string is held back until
// it is known not to be one; text after a stop string is dropped.
//
// Fed valid UTF-8 pieces, every returned piece is valid UTF-8: a held-back tail starts
// where a stop string starts, and a stop string starts with a lead byte.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace og::generate {

class StopStringMatcher {
 public:
  explicit StopStringMatcher(std::vector<std::string> stops);  // empty strings are ignored

  // Appends decoded text; returns what may be emitted now. Once a stop string completes,
  // returns the text before it and stopped() turns true; later pushes return "".
  std::string push(std::string_view text);
  // At the end of generation: the held-back text (empty after a stop).
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;  // not yet emitted: the longest tail that could start a stop string
  bool stopped_ = false;
};

}  // namespace og::generate
