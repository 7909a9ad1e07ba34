// Internal to src/http: the Exchange a handler gets for one request on a Connection. Each
// call posts its work to the I/O thread (which alone touches the connection) and, where it
// reports success, waits for the write to finish; client_gone() and the callback come from
// the connection's reads.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>

#include <boost/asio/post.hpp>

#include "http/connection.h"
#include "http/exchange.h"

namespace og::http {

class ConnectionExchange : public Exchange, public std::enable_shared_from_this<ConnectionExchange> {
 public:
  explicit ConnectionExchange(std::shared_ptr<Connection> c) : conn_(std::move(c)) {}

  bool respond(Response r) override {
    return call([r = std::move(r)](Connection& c, std::function<void(bool)> done) mutable {
      c.send_whole(std::move(r), std::move(done));
    });
  }
  bool begin_stream(int status, std::string content_type, Headers headers) override {
    return call([status, ct = std::move(content_type), h = std::move(headers)](Connection& c, std::function<void(bool)> done) {
      c.send_stream_head(status, ct, h, std::move(done));
    });
  }
  bool write(std::string piece) override {
    if (piece.empty()) return !client_gone();
    return call([p = std::move(piece)](Connection& c, std::function<void(bool)> done) mutable {
      c.send_piece(std::move(p), std::move(done));
    });
  }
  void end_stream() override {
    call([](Connection& c, std::function<void(bool)> done) { c.send_stream_end(std::move(done)); });
  }
  bool client_gone() const override { return gone_.load(); }
  void on_client_gone(std::function<void()> fn) override {
    boost::asio::post(conn_->server_.io, [self = shared_from_this(), fn = std::move(fn)]() mutable {
      if (self->finished_) return;
      if (self->gone_.load()) {
        fn();
      } else {
        self->on_gone_ = std::move(fn);
      }
    });
  }
  void log_detail(std::string words) override {
    std::lock_guard lock(mu_);
    if (!detail_.empty()) detail_ += ' ';
    detail_ += words;
  }

  // I/O thread.
  void mark_gone() {
    if (gone_.exchange(true)) return;
    if (on_gone_) {
      auto fn = std::move(on_gone_);
      on_gone_ = nullptr;
      fn();
    }
  }
  // The handler returned: its callback may hold what it used; drop it.
  void finish() {
    finished_ = true;
    on_gone_ = nullptr;
  }
  std::string detail() {
    std::lock_guard lock(mu_);
    return detail_;
  }

 private:
  template <typename F>
  bool call(F&& f) {
    if (gone_.load()) return false;
    auto done = std::make_shared<std::promise<bool>>();
    auto result = done->get_future();
    boost::asio::post(conn_->server_.io, [c = conn_, f = std::forward<F>(f), done]() mutable {
      f(*c, [done](bool ok) { done->set_value(ok); });
    });
    return result.get();
  }

  std::shared_ptr<Connection> conn_;
  std::atomic<bool> gone_{false};
  std::function<void()> on_gone_;  // I/O thread
  bool finished_ = false;          // I/O thread
  std::mutex mu_;
  std::string detail_;
};

}  // namespace og::http
