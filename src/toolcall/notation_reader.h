// Reads a value written in a template's notation (constrain/value_notation.h: strings between a
// quote, bare keys) and writes it as JSON text as it streams: a string's text escaped as it
// comes, a key quoted, a bare scalar as the JSON it stands for (Python's True/False/None too,
// anything else unreadable as a string). The reply parser turns a call's arguments into JSON
// with it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace og::toolcall {

class NotationReader {
 public:
  explicit NotationReader(std::string quote) : quote_(std::move(quote)) {}

  // Reads from the start of `text` (which must begin the value with '{' or '['), appending
  // JSON to `out`; returns the bytes read. It stops where the value closes (done()) or where
  // it needs more text to go on (`end`: there is no more; what is held is read as it stands).
  size_t read(std::string_view text, bool end, std::string& out);
  bool done() const { return done_; }
  // The text ended inside the value: closes what is open so that `out` is JSON.
  void close(std::string& out);

 private:
  enum class State : uint8_t { kValue, kKey, kAfter, kString };
  bool begin_item(std::string& out);  // a key or value starts: the comma before it, if any

  std::string quote_;
  std::vector<char> open_;  // '{' / '[' of the containers entered
  State state_ = State::kValue;
  bool comma_ = false;      // a ',' was read and is written when the next item starts
  bool first_ = true;       // nothing inside the innermost container yet
  bool key_ = false;        // the string being read is a key (quoted keys)
  bool colon_ = false;      // a quoted key was read; its ':' is not yet
  bool done_ = false;
};

}  // namespace og::toolcall
