// The bytes of responses as the transport writes them: status line and fields, chunks of a
// chunked body. Kept apart from the socket code so each is checked on its own.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "http/message.h"

namespace og::http {

// The reason phrase of a status (RFC 9110 §15); "Unknown" for codes it does not list.
std::string_view reason_phrase(int status);

struct HeadOptions {
  int status = 200;
  std::string_view content_type;          // empty: no Content-Type
  std::optional<size_t> content_length;   // nullopt: `Transfer-Encoding: chunked` (or, to an
                                          // HTTP/1.0 client, a body that ends with the connection)
  bool close = false;                     // `Connection: close`
  bool http10_keep_alive = false;         // `Connection: keep-alive` (HTTP/1.0 clients ask for it)
  bool chunked = true;                    // with no length: false for HTTP/1.0 clients
};
std::string response_head(const HeadOptions& o, const Headers& extra);

// One chunk of a chunked body (RFC 9112 §7.1); empty data would end the body, so callers
// skip it. last_chunk() ends a body.
std::string chunk(std::string_view data);
inline std::string_view last_chunk() { return "0\r\n\r\n"; }

}  // namespace og::http
