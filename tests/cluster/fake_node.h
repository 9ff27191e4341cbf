// FakeNode: a scripted stand-in for one Redis node on 127.0.0.1, for
// tests of the cluster client's error paths that a real cluster cannot
// produce on demand (a reply that never comes, a connection closed
// mid-pipeline, MOVED forever, a node that refuses connections).
//
// It speaks just enough RESP: it parses each command (an array of bulk
// strings), answers AUTH, CLIENT SETNAME and READONLY with +OK itself, and
// hands every other command to the test's handler, which returns the raw
// RESP to send back, or FakeNode::kClose to close the connection without
// answering.
//
// Ownership: owns its listening socket and its threads (one accepting, one
// per connection), stopped and joined by the destructor. Thread safety:
// the handler runs on the connection threads, possibly several at once;
// calls() may be read from any thread.

#ifndef TALLY_TESTS_CLUSTER_FAKE_NODE_H_
#define TALLY_TESTS_CLUSTER_FAKE_NODE_H_

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cassert>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace tally::cluster::test {

class FakeNode {
 public:
  using Handler = std::function<std::string(const std::vector<std::string>&)>;
  static constexpr const char* kClose = "\x01close";

  explicit FakeNode(Handler handler) : handler_(std::move(handler)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    assert(listen_fd_ >= 0);
    int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;  // an ephemeral port
    [[maybe_unused]] int rc =
        bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    assert(rc == 0);
    rc = listen(listen_fd_, 64);
    assert(rc == 0);
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }

  ~FakeNode() {
    stop_ = true;
    acceptor_.join();
    std::vector<std::thread> threads;
    {
      MutexLock lock(&mu_);
      threads.swap(threads_);
    }
    for (std::thread& t : threads) t.join();
    close(listen_fd_);
  }

  int port() const { return port_; }
  // Commands given to the handler so far.
  int calls() const { return calls_.load(); }
  // Connections accepted so far.
  int connections() const { return connections_.load(); }

  // A port on 127.0.0.1 that refuses connections (bound, then closed).
  static int DeadPort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    close(fd);
    return ntohs(addr.sin_port);
  }

  // RESP helpers for handlers.
  static std::string Bulk(const std::string& s) {
    return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
  }
  static std::string Int(long long v) {
    return ":" + std::to_string(v) + "\r\n";
  }
  // CLUSTER SLOTS: every slot on one master at 127.0.0.1:`port`.
  static std::string AllSlotsOn(int port) {
    return "*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n" + Bulk("127.0.0.1") +
           Int(port) + Bulk("fake-node-id");
  }

 private:
  void Accept() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      ++connections_;
      MutexLock lock(&mu_);
      threads_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  // Parses one command from the front of `in`; false when incomplete.
  static bool Parse(std::string* in, std::vector<std::string>* args) {
    args->clear();
    size_t pos = 0;
    auto line = [&](std::string* out) {
      const size_t end = in->find("\r\n", pos);
      if (end == std::string::npos) return false;
      *out = in->substr(pos, end - pos);
      pos = end + 2;
      return true;
    };
    std::string header;
    if (!line(&header)) return false;
    assert(!header.empty() && header[0] == '*');
    const long n = std::atol(header.c_str() + 1);
    for (long i = 0; i < n; ++i) {
      std::string len;
      if (!line(&len)) return false;
      const size_t size = std::atol(len.c_str() + 1);
      if (in->size() < pos + size + 2) return false;
      args->push_back(in->substr(pos, size));
      pos += size + 2;
    }
    in->erase(0, pos);
    return true;
  }

  void Serve(int fd) {
    std::string in;
    std::vector<std::string> args;
    char buf[4096];
    while (!stop_) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const ssize_t n = read(fd, buf, sizeof(buf));
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
      std::string out;
      bool closing = false;
      while (!closing && Parse(&in, &args)) {
        if (args[0] == "AUTH" || args[0] == "READONLY" ||
            (args[0] == "CLIENT" && args.size() > 1 && args[1] == "SETNAME")) {
          out += "+OK\r\n";
          continue;
        }
        ++calls_;
        const std::string reply = handler_(args);
        if (reply == kClose) {
          closing = true;
        } else {
          out += reply;
        }
      }
      if (!out.empty()) {
        [[maybe_unused]] ssize_t w =
            send(fd, out.data(), out.size(), MSG_NOSIGNAL);
      }
      if (closing) break;
    }
    close(fd);
  }

  const Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> calls_{0};
  std::atomic<int> connections_{0};
  std::thread acceptor_;
  Mutex mu_;
  std::vector<std::thread> threads_ TALLY_GUARDED_BY(mu_);
};

}  // namespace tally::cluster::test

#endif  // TALLY_TESTS_CLUSTER_FAKE_NODE_H_
