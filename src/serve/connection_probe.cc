#include "serve/connection_probe.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>

namespace og::serve {
namespace {

// The numeric address and port of a socket address (IPv4 or IPv6), as httplib reports them.
bool address_of(const sockaddr_storage& a, std::string& addr, int& port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    if (!inet_ntop(AF_INET, &v4.sin_addr, buf, sizeof buf)) return false;
    port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    if (!inet_ntop(AF_INET6, &v6.sin6_addr, buf, sizeof buf)) return false;
    port = ntohs(v6.sin6_port);
  } else {
    return false;
  }
  addr = buf;
  return true;
}

bool endpoint_is(int fd, bool peer, const std::string& addr, int port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if ((peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) : getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len)) != 0)
    return false;
  std::string got;
  int got_port = -1;
  return address_of(a, got, got_port) && got_port == port && got == addr;
}

}  // namespace

std::optional<ConnectionProbe> ConnectionProbe::find(const std::string& local_addr, int local_port,
                                                     const std::string& remote_addr, int remote_port) {
  if (local_port <= 0 || remote_port <= 0) return std::nullopt;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  std::optional<ConnectionProbe> found;
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd < 0 || fd == dirfd(dir)) continue;
    const int f = static_cast<int>(fd);
    if (endpoint_is(f, true, remote_addr, remote_port) && endpoint_is(f, false, local_addr, local_port)) {
      found = ConnectionProbe(f);
      break;
    }
  }
  closedir(dir);
  return found;
}

bool ConnectionProbe::peer_closed() const {
  char byte;
  const ssize_t n = recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return false;
  if (n == 0) return true;  // orderly shutdown by the peer
  return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

}  // namespace og::serve
