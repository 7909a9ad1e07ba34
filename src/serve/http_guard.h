// Everything between the transport and the API handlers: the API key, readiness and
// draining checks every request passes first, the OpenAI error object as an HTTP response
// (also for what the transport refuses itself: malformed, too large, too slow), and the
// access log line.
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "http/exchange.h"
#include "http/http_server.h"
#include "serve/api_error.h"

namespace og::serve {

http::Response error_response(const ApiError& e);
// What the transport answers for a request it refuses (or whose handler sent nothing).
http::Response transport_error(int status, const std::string& message);
void send_error(http::Exchange& ex, const ApiError& e);
void send_json(http::Exchange& ex, const std::string& body);

class HttpGuard {
 public:
  HttpGuard(std::string api_key, const std::atomic<bool>& ready, const std::atomic<bool>& draining)
      : api_key_(std::move(api_key)), ready_(ready), draining_(draining) {}
  // The error that refuses `req` before it is routed, if any: a missing or wrong key (401;
  // /health and /metrics need none), the model still loading or the server draining (503).
  std::optional<ApiError> refuse(const http::Request& req) const;

 private:
  std::string api_key_;
  const std::atomic<bool>& ready_;
  const std::atomic<bool>& draining_;
};

// One stderr line per request; successful probes and scrapes (/health, /metrics) are not logged.
void access_log(const http::AccessRecord& r);

}  // namespace og::serve
