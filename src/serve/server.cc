#include "serve/server.h"

#include <fmt/format.h>

#include "serve/completion_handler.h"
#include "serve/cors.h"
#include "serve/info_routes.h"

namespace og::serve {

Result<std::unique_ptr<Server>> Server::bind(const ServerOptions& o) {
  if (o.queue < 0) return usage_error("--queue {} must be >= 0", o.queue);
  if (o.timeout_s < 1) return usage_error("--timeout {} must be >= 1", o.timeout_s);
  if (!(o.header_timeout_s > 0)) return usage_error("--header-timeout {} must be > 0", o.header_timeout_s);
  if (o.max_body_bytes < 1) return usage_error("--max-body-bytes must be >= 1");
  auto s = std::unique_ptr<Server>(new Server());
  s->options_ = o;
  s->guard_ = std::make_unique<HttpGuard>(o.api_key, s->ready_, s->draining_);
  s->add_routes();
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s) * 1000);
  const http::HttpOptions h{
      .host = o.host,
      .port = o.port,
      .max_body_bytes = o.max_body_bytes,
      .header_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.header_timeout_s * 1000)),
      .body_timeout = timeout,
      .write_timeout = timeout,
      .handler_threads = std::clamp(o.http_threads > 0 ? o.http_threads : 8 + o.queue, 2, 1024),
  };
  Server* self = s.get();
  OG_ASSIGN_OR_RETURN(s->http_, http::HttpServer::bind(
                                    h, [self](const http::Request& req, http::Exchange& ex) { self->handle(req, ex); },
                                    transport_error, access_log));
  return s;
}

Server::~Server() {
  http_.reset();  // ends the handlers before what they use
  stop_loop();
}

void Server::add_routes() {
  auto api = [this](void (*fn)(ServeContext&, const http::Request&, http::Exchange&)) {
    return [this, fn](const http::Request& req, http::Exchange& ex) { fn(*context_, req, ex); };
  };
  routes_ = {
      {"GET", "/health", [this](const http::Request&, http::Exchange& ex) { handle_health(ready_.load(), ex); }},
      {"GET", "/metrics",
       [this](const http::Request&, http::Exchange& ex) { handle_metrics(metrics_, ready_.load() ? context_.get() : nullptr, ex); }},
      {"GET", "/v1/models", [this](const http::Request&, http::Exchange& ex) { handle_models(*context_, ex); }},
      {"POST", "/v1/chat/completions",
       [this](const http::Request& req, http::Exchange& ex) { handle_completion(*context_, req, ex, /*chat=*/true); }},
      {"POST", "/v1/completions",
       [this](const http::Request& req, http::Exchange& ex) { handle_completion(*context_, req, ex, /*chat=*/false); }},
      {"POST", "/tokenize", api(handle_tokenize)},
      {"POST", "/detokenize", api(handle_detokenize)},
  };
}

void Server::handle(const http::Request& req, http::Exchange& exchange) {
  if (answer_preflight(req, exchange)) return;
  CorsExchange ex(exchange);  // the handlers answer synchronously: it outlives their use of it
  if (auto e = guard_->refuse(req)) return send_error(ex, *e);
  bool path_known = false;
  for (const Route& r : routes_) {
    if (r.path != req.path) continue;
    path_known = true;
    if (r.method == req.method || (r.method == "GET" && req.method == "HEAD")) return r.fn(req, ex);
  }
  constexpr std::string_view kModel = "/v1/models/";
  if (!path_known && req.path.starts_with(kModel) && req.path.size() > kModel.size()) {
    if (req.method == "GET" || req.method == "HEAD") return handle_model(*context_, std::string_view(req.path).substr(kModel.size()), ex);
    path_known = true;
  }
  if (path_known)
    return send_error(ex, {.status = 405, .message = fmt::format("{} is not allowed on {}", req.method, req.path),
                           .code = "method_not_allowed"});
  send_error(ex, {.status = 404, .message = fmt::format("no route for {} {}", req.method, req.path), .code = "not_found"});
}

void Server::set_backend(Backend backend) {
  backend_ = std::make_unique<Backend>(std::move(backend));
  context_ = std::make_unique<ServeContext>(ServeContext{*backend_, metrics_, jobs_, draining_});
  loop_running_ = true;
  loop_ = std::thread([this] {
    while (loop_running_.load()) {
      if (!backend_->scheduler->step()) backend_->scheduler->wait_for_work(std::chrono::milliseconds(50));
    }
  });
  ready_ = true;
}

void Server::run() {
  http_->run();
  stop_loop();
}

void Server::stop_loop() {
  loop_running_ = false;
  if (loop_.joinable()) loop_.join();
}

void Server::shutdown(std::chrono::milliseconds grace) {
  draining_ = true;
  auto wait_until = [](auto pred, std::chrono::steady_clock::time_point until) {
    while (!pred() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  if (ready_) {
    wait_until([&] { return jobs_.size() == 0; }, std::chrono::steady_clock::now() + grace);
    jobs_.cancel_all(*backend_->scheduler);
    wait_until([&] { return jobs_.size() == 0; }, std::chrono::steady_clock::now() + std::chrono::seconds(5));
  }
  // Responses in progress (final chunks, [DONE]) get two seconds to be written.
  http_->stop(std::chrono::milliseconds(2000));
}

}  // namespace og::serve
