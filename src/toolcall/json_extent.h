// Where a JSON object or array ends, read a byte at a time without parsing it: the nesting
// depth outside strings (escapes respected). The reply parser streams arguments through it;
// the template probe finds the arguments it rendered with it.
#pragma once

#include <cstdint>

namespace og::toolcall {

class JsonExtent {
 public:
  // Reads byte c of a value that starts with '{' or '['; true when c closes the value.
  bool step(char c) {
    if (in_string_) {
      if (escaped_) escaped_ = false;
      else if (c == '\\') escaped_ = true;
      else if (c == '"') in_string_ = false;
    } else if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if ((c == '}' || c == ']') && --depth_ == 0) {
      return true;
    }
    return false;
  }

 private:
  int32_t depth_ = 0;
  bool in_string_ = false, escaped_ = false;
};

}  // namespace og::toolcall
