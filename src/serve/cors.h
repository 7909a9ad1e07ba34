// Cross-origin requests (CORS), so that a web page's script can call the server as
// the reference server and vLLM (its default `allowed_origins: ["*"]`) let it: any origin, no
// cookies. A preflight (OPTIONS with Access-Control-Request-Method) is answered before the API
// key is checked, since browsers send it without credentials; every other response to a
// request that names an Origin carries Access-Control-Allow-Origin.
#pragma once

#include "http/exchange.h"

namespace og::serve {

// True when `req` is a CORS preflight; it has then been answered (204 with the allowed
// methods and the headers the browser asked for).
bool answer_preflight(const http::Request& req, http::Exchange& ex);

// An Exchange that adds Access-Control-Allow-Origin to what it forwards to `inner`.
class CorsExchange final : public http::Exchange {
 public:
  explicit CorsExchange(http::Exchange& inner) : inner_(inner) {}
  bool respond(http::Response response) override;
  bool begin_stream(int status, std::string content_type, http::Headers headers) override;
  bool write(std::string piece) override { return inner_.write(std::move(piece)); }
  void end_stream() override { inner_.end_stream(); }
  bool client_gone() const override { return inner_.client_gone(); }
  void on_client_gone(std::function<void()> fn) override { inner_.on_client_gone(std::move(fn)); }
  void log_detail(std::string words) override { inner_.log_detail(std::move(words)); }

 private:
  http::Exchange& inner_;
};

}  // namespace og::serve
