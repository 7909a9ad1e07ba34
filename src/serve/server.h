// `offgraph serve`: an OpenAI-compatible HTTP server over one generate::Scheduler.
//
// The server speaks HTTP and JSON only (DESIGN.md §4b): it renders chat messages with the
// program's template, tokenizes, submits SequenceRequests and turns tokens back into text,
// SSE chunks and usage; it knows requests, not models. One thread loops
// `while (running) { if (!step()) wait_for_work(50ms); }`; HTTP handler threads submit and
// wait on a per-request queue fed by on_token/on_done (which run on that loop thread).
//
// Every request that reaches the scheduler leaves it: finished, stopped by a stop string,
// cancelled because its client went away (streams notice at the next token or within 50 ms)
// or cancelled at shutdown. Bad input gets the OpenAI error object and never reaches it.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include "base/status.h"
#include "generate/model_text.h"
#include "generate/scheduler.h"
#include "serve/metrics.h"

namespace httplib {
class Server;
}

namespace og::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                      // 0: any free port (see port())
  std::string api_key;                  // non-empty: every API path needs `Authorization: Bearer KEY`
  size_t max_body_bytes = 8u << 20;     // larger bodies get 413 before they are read
  int32_t queue = 64;                   // requests that may wait beyond the running ones; then 429
  int timeout_s = 600;                  // read/write timeout of a connection
  int http_threads = 0;                 // connections served at once (0: 8 + queue)
};

// What the server drives, built by the caller once the program is loaded.
struct Backend {
  std::unique_ptr<generate::Scheduler> scheduler;
  generate::ModelText text;
  std::string model_name;               // the id /v1/models lists and requests may name
  int64_t ctx_len = 0;                  // positions per sequence
};

struct Job;

class Server {
 public:
  // Binds the port; until set_backend() /health answers 503 and the API 503.
  static Result<std::unique_ptr<Server>> bind(const ServerOptions& options);
  ~Server();

  int port() const { return port_; }
  // Starts the scheduler loop; /health turns 200.
  void set_backend(Backend backend);
  bool ready() const { return ready_.load(); }
  // Serves until shutdown(); returns once every connection has ended.
  void run();
  // From any thread: new requests get 503, running ones may finish for `grace`, the rest
  // are cancelled; then the listener stops and run() returns.
  void shutdown(std::chrono::milliseconds grace);

 private:
  Server() = default;
  void routes();
  void stop_loop();
  void cancel_all();

  ServerOptions options_;
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
  std::unique_ptr<Backend> backend_;  // set once, before ready_
  std::atomic<bool> ready_{false}, draining_{false}, loop_running_{false};
  std::atomic<bool> stop_requested_{false}, run_active_{false};
  std::thread loop_;
  Metrics metrics_;
  std::atomic<int64_t> in_flight_{0};   // submitted and not yet done
  std::atomic<int64_t> open_http_{0};   // routed requests whose response is not yet written
  int64_t capacity_ = 0;                // slots + queue
  std::mutex jobs_mu_;
  std::unordered_set<std::shared_ptr<Job>> jobs_;  // submitted and not yet done

  friend struct Handlers;
};

}  // namespace og::serve
