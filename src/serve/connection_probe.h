// Whether the client of a request still holds its connection, while a non-streamed answer
// is being generated (a streamed one finds out when a write fails).
//
// cpp-httplib 0.11 (Debian 12) hands a handler the request but not its socket; later
// versions add Request::is_connection_closed() for exactly this. The socket is found by
// its addresses instead: the one descriptor of this process whose local and remote address
// and port are the request's. It stays open while the handler runs (the connection's
// thread closes it after the handler returns), so the descriptor cannot be reused meanwhile.
#pragma once

#include <optional>
#include <string>

namespace og::serve {

class ConnectionProbe {
 public:
  // The probe for the TCP connection local_addr:local_port <- remote_addr:remote_port, or
  // nothing when no such socket is open here.
  static std::optional<ConnectionProbe> find(const std::string& local_addr, int local_port, const std::string& remote_addr,
                                             int remote_port);

  // True once the peer has closed (or reset) the connection: a non-blocking peek reads end
  // of stream or fails. Bytes waiting to be read (a pipelined request) count as alive.
  bool peer_closed() const;

  int fd() const { return fd_; }

 private:
  explicit ConnectionProbe(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace og::serve
