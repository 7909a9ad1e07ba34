// An HTTP/1.1 request as a handler sees it (fully read, chunked bodies already decoded) and
// a whole response. Neutral structs: the OpenAI-facing code builds and reads these and
// never learns which library parses the bytes (src/http/http_server.cc does).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace og::http {

// Header fields in arrival order; names compare case-insensitively (RFC 9110 §5.1).
class Headers {
 public:
  void add(std::string name, std::string value) { fields_.emplace_back(std::move(name), std::move(value)); }
  // The first field named `name`, if any.
  std::optional<std::string_view> get(std::string_view name) const;
  bool has(std::string_view name) const { return get(name).has_value(); }
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

bool iequals(std::string_view a, std::string_view b);

struct Request {
  std::string method;   // "GET", "POST", ... as sent
  std::string target;   // the request target as sent (path and query)
  std::string path;     // target up to '?'
  Headers headers;
  std::string body;     // decoded (Content-Length or chunked)
  std::string remote;   // peer "address:port", for logs
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  Headers headers;      // beyond Content-Type / Content-Length / Connection, which the transport writes
  bool close = false;   // close the connection after this response
};

}  // namespace og::http
