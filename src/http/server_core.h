// Internal to src/http: the state one HttpServer shares with its connections. Everything
// here except the atomics and the pool is touched on the I/O thread only.
#pragma once

#include <atomic>
#include <optional>
#include <utility>
#include <vector>
#include <memory>
#include <unordered_map>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "http/http_server.h"
#include "http/worker_pool.h"

namespace og::http {

class Connection;

struct HttpServer::Impl {
  Impl(HttpOptions o, Handler h, ErrorResponse e, AccessLog l)
      : options(std::move(o)), handler(std::move(h)), error_response(std::move(e)), log(std::move(l)),
        pool(options.handler_threads) {}

  HttpOptions options;
  Handler handler;
  ErrorResponse error_response;
  AccessLog log;
  boost::asio::io_context io{1};
  boost::asio::ip::tcp::acceptor acceptor{io};
  boost::asio::steady_timer accept_retry{io};
  boost::asio::steady_timer grace{io};
  // Keeps io.run() going while nothing is pending (a handler may post at any time) until
  // the server has stopped and every connection and handler is gone.
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{io.get_executor()};
  WorkerPool pool;
  std::unordered_map<Connection*, std::shared_ptr<Connection>> connections;
  int handlers_running = 0;
  bool stopping = false;
  int port = 0;

  void accept();
  void begin_stop(std::chrono::milliseconds grace_period);
  void remove(Connection* c);
  void handler_finished();
  // Lets io.run() return once stopping and nothing is left.
  void maybe_finish();
};

}  // namespace og::http
