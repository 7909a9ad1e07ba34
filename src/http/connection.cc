#include "http/connection.h"

#include <boost/beast/http/error.hpp>
#include <fmt/format.h>

#include "http/connection_exchange.h"
#include "http/wire_format.h"

namespace og::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {

// Bytes of later requests kept while one is handled; past it the connection stops reading
// until the response is written (and a client that left then is seen at the next write).
constexpr size_t kReadAheadLimit = 1u << 20;
constexpr std::chrono::milliseconds kLinger{2000};

bool expects_continue(const bhttp::request_parser<bhttp::string_body>::value_type& m) {
  const auto it = m.find(bhttp::field::expect);
  return it != m.end() && iequals(std::string_view(it->value().data(), it->value().size()), "100-continue");
}

}  // namespace

Connection::Connection(HttpServer::Impl& server, asio::ip::tcp::socket socket)
    : server_(server), socket_(std::move(socket)), deadline_(server.io), write_deadline_(server.io) {
  boost::system::error_code ec;
  const auto ep = socket_.remote_endpoint(ec);
  if (!ec) remote_ = fmt::format("{}:{}", ep.address().to_string(), ep.port());
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);  // SSE pieces are small and must not wait
}

void Connection::start() {
  if (server_.connections.size() > server_.options.max_connections) {
    refuse(503, fmt::format("the server has {} connections open; retry later", server_.options.max_connections));
    read_more();
    return;
  }
  start_request();
  read_more();
}

void Connection::start_request() {
  parser_.emplace();
  parser_->header_limit(static_cast<uint32_t>(std::min<size_t>(server_.options.max_header_bytes, UINT32_MAX)));
  parser_->body_limit(server_.options.max_body_bytes);
  parser_->eager(true);
  phase_ = Phase::kIdle;
  method_ = path_ = "-";
  answer_ = Answer::kNone;
  status_ = 0;
  close_after_ = false;
  exchange_.reset();
  arm_deadline(server_.options.header_timeout);
  parse_buffered();
}

void Connection::parse_buffered() {
  while ((phase_ == Phase::kIdle || phase_ == Phase::kHeader || phase_ == Phase::kBody) && buffer_.size() > 0) {
    if (phase_ == Phase::kIdle) {
      phase_ = Phase::kHeader;
      started_ = Clock::now();
    }
    beast::error_code ec;
    const size_t n = parser_->put(buffer_.data(), ec);
    buffer_.consume(n);
    if (ec == bhttp::error::need_more) {
      // Beast looks for the end of the fields only in what it is given: bound it here too.
      if (phase_ == Phase::kHeader && buffer_.size() > server_.options.max_header_bytes)
        return refuse(431, fmt::format("the request's header is larger than {} bytes", server_.options.max_header_bytes));
      break;
    }
    if (ec == bhttp::error::body_limit)
      return refuse(413, fmt::format("the request body is larger than {} bytes (--max-body-bytes)", server_.options.max_body_bytes));
    if (ec == bhttp::error::header_limit)
      return refuse(431, fmt::format("the request's header is larger than {} bytes", server_.options.max_header_bytes));
    if (ec) return refuse(400, fmt::format("malformed HTTP request: {}", ec.message()));
    if (phase_ == Phase::kHeader && parser_->is_header_done()) on_header_done();
    if (parser_->is_done()) return dispatch();
    if (n == 0) break;
  }
}

void Connection::on_header_done() {
  phase_ = Phase::kBody;
  const auto& m = parser_->get();
  method_ = std::string(m.method_string());
  path_ = std::string(m.target().substr(0, m.target().find('?')));
  arm_deadline(server_.options.body_timeout);
  // The client waits for this before sending the body; a body over the limit was refused
  // from its Content-Length already (Beast checks it against body_limit with the fields).
  if (!parser_->is_done() && m.version() >= 11 && expects_continue(m)) enqueue("HTTP/1.1 100 Continue\r\n\r\n", nullptr);
}

void Connection::dispatch() {
  phase_ = Phase::kHandling;
  ++deadline_generation_;
  deadline_.cancel();
  auto& m = parser_->get();
  keep_alive_ = m.keep_alive();
  http10_ = m.version() < 11;
  head_only_ = m.method() == bhttp::verb::head;
  Request req;
  req.method = std::string(m.method_string());
  req.target = std::string(m.target());
  req.path = path_;
  for (const auto& f : m) req.headers.add(std::string(f.name_string()), std::string(f.value()));
  req.body = std::move(m.body());
  req.remote = remote_;
  exchange_ = std::make_shared<ConnectionExchange>(shared_from_this());
  handler_running_ = true;
  ++server_.handlers_running;
  server_.pool.post([self = shared_from_this(), ex = exchange_, req = std::move(req)]() {
    try {
      self->server_.handler(req, *ex);
    } catch (...) {
      // Answered as a 500 by handler_returned() when nothing was sent yet.
    }
    asio::post(self->server_.io, [self] { self->handler_returned(); });
  });
  read_more();  // keeps pipelined bytes, and sees the client leave
}

void Connection::refuse(int status, const std::string& message) {
  phase_ = Phase::kHandling;
  ++deadline_generation_;
  deadline_.cancel();
  // Written as a handler's whole response is (the request may not even have a method yet:
  // nothing of the previous one applies), then the connection closes.
  answer_ = Answer::kNone;
  keep_alive_ = http10_ = head_only_ = false;
  Response r = server_.error_response(status, message);
  r.status = status;
  r.close = true;
  send_whole(std::move(r), [](bool) {});
  enqueue("", [self = shared_from_this()](bool) { self->response_complete(); });
}

void Connection::read_more() {
  if (reading_ || phase_ == Phase::kClosed) return;
  if (phase_ == Phase::kHandling && buffer_.size() >= kReadAheadLimit) return;  // resumed by the next request
  reading_ = true;
  // Into a buffer of its own: buffer_ is parsed and consumed while this read is pending.
  socket_.async_read_some(asio::buffer(read_piece_), [self = shared_from_this()](beast::error_code ec, size_t n) {
    self->reading_ = false;
    if (self->phase_ == Phase::kClosed) return;
    if (ec) return self->on_read_end();
    self->buffer_.commit(asio::buffer_copy(self->buffer_.prepare(n), asio::buffer(self->read_piece_.data(), n)));
    if (self->phase_ == Phase::kLingering) {
      self->buffer_.consume(self->buffer_.size());
    } else {
      self->parse_buffered();
    }
    self->read_more();
  });
}

void Connection::on_read_end() {
  peer_closed_ = true;
  switch (phase_) {
    case Phase::kHandling:
      // A handler still works for this client: tell it; the connection closes once the
      // handler returns (writes meanwhile fail fast or go nowhere).
      if (exchange_) exchange_->mark_gone();
      return;
    default:
      // Between requests, inside an unfinished one (nobody is left to answer), or lingering.
      return close();
  }
}

void Connection::arm_deadline(std::chrono::milliseconds d) {
  const uint64_t generation = ++deadline_generation_;
  deadline_.expires_after(d);
  deadline_.async_wait([self = shared_from_this(), generation](beast::error_code ec) {
    if (ec || generation != self->deadline_generation_ || self->phase_ == Phase::kClosed) return;
    self->on_deadline();
  });
}

void Connection::on_deadline() {
  switch (phase_) {
    case Phase::kHeader:
      return refuse(408, fmt::format("the request's header did not arrive within {} ms", server_.options.header_timeout.count()));
    case Phase::kBody:
      return refuse(408, fmt::format("the request body did not arrive within {} ms", server_.options.body_timeout.count()));
    default:
      return close();  // idle keep-alive connection, or the linger after a close
  }
}

void Connection::enqueue(std::string bytes, std::function<void(bool)> done) {
  if (phase_ == Phase::kClosed) {
    if (done) done(false);
    return;
  }
  writes_.push_back({std::move(bytes), std::move(done)});
  write_next();
}

void Connection::write_next() {
  while (!writing_ && !writes_.empty() && writes_.front().bytes.empty()) {
    auto done = std::move(writes_.front().done);
    writes_.pop_front();
    if (done) done(phase_ != Phase::kClosed);
  }
  if (writing_ || writes_.empty()) return;
  if (phase_ == Phase::kClosed) {
    auto pending = std::move(writes_);
    writes_.clear();
    for (auto& w : pending)
      if (w.done) w.done(false);
    return;
  }
  writing_ = true;
  const uint64_t generation = ++write_generation_;
  write_deadline_.expires_after(server_.options.write_timeout);
  write_deadline_.async_wait([self = shared_from_this(), generation](beast::error_code ec) {
    if (!ec && self->writing_ && generation == self->write_generation_) self->close();  // the client stopped reading
  });
  asio::async_write(socket_, asio::buffer(writes_.front().bytes), [self = shared_from_this()](beast::error_code ec, size_t) {
    self->writing_ = false;
    self->write_deadline_.cancel();
    auto done = std::move(self->writes_.front().done);
    self->writes_.pop_front();
    if (done) done(!ec);
    if (ec) self->close();
    self->write_next();
  });
}

void Connection::send_whole(Response r, std::function<void(bool)> done) {
  if (answer_ != Answer::kNone || phase_ != Phase::kHandling) return done(false);
  answer_ = Answer::kWhole;
  status_ = r.status;
  close_after_ = close_after_ || r.close || !keep_alive_ || server_.stopping ||
                 requests_ + 1 >= server_.options.max_requests_per_connection;
  std::string bytes = response_head({.status = r.status, .content_type = r.content_type, .content_length = r.body.size(),
                                     .close = close_after_, .http10_keep_alive = http10_ && !close_after_},
                                    r.headers);
  if (!head_only_) bytes += r.body;
  enqueue(std::move(bytes), std::move(done));
}

void Connection::send_stream_head(int status, const std::string& content_type, const Headers& headers,
                                  std::function<void(bool)> done) {
  if (answer_ != Answer::kNone || phase_ != Phase::kHandling) return done(false);
  answer_ = Answer::kStream;
  status_ = status;
  // An HTTP/1.0 client cannot read chunks: its body ends when the connection does.
  close_after_ = close_after_ || http10_ || !keep_alive_ || server_.stopping ||
                 requests_ + 1 >= server_.options.max_requests_per_connection;
  enqueue(response_head({.status = status, .content_type = content_type, .close = close_after_, .chunked = !http10_}, headers),
          std::move(done));
}

void Connection::send_piece(std::string piece, std::function<void(bool)> done) {
  if (answer_ != Answer::kStream || phase_ != Phase::kHandling) return done(false);
  if (head_only_) return done(true);
  enqueue(http10_ ? std::move(piece) : chunk(piece), std::move(done));
}

void Connection::send_stream_end(std::function<void(bool)> done) {
  if (answer_ != Answer::kStream || phase_ != Phase::kHandling) return done(false);
  answer_ = Answer::kStreamEnded;
  if (http10_ || head_only_) return done(true);
  enqueue(std::string(last_chunk()), std::move(done));
}

void Connection::handler_returned() {
  --server_.handlers_running;
  handler_running_ = false;
  if (exchange_) exchange_->finish();
  if (phase_ == Phase::kClosed || (peer_closed_ && answer_ == Answer::kNone)) {
    // The client left (or the connection failed) before an answer began: nobody to tell.
    log(status_ != 0 ? status_ : 499);
    exchange_.reset();
    close();
  } else if (phase_ == Phase::kHandling) {
    if (answer_ == Answer::kNone) {
      Response r = server_.error_response(500, "the handler sent no response");
      send_whole(std::move(r), [](bool) {});
    } else if (answer_ == Answer::kStream) {
      send_stream_end([](bool) {});
    }
    enqueue("", [self = shared_from_this()](bool) { self->response_complete(); });
  }
  server_.maybe_finish();
}

void Connection::response_complete() {
  log(status_);
  ++requests_;
  if (phase_ == Phase::kClosed) {
    exchange_.reset();  // it holds this connection: the pair would keep each other alive
    return;
  }
  if (close_after_ || peer_closed_ || server_.stopping || requests_ >= server_.options.max_requests_per_connection)
    return linger();
  start_request();
  read_more();
}

void Connection::linger() {
  // Shut our side, then read and discard what the client still sends for a moment: closing
  // with unread bytes would reset the connection and could destroy the response in flight.
  phase_ = Phase::kLingering;
  exchange_.reset();
  beast::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  if (ec || peer_closed_) return close();
  buffer_.consume(buffer_.size());
  arm_deadline(kLinger);
  read_more();
}

void Connection::log(int status) {
  if (!server_.log || status == 0) return;
  AccessRecord r{.method = method_, .path = path_, .status = status};
  r.seconds = started_ == Clock::time_point{} ? 0 : std::chrono::duration<double>(Clock::now() - started_).count();
  if (exchange_) r.detail = exchange_->detail();
  server_.log(r);
}

void Connection::server_stopping() {
  if (phase_ == Phase::kIdle || phase_ == Phase::kHeader || phase_ == Phase::kBody) close();
}

void Connection::close() {
  if (phase_ == Phase::kClosed) return;
  auto self = shared_from_this();
  const bool answering = phase_ == Phase::kHandling;
  phase_ = Phase::kClosed;
  if (answering && exchange_) exchange_->mark_gone();
  beast::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  ++deadline_generation_;
  deadline_.cancel();
  write_deadline_.cancel();
  write_next();  // fails what waits (a write in flight fails by itself)
  // The exchange holds this connection; drop it unless a handler still uses it (then
  // handler_returned() logs the request and drops it).
  if (!handler_running_) exchange_.reset();
  server_.remove(this);
}

}  // namespace og::http
