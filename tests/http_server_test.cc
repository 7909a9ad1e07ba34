// The HTTP transport (src/http) in process, over raw loopback sockets: chunked request
// bodies (valid, malformed, too large once decoded), keep-alive and pipelining, slow
// clients (headers and bodies), clients that leave while their request is handled
// (streamed and not), Expect: 100-continue, HTTP/1.0, and stop(). Timeouts are set short
// so every case ends within about a second.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "http/http_server.h"
#include "serve_support.h"

namespace og {
namespace {

using namespace og::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// What the handlers saw, for the tests to wait on.
struct Seen {
  std::mutex mu;
  std::condition_variable cv;
  int gone_callbacks = 0;
  int failed_writes = 0;
  int handled = 0;
  Clock::time_point gone_at{};

  template <typename Pred>
  bool wait(Pred pred, std::chrono::milliseconds bound = 3000ms) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, bound, pred);
  }
};

class HttpServerTest : public ::testing::Test {
 protected:
  void start(http::HttpOptions o = {}) {
    o.host = "127.0.0.1";
    o.port = 0;
    if (o.max_body_bytes == (8u << 20)) o.max_body_bytes = 1024;
    auto s = http::HttpServer::bind(
        o, [this](const http::Request& req, http::Exchange& ex) { handle(req, ex); },
        [](int status, const std::string& message) {
          return http::Response{.status = status, .body = "{\"error\":\"" + message + "\"}", .close = true};
        },
        [this](const http::AccessRecord& r) {
          std::lock_guard lock(log_mu_);
          log_.push_back(r);
        });
    ASSERT_TRUE(s.is_ok()) << s.status().message();
    server_ = std::move(*s);
    runner_ = std::thread([this] { server_->run(); });
  }
  void TearDown() override {
    if (server_) {
      server_->stop(500ms);
      runner_.join();
    }
  }
  int port() const { return server_->port(); }

  void handle(const http::Request& req, http::Exchange& ex) {
    {
      std::lock_guard lock(seen_.mu);
      ++seen_.handled;
      seen_.cv.notify_all();
    }
    if (req.path == "/echo") {
      http::Response r{.status = 200, .content_type = "text/plain", .body = req.body};
      r.headers.add("X-Method", req.method);
      ex.respond(std::move(r));
    } else if (req.path == "/stream") {
      // /stream?n=K: K pieces "piece i\n" 10 ms apart.
      const int n = std::stoi(req.target.substr(req.target.find("n=") + 2));
      ex.begin_stream(200, "text/plain");
      for (int i = 0; i < n; ++i) {
        std::this_thread::sleep_for(10ms);
        ex.write("piece " + std::to_string(i) + "\n");
      }
      ex.end_stream();
    } else if (req.path == "/hold" || req.path == "/endless") {
      // Waits (bounded) for the client to leave; /endless streams meanwhile.
      ex.on_client_gone([this] {
        std::lock_guard lock(seen_.mu);
        ++seen_.gone_callbacks;
        seen_.gone_at = Clock::now();
        seen_.cv.notify_all();
      });
      const bool stream = req.path == "/endless";
      if (stream) ex.begin_stream(200, "text/plain");
      const auto until = Clock::now() + 5s;
      while (!ex.client_gone() && Clock::now() < until) {
        if (stream && !ex.write("tick\n")) {
          std::lock_guard lock(seen_.mu);
          ++seen_.failed_writes;
          seen_.cv.notify_all();
          break;
        }
        std::this_thread::sleep_for(10ms);
      }
      if (!stream) ex.respond({.status = 200, .body = "held"});
    } else {
      ex.respond({.status = 404, .body = "nothing"});
    }
  }

  std::unique_ptr<http::HttpServer> server_;
  std::thread runner_;
  Seen seen_;
  std::mutex log_mu_;
  std::vector<http::AccessRecord> log_;
};

std::string post_echo(const std::string& body, const std::string& extra = "") {
  return "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra + "\r\n" + body;
}

TEST_F(HttpServerTest, ChunkedBodiesAreDecodedWithExtensionsAndTrailers) {
  start();
  RawConnection c(port());
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "5\r\nhello\r\n6;note=x\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n"));
  const std::string r = c.read_until("hello world");
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Length: 11\r\n"), std::string::npos) << r;
  // The connection stays open for the next request.
  ASSERT_TRUE(c.send(post_echo("again")));
  EXPECT_NE(c.read_until("again").find("again"), std::string::npos);
}

TEST_F(HttpServerTest, MalformedChunkStreamGets400AndTheConnectionCloses) {
  start();
  for (const std::string bad : {"zz\r\nhello\r\n0\r\n\r\n", "5\r\nhelloXX0\r\n\r\n", "-1\r\n"}) {
    RawConnection c(port());
    ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" + bad));
    EXPECT_TRUE(c.wait_closed(2000ms)) << bad;
    EXPECT_EQ(c.received().rfind("HTTP/1.1 400", 0), 0u) << bad << " → " << c.received();
    EXPECT_NE(c.received().find("Connection: close"), std::string::npos);
  }
  EXPECT_EQ(seen_.handled, 0);
}

TEST_F(HttpServerTest, ChunkedBodyPastTheLimitOnceDecodedGets413) {
  start();  // max_body_bytes 1024
  RawConnection c(port());
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"));
  const std::string piece(300, 'x');
  for (int i = 0; i < 4; ++i) c.send("12c\r\n" + piece + "\r\n");  // 1200 bytes in all
  EXPECT_TRUE(c.wait_closed(2000ms));
  EXPECT_EQ(c.received().rfind("HTTP/1.1 413", 0), 0u) << c.received();
  // Exactly the limit is fine.
  RawConnection ok(port());
  ASSERT_TRUE(ok.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + std::string(1024, 'y') +
                      "\r\n0\r\n\r\n"));
  EXPECT_EQ(ok.read_until(std::string(1024, 'y')).rfind("HTTP/1.1 200", 0), 0u);
}

TEST_F(HttpServerTest, DeclaredBodyPastTheLimitIsRefusedFromItsHeader) {
  start();
  RawConnection c(port());
  const auto t0 = Clock::now();
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10000000000\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_TRUE(c.wait_closed(2000ms));
  EXPECT_LT(Clock::now() - t0, 1500ms);
  EXPECT_EQ(c.received().rfind("HTTP/1.1 413", 0), 0u) << c.received();
  EXPECT_EQ(c.received().find("100 Continue"), std::string::npos);
}

TEST_F(HttpServerTest, ExpectContinueIsAnsweredThenTheBodyRead) {
  start();
  RawConnection c(port());
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_NE(c.read_until("\r\n\r\n").find("HTTP/1.1 100 Continue\r\n\r\n"), std::string::npos);
  ASSERT_TRUE(c.send("hello"));
  EXPECT_NE(c.read_until("hello").find("HTTP/1.1 200"), std::string::npos);
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrderOnOneConnection) {
  start();
  RawConnection c(port());
  // Three requests in one write, the middle one streamed and slow.
  ASSERT_TRUE(c.send(post_echo("first") + "GET /stream?n=3 HTTP/1.1\r\nHost: t\r\n\r\n" + post_echo("third-body")));
  const std::string r = c.read_until("third-body");
  const size_t a = r.find("first"), b0 = r.find("piece 0"), b2 = r.find("piece 2"), end = r.find("0\r\n\r\n"),
               c3 = r.find("third-body");
  ASSERT_NE(a, std::string::npos) << r;
  ASSERT_NE(b2, std::string::npos) << r;
  ASSERT_NE(c3, std::string::npos) << r;
  EXPECT_LT(a, b0);
  EXPECT_LT(b2, end);
  EXPECT_LT(end, c3);
  EXPECT_EQ(c.count("HTTP/1.1 200"), 3u) << r;
  // And the connection is still usable.
  ASSERT_TRUE(c.send(post_echo("fourth")));
  EXPECT_NE(c.read_until("fourth").find("fourth"), std::string::npos) << c.received();
}

TEST_F(HttpServerTest, PipelinedRequestSplitAcrossWritesIsKept) {
  start();
  RawConnection c(port());
  const std::string two = post_echo("one") + post_echo("two");
  ASSERT_TRUE(c.send(two.substr(0, two.size() - 5)));  // the second request's body cut
  std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(c.send(two.substr(two.size() - 5)));
  EXPECT_NE(c.read_until("two").find("two"), std::string::npos) << c.received();
  EXPECT_EQ(c.count("HTTP/1.1 200"), 2u);
}

TEST_F(HttpServerTest, HeadersTricklingPastTheHeaderTimeoutGet408) {
  start({.header_timeout = 300ms});
  RawConnection c(port());
  const auto t0 = Clock::now();
  const std::string req = "GET /echo HTTP/1.1\r\nHost: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
  bool closed = false;
  for (char ch : req) {  // a byte every 20 ms: each byte arrives well inside any idle timeout
    if (!c.send(std::string(1, ch))) break;
    if (c.wait_closed(20ms)) {
      closed = true;
      break;
    }
  }
  closed = closed || c.wait_closed(1000ms);
  EXPECT_TRUE(closed);
  EXPECT_LT(Clock::now() - t0, 1500ms);
  EXPECT_EQ(c.received().rfind("HTTP/1.1 408", 0), 0u) << c.received();
  EXPECT_EQ(seen_.handled, 0);
}

TEST_F(HttpServerTest, BodyTricklingPastTheBodyTimeoutGets408) {
  start({.header_timeout = 2000ms, .body_timeout = 300ms});
  RawConnection c(port());
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nabc"));
  EXPECT_TRUE(c.wait_closed(1500ms));
  EXPECT_EQ(c.received().rfind("HTTP/1.1 408", 0), 0u) << c.received();
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionClosesAfterTheHeaderTimeout) {
  start({.header_timeout = 300ms});
  RawConnection c(port());
  ASSERT_TRUE(c.send(post_echo("x")));
  c.read_until("\r\n\r\nx");
  EXPECT_TRUE(c.wait_closed(1500ms));
  EXPECT_EQ(c.count("HTTP/1.1"), 1u) << c.received();  // closed without a 408
}

TEST_F(HttpServerTest, HeaderPastTheLimitGets431) {
  start({.max_header_bytes = 2048});
  RawConnection c(port());
  ASSERT_TRUE(c.send("GET /echo HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(4096, 'b') + "\r\n\r\n"));
  EXPECT_TRUE(c.wait_closed(2000ms));
  EXPECT_EQ(c.received().rfind("HTTP/1.1 431", 0), 0u) << c.received().substr(0, 200);
}

TEST_F(HttpServerTest, ClientLeavingAWholeResponseIsNoticedAtOnce) {
  start();
  {
    RawConnection c(port());
    ASSERT_TRUE(c.send("GET /hold HTTP/1.1\r\nHost: t\r\n\r\n"));
    ASSERT_TRUE(seen_.wait([&] { return seen_.handled == 1; }));
    std::this_thread::sleep_for(50ms);
    const auto closed_at = Clock::now();
    c.close();
    ASSERT_TRUE(seen_.wait([&] { return seen_.gone_callbacks == 1; }, 2000ms));
    EXPECT_LT(seen_.gone_at - closed_at, 500ms);
  }
  // The server still answers, and logs the abandoned request as 499 (once its handler returns).
  RawConnection d(port());
  ASSERT_TRUE(d.send(post_echo("still")));
  EXPECT_NE(d.read_until("still").find("HTTP/1.1 200"), std::string::npos);
  auto logged_499 = [&] {
    std::lock_guard lock(log_mu_);
    for (const auto& r : log_)
      if (r.path == "/hold" && r.status == 499) return true;
    return false;
  };
  const auto until = Clock::now() + 2s;
  while (!logged_499() && Clock::now() < until) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(logged_499());
}

TEST_F(HttpServerTest, ClientLeavingAStreamIsNoticedAtOnce) {
  start();
  RawConnection c(port());
  ASSERT_TRUE(c.send("GET /endless HTTP/1.1\r\nHost: t\r\n\r\n"));
  c.read_until("tick\n");
  c.close();
  ASSERT_TRUE(seen_.wait([&] { return seen_.gone_callbacks == 1 || seen_.failed_writes == 1; }, 2000ms));
}

TEST_F(HttpServerTest, Http10ClientsGetAStreamThatEndsWithTheConnection) {
  start();
  RawConnection c(port());
  ASSERT_TRUE(c.send("GET /stream?n=2 HTTP/1.0\r\n\r\n"));
  EXPECT_TRUE(c.wait_closed(2000ms));
  const std::string& r = c.received();
  EXPECT_EQ(r.rfind("HTTP/1.1 200", 0), 0u) << r;
  EXPECT_EQ(r.find("chunked"), std::string::npos) << r;
  EXPECT_NE(r.find("\r\n\r\npiece 0\npiece 1\n"), std::string::npos) << r;
}

TEST_F(HttpServerTest, StopClosesIdleConnectionsAndRunReturns) {
  start();
  RawConnection idle(port());
  ASSERT_TRUE(idle.send(post_echo("x")));
  idle.read_until("\r\n\r\nx");
  const auto t0 = Clock::now();
  server_->stop(500ms);
  runner_.join();
  EXPECT_LT(Clock::now() - t0, 1000ms);
  EXPECT_TRUE(idle.wait_closed(500ms));
  server_.reset();
}

}  // namespace
}  // namespace og
