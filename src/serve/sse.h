// Server-Sent Events as the OpenAI streaming APIs write them: `data: {json}\n\n` per event,
// then `data: [DONE]\n\n`.
#pragma once

#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace og::serve {

inline std::string sse_event(const nlohmann::ordered_json& j) {
  // Invalid UTF-8 never reaches here (the stream decoder holds partial characters back);
  // replace rather than throw if it ever does.
  return "data: " + j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n\n";
}

// False when the client is gone.
inline bool sse_write(httplib::DataSink& sink, const nlohmann::ordered_json& j) {
  const std::string e = sse_event(j);
  return sink.write(e.data(), e.size());
}

inline bool sse_done(httplib::DataSink& sink) {
  static const std::string kDone = "data: [DONE]\n\n";
  return sink.write(kDone.data(), kDone.size());
}

}  // namespace og::serve
