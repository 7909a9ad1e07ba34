// Support for tests of `offgraph serve`: the server runs as a child process on a free
// loopback port (--port 0; the port is read from its "listening on" line) and is always
// stopped by the test (SIGTERM, then SIGKILL after a bound), or killed with the test
// process, so none outlives it.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include "test_util.h"

namespace og::testing {

class ServerProcess {
 public:
  // `args` follow `offgraph serve` (shell-quoted); --port 0 and --host 127.0.0.1 are added.
  explicit ServerProcess(const std::string& args) {
    log_ = dir_.file("serve.log");
    pid_ = ::fork();
    if (pid_ == 0) {
      // Dies with the test process even when that one cannot stop it: a sanitizer that
      // aborts the test runs no destructor, and the server would otherwise live on.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const std::string cmd = "exec " + std::string(OG_BINARY) + " serve --host 127.0.0.1 --port 0 " + args + " >" + log_ + " 2>&1";
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      std::smatch m;
      const std::string text = log();
      if (std::regex_search(text, m, listening)) {
        port_ = std::stoi(m[1]);
        return;
      }
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {  // died while starting
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~ServerProcess() { stop(); }

  int port() const { return port_; }
  std::string log() const { return read_file(log_); }
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // SIGTERM; the exit code (128 + signal if killed after `bound`).
  int stop(std::chrono::seconds bound = std::chrono::seconds(20)) {
    if (pid_ <= 0) return exit_code_;
    ::kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + bound;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code_;
  }

 private:
  TempDir dir_;
  std::string log_;
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_code_ = -1;
};

// A raw loopback TCP connection (for requests a well-behaved client would not send, and
// for dropping a connection mid-stream).
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) close();
    timeval tv{.tv_sec = 30, .tv_usec = 0};
    if (fd_ >= 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~RawConnection() { close(); }
  bool ok() const { return fd_ >= 0; }
  bool send(const std::string& s) { return fd_ >= 0 && ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size()); }
  // Reads until `needle` appears in what was read (or EOF / timeout); returns all read so far.
  std::string read_until(const std::string& needle) {
    char buf[4096];
    while (fd_ >= 0 && received_.find(needle) == std::string::npos) {
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) break;
      received_.append(buf, static_cast<size_t>(n));
    }
    return received_;
  }
  // Reads until the peer closes (true) or `bound` passes (false); what was read is kept.
  bool wait_closed(std::chrono::milliseconds bound) {
    const auto until = std::chrono::steady_clock::now() + bound;
    char buf[4096];
    while (fd_ >= 0 && std::chrono::steady_clock::now() < until) {
      timeval tv{.tv_sec = 0, .tv_usec = 50 * 1000};
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return true;
      if (n > 0) received_.append(buf, static_cast<size_t>(n));
    }
    timeval tv{.tv_sec = 30, .tv_usec = 0};
    if (fd_ >= 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return false;
  }
  // Counts the occurrences of `needle` in what was read so far.
  size_t count(const std::string& needle) const {
    size_t n = 0;
    for (size_t at = received_.find(needle); at != std::string::npos; at = received_.find(needle, at + needle.size())) ++n;
    return n;
  }
  const std::string& received() const { return received_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  std::string received_;
};

}  // namespace og::testing
