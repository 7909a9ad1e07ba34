// `offgraph serve`: an OpenAI-compatible HTTP server over one generate::Scheduler.
//
// The server speaks HTTP and JSON only (DESIGN.md §4b): it knows requests, not models. Its
// parts, one job a file: src/http (the transport: HTTP/1.1 parsing, keep-alive,
// pipelining, timeouts, disconnects), http_guard (key, readiness, error objects, access
// log), openai_request (JSON → structs), job (prompt → scheduler → text), completion_handler
// and sse_stream (one request's answer, whole or streamed), openai_response (structs →
// JSON), info_routes (health, metrics, models, tokenize). This file owns the lifecycle and
// the route table. One thread loops `while (running) { if (!step()) wait_for_work(50ms); }`.
//
// Every request that reaches the scheduler leaves it: finished, stopped by a stop string,
// cancelled because its client went away (noticed when its connection closes) or cancelled
// at shutdown. Bad input gets the OpenAI error object and never reaches it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "http/http_server.h"
#include "serve/http_guard.h"
#include "serve/serve_context.h"

namespace og::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                      // 0: any free port (see port())
  std::string api_key;                  // non-empty: every API path needs `Authorization: Bearer KEY`
  size_t max_body_bytes = 8u << 20;     // larger bodies (declared or decoded) get 413
  int32_t queue = 64;                   // requests that may wait beyond the running ones; then 429
  int timeout_s = 600;                  // a request body must arrive, and each write complete, within this
  double header_timeout_s = 60;         // a request's header must arrive within this (slow clients)
  int http_threads = 0;                 // requests handled at once (0: 8 + queue)
};

class Server {
 public:
  // Binds the port; until set_backend() /health answers 503 and the API 503.
  static Result<std::unique_ptr<Server>> bind(const ServerOptions& options);
  ~Server();

  int port() const { return http_->port(); }
  // Starts the scheduler loop; /health turns 200.
  void set_backend(Backend backend);
  bool ready() const { return ready_.load(); }
  // Serves until shutdown(); returns once every connection has ended.
  void run();
  // From any thread: new requests get 503, running ones may finish for `grace`, the rest
  // are cancelled; then the listener stops and run() returns.
  void shutdown(std::chrono::milliseconds grace);

 private:
  using RouteFn = std::function<void(const http::Request&, http::Exchange&)>;
  struct Route {
    std::string method, path;
    RouteFn fn;
  };

  Server() = default;
  void add_routes();
  void handle(const http::Request& req, http::Exchange& ex);
  void stop_loop();

  ServerOptions options_;
  std::unique_ptr<http::HttpServer> http_;
  std::vector<Route> routes_;
  std::unique_ptr<Backend> backend_;        // set once, before ready_
  std::unique_ptr<ServeContext> context_;   // over backend_
  std::unique_ptr<HttpGuard> guard_;
  Metrics metrics_;
  JobRegistry jobs_;
  std::atomic<bool> ready_{false}, draining_{false}, loop_running_{false};
  std::thread loop_;
};

}  // namespace og::serve
