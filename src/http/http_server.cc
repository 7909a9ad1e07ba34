#include "http/http_server.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "http/connection.h"
#include "http/server_core.h"

namespace og::http {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

void HttpServer::Impl::accept() {
  acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (!acceptor.is_open() || stopping) return;
    if (ec) {
      // Out of descriptors and the like: try again shortly rather than spin.
      accept_retry.expires_after(std::chrono::milliseconds(50));
      accept_retry.async_wait([this](boost::system::error_code e) {
        if (!e) accept();
      });
      return;
    }
    auto c = std::make_shared<Connection>(*this, std::move(socket));
    connections.emplace(c.get(), c);
    c->start();
    accept();
  });
}

void HttpServer::Impl::remove(Connection* c) {
  connections.erase(c);
  maybe_finish();
}

void HttpServer::Impl::maybe_finish() {
  if (!stopping || !connections.empty() || handlers_running > 0) return;
  grace.cancel();
  work.reset();
}

void HttpServer::Impl::begin_stop(std::chrono::milliseconds grace_period) {
  if (stopping) return;
  stopping = true;
  boost::system::error_code ec;
  acceptor.close(ec);
  accept_retry.cancel();
  // Closing may erase from the map: walk a copy.
  std::vector<std::shared_ptr<Connection>> open;
  for (const auto& [p, c] : connections) open.push_back(c);
  for (const auto& c : open) c->server_stopping();
  grace.expires_after(grace_period);
  grace.async_wait([this](boost::system::error_code e) {
    if (e) return;
    std::vector<std::shared_ptr<Connection>> left;
    for (const auto& [p, c] : connections) left.push_back(c);
    for (const auto& c : left) c->close();
  });
  maybe_finish();
}

Result<std::unique_ptr<HttpServer>> HttpServer::bind(const HttpOptions& o, Handler handler, ErrorResponse error_response,
                                                     AccessLog log) {
  if (o.handler_threads < 1) return usage_error("the HTTP server needs at least one handler thread");
  if (!error_response) return usage_error("the HTTP server needs an error response");
  auto impl = std::make_unique<Impl>(o, std::move(handler), std::move(error_response), std::move(log));
  boost::system::error_code ec;
  tcp::resolver resolver(impl->io);
  const auto found = resolver.resolve(o.host, std::to_string(o.port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || found.empty()) return resource_error("cannot listen on {}:{}: {}", o.host, o.port, ec ? ec.message() : "no address");
  const tcp::endpoint endpoint = found.begin()->endpoint();
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return resource_error("cannot listen on {}:{} ({}; in use, or not an address of this machine)", o.host, o.port, ec.message());
  impl->port = impl->acceptor.local_endpoint().port();
  impl->accept();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  // Connections hold callbacks into the pool and the io_context: end those first.
  impl_->io.stop();
  impl_->pool.join();
  impl_->connections.clear();
}

int HttpServer::port() const { return impl_->port; }

void HttpServer::run() {
  impl_->io.run();
  impl_->pool.join();
}

void HttpServer::stop(std::chrono::milliseconds grace) {
  asio::post(impl_->io, [impl = impl_.get(), grace] { impl->begin_stop(grace); });
}

}  // namespace og::http
