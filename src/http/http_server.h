// An HTTP/1.1 server for the API (Boost.Beast's parser over Boost.Asio; docs/serving.md
// says why not cpp-httplib): one I/O thread owns every socket, handlers run on a pool of
// worker threads and may block.
//
// What it guarantees, whatever the handler does:
// - Request bodies with Content-Length or `Transfer-Encoding: chunked`, the decoded size
//   limited to max_body_bytes (413 and the connection closed; a declared length over the
//   limit is refused from the headers, before any body byte is read, and `Expect:
//   100-continue` is answered only under it). A malformed message or chunk stream: 400.
// - Keep-alive and pipelining: requests on one connection are answered in order; bytes of
//   the next request that arrive while one is handled are kept, never lost.
// - Slow clients: the headers of a request must arrive within header_timeout of the
//   connection becoming ready for it (idle keep-alive connections close then too; a
//   request begun but not finished gets 408), the body within body_timeout; a client that
//   stops reading a response is dropped after write_timeout.
// - A client that closes its connection while its request is handled is reported to the
//   handler at once (Exchange::on_client_gone), streamed or not.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "http/exchange.h"

namespace og::http {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                                  // 0: any free port (see HttpServer::port())
  size_t max_body_bytes = 8u << 20;
  size_t max_header_bytes = 64u << 10;              // request line + fields; 431 above
  std::chrono::milliseconds header_timeout{60000};  // nginx's client_header_timeout
  std::chrono::milliseconds body_timeout{600000};
  std::chrono::milliseconds write_timeout{600000};
  int handler_threads = 8;                          // requests handled at once; more wait in order
  size_t max_connections = 4096;                    // open at once; past it a new one gets 503
  size_t max_requests_per_connection = 1000;        // then Connection: close
};

using Handler = std::function<void(const Request&, Exchange&)>;
// The response for a request the transport refuses itself (status 400, 408, 413, 431, 503)
// or whose handler sent nothing (500): the API's own error body.
using ErrorResponse = std::function<Response(int status, const std::string& message)>;

// One finished exchange, for the access log (requests the transport refused itself too).
struct AccessRecord {
  std::string method, path;
  int status = 0;
  double seconds = 0;   // from the request's first byte to the end of its response
  std::string detail;   // Exchange::log_detail words
};
using AccessLog = std::function<void(const AccessRecord&)>;

class HttpServer {
 public:
  // Listens on host:port; requests are served once run() is called.
  static Result<std::unique_ptr<HttpServer>> bind(const HttpOptions& options, Handler handler, ErrorResponse error_response,
                                                  AccessLog log);
  ~HttpServer();

  int port() const;
  // Serves until stop(); returns once every connection has closed and every handler returned.
  void run();
  // From any thread: stops accepting, closes idle connections, lets the responses in
  // progress finish (then closes their connections). Connections still open after `grace`
  // are closed.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace og::http
