// One request's reply channel, handed to the handler with the request. A handler runs on a
// worker thread and may block (waiting for generated tokens); these calls are safe from it.
//
// Either respond() once, or begin_stream(), write()... , end_stream(). A handler that
// returns without answering gets a 500; a stream left open is ended.
#pragma once

#include <functional>
#include <string>

#include "http/message.h"

namespace og::http {

class Exchange {
 public:
  virtual ~Exchange() = default;

  // A whole response. False when it could not be delivered (the client is gone).
  virtual bool respond(Response response) = 0;

  // A streamed response (chunked transfer coding): the head now, then pieces of the body.
  // write() returns once the piece is handed to the socket; false when the client is gone
  // or stopped reading for the write timeout. Empty pieces are skipped.
  virtual bool begin_stream(int status, std::string content_type, Headers headers = {}) = 0;
  virtual bool write(std::string piece) = 0;
  virtual void end_stream() = 0;

  // True once the client has closed its side of the connection (or it failed).
  virtual bool client_gone() const = 0;
  // `fn` runs once, on the connection's I/O thread, when the client goes away before the
  // response is complete (at once when it already has). It must not block.
  virtual void on_client_gone(std::function<void()> fn) = 0;

  // Words appended to this request's access-log line (e.g. "prompt_tokens=12").
  virtual void log_detail(std::string words) = 0;
};

}  // namespace og::http
