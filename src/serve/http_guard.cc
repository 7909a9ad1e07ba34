#include "serve/http_guard.h"

#include <cstdio>

#include <fmt/format.h>

namespace og::serve {
namespace {

bool constant_time_equal(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i % (b.empty() ? 1 : b.size())]);
  return diff == 0 && !b.empty();
}

bool unguarded(const std::string& path) { return path == "/health" || path == "/metrics"; }

}  // namespace

http::Response error_response(const ApiError& e) {
  http::Response r{.status = e.status, .body = e.to_json().dump()};
  if (e.status == 429 || e.status == 503) r.headers.add("Retry-After", "1");
  return r;
}

http::Response transport_error(int status, const std::string& message) {
  ApiError e{.status = status, .message = message};
  switch (status) {
    case 408: e.code = "request_timeout"; break;
    case 413: e.code = "request_too_large"; break;
    case 431: e.code = "request_header_fields_too_large"; break;
    case 503: e.type = "server_error", e.code = "unavailable"; break;
    default:
      if (status >= 500) e.type = "server_error";
  }
  http::Response r = error_response(e);
  r.close = true;
  return r;
}

void send_error(http::Exchange& ex, const ApiError& e) { ex.respond(error_response(e)); }

void send_json(http::Exchange& ex, const std::string& body) { ex.respond({.status = 200, .body = body}); }

std::optional<ApiError> HttpGuard::refuse(const http::Request& req) const {
  if (!api_key_.empty() && !unguarded(req.path)) {
    const std::string auth(req.headers.get("Authorization").value_or(""));
    const std::string kBearer = "Bearer ";
    if (auth.compare(0, kBearer.size(), kBearer) != 0 || !constant_time_equal(auth.substr(kBearer.size()), api_key_))
      return ApiError{.status = 401, .message = "Incorrect API key provided (Authorization: Bearer KEY)",
                      .type = "authentication_error", .code = "invalid_api_key"};
  }
  if (!unguarded(req.path) && (!ready_.load() || draining_.load()))
    return ApiError{.status = 503, .message = ready_.load() ? "the server is shutting down" : "the model is loading",
                    .type = "server_error", .code = "unavailable"};
  return std::nullopt;
}

void access_log(const http::AccessRecord& r) {
  if (unguarded(r.path) && r.status == 200) return;
  std::string line = fmt::format("{} {} {}", r.method, r.path, r.status);
  if (!r.detail.empty()) line += " " + r.detail;
  line += fmt::format(" total={:.1f}ms", r.seconds * 1e3);
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace og::serve
