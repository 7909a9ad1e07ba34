// Internal to src/http: one client connection, from accept to close. It reads requests
// with Beast's parser (fed from our own buffer, so bytes past a request stay for the next
// one), hands each complete request to a worker, keeps reading while the handler runs (to
// keep pipelined bytes and to see the client leave), writes what the handler answers in
// order, and then either closes or parses the next request.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "http/server_core.h"

namespace og::http {

class ConnectionExchange;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(HttpServer::Impl& server, boost::asio::ip::tcp::socket socket);
  void start();
  // The server stops: idle connections close now, a response in progress closes after.
  void server_stopping();
  void close();

 private:
  friend class ConnectionExchange;
  using Clock = std::chrono::steady_clock;
  enum class Phase {
    kIdle,      // waiting for a request's first byte
    kHeader,    // inside the request line and fields
    kBody,      // inside the body
    kHandling,  // a handler has the request, or the transport answers it itself
    kLingering, // response sent, our side shut: draining what the client still sends
    kClosed,
  };
  struct Write {
    std::string bytes;                   // empty: a marker, done runs when it is reached
    std::function<void(bool ok)> done;   // may be null
  };

  void start_request();
  void parse_buffered();
  void on_header_done();
  void dispatch();
  // The transport answers the request itself (malformed, too large, too slow) and closes.
  void refuse(int status, const std::string& message);
  void read_more();
  void on_read_end();
  void arm_deadline(std::chrono::milliseconds d);
  void on_deadline();
  void enqueue(std::string bytes, std::function<void(bool)> done);
  void write_next();
  // Handler side, on the I/O thread (ConnectionExchange posts these).
  void send_whole(Response r, std::function<void(bool)> done);
  void send_stream_head(int status, const std::string& content_type, const Headers& headers, std::function<void(bool)> done);
  void send_piece(std::string piece, std::function<void(bool)> done);
  void send_stream_end(std::function<void(bool)> done);
  void handler_returned();
  void response_complete();
  void linger();
  void log(int status);

  HttpServer::Impl& server_;
  boost::asio::ip::tcp::socket socket_;
  std::string remote_;
  boost::asio::steady_timer deadline_;       // the read phase's (header, body, linger)
  uint64_t deadline_generation_ = 0;         // a firing of an older arming is ignored
  boost::asio::steady_timer write_deadline_;
  uint64_t write_generation_ = 0;
  static constexpr size_t kReadPiece = 16u << 10;
  std::array<char, kReadPiece> read_piece_;  // what one read receives
  boost::beast::flat_buffer buffer_;         // received and not yet parsed
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  Phase phase_ = Phase::kIdle;
  bool reading_ = false, writing_ = false, peer_closed_ = false;
  bool handler_running_ = false;             // a worker runs the handler of the current request
  std::deque<Write> writes_;
  size_t requests_ = 0;
  // The request being answered.
  Clock::time_point started_{};
  std::string method_ = "-", path_ = "-";
  bool keep_alive_ = false, http10_ = false, head_only_ = false;
  bool close_after_ = false;                 // this response ends the connection
  enum class Answer { kNone, kWhole, kStream, kStreamEnded } answer_ = Answer::kNone;
  int status_ = 0;
  std::shared_ptr<ConnectionExchange> exchange_;
};

}  // namespace og::http
