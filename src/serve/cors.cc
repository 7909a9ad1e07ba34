#include "serve/cors.h"

namespace og::serve {
namespace {

// Any origin may read the answers; they carry no cookies (Allow-Credentials is not sent), and
// the API key, when set, still guards every request but the preflight.
void allow_origin(http::Headers& h) {
  h.add("Access-Control-Allow-Origin", "*");
  h.add("Access-Control-Expose-Headers", "Retry-After");
}

}  // namespace

bool answer_preflight(const http::Request& req, http::Exchange& ex) {
  if (req.method != "OPTIONS" || !req.headers.has("Access-Control-Request-Method")) return false;
  http::Response r{.status = 204, .content_type = ""};
  allow_origin(r.headers);
  r.headers.add("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  // The headers the page will send (Authorization, Content-Type, the openai client's
  // X-Stainless-* ...): all of them, as asked.
  const auto asked = req.headers.get("Access-Control-Request-Headers");
  r.headers.add("Access-Control-Allow-Headers", asked ? std::string(*asked) : "Authorization, Content-Type");
  r.headers.add("Access-Control-Max-Age", "86400");
  r.headers.add("Vary", "Access-Control-Request-Headers");
  ex.respond(std::move(r));
  return true;
}

bool CorsExchange::respond(http::Response response) {
  allow_origin(response.headers);
  return inner_.respond(std::move(response));
}

bool CorsExchange::begin_stream(int status, std::string content_type, http::Headers headers) {
  allow_origin(headers);
  return inner_.begin_stream(status, std::move(content_type), std::move(headers));
}

}  // namespace og::serve
