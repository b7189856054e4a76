// The loopback HTTP server behind `coil inspect`: accept loop, worker pool, deadlines.
#include "tools/coil/inspect_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"

namespace coil::cli {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// Closes a file descriptor when it goes out of scope.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;

 private:
  int fd_;
};

// Milliseconds left until `deadline` for poll(), at least 0.
int MillisUntil(absl::Time deadline) {
  int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
  return ms < 0 ? 0 : static_cast<int>(std::min<int64_t>(ms, 1 << 30));
}

// Waits until `fd` is ready for `events` or the deadline passes; false on timeout or error.
bool WaitFor(int fd, short events, absl::Time deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int r = poll(&p, 1, MillisUntil(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

enum class SendResult { kSent, kTimedOut, kClientGone };

// Sends all of `bytes` on a non-blocking socket, resuming after partial writes.
SendResult SendAll(int fd, const std::string& bytes, absl::Time deadline) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFor(fd, POLLOUT, deadline)) return SendResult::kTimedOut;
    } else {
      return SendResult::kClientGone;  // EPIPE, ECONNRESET, ...
    }
  }
  return SendResult::kSent;
}

// After the response: half-close, then read until the client closes (briefly), so that
// unread request bytes do not turn the close into a reset that loses the response.
void LingeringClose(int fd) {
  shutdown(fd, SHUT_WR);
  absl::Time deadline = absl::Now() + absl::Milliseconds(200);
  char sink[4096];
  while (WaitFor(fd, POLLIN, deadline)) {
    ssize_t n = recv(fd, sink, sizeof sink, 0);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) break;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Listen(const Options& options,
                                                                Handler handler) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port ", options.port, " is out of range (0..65535; 0 picks a free port)"));
  }
  COIL_CHECK(options.threads >= 1 && options.max_pending >= 1 && options.max_waiting >= 1);
  std::string address = absl::StrCat("127.0.0.1:", options.port);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot create a socket: ", ErrnoText(errno)));
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // restart after TIME_WAIT
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(options.port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    close(fd);
    if (err == EADDRINUSE) {
      return absl::UnavailableError(absl::StrCat(
          address, " is already in use: pick another --port (--port 0 picks a free one)"));
    }
    if (err == EACCES) {
      return absl::PermissionDeniedError(absl::StrCat(
          "no permission to listen on ", address, " (ports below 1024 need privileges)"));
    }
    return absl::UnavailableError(absl::StrCat("cannot bind ", address, ": ", ErrnoText(err)));
  }
  if (listen(fd, 64) != 0) {
    int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot listen on ", address, ": ", ErrnoText(err)));
  }
  socklen_t len = sizeof addr;
  COIL_CHECK(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) << ErrnoText(errno);
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    int err = errno;
    close(fd);
    return absl::InternalError(absl::StrCat("cannot create a pipe: ", ErrnoText(err)));
  }
  return std::unique_ptr<HttpServer>(
      new HttpServer(options, std::move(handler), fd, ntohs(addr.sin_port), wake[0], wake[1]));
}

HttpServer::HttpServer(const Options& options, Handler handler, int listen_fd, int port,
                       int wake_read, int wake_write)
    : options_(options),
      handler_(std::move(handler)),
      listen_fd_(listen_fd),
      port_(port),
      wake_read_(wake_read),
      wake_write_(wake_write) {
  for (int i = 0; i < options_.threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

HttpServer::~HttpServer() {
  Stop();
  for (std::thread& t : workers_) t.join();
  for (const Connection& c : pending_) close(c.fd);  // workers have exited: no lock needed
  close(listen_fd_);
  close(wake_read_);
  close(wake_write_);
}

void HttpServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  work_.notify_all();
  char byte = 1;
  while (write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
  }
}

void HttpServer::Serve() {
  // Accepted connections with nothing to read yet, oldest first; polled here, not by workers.
  std::vector<Connection> waiting;
  std::vector<pollfd> fds;
  while (true) {
    fds.assign({{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}});
    absl::Time next_deadline = absl::InfiniteFuture();
    for (const Connection& c : waiting) {
      fds.push_back({c.fd, POLLIN, 0});
      next_deadline = std::min(next_deadline, c.read_deadline);
    }
    int timeout = next_deadline == absl::InfiniteFuture() ? -1 : MillisUntil(next_deadline);
    int r = poll(fds.data(), fds.size(), timeout);
    if (r < 0) {
      if (errno == EINTR) continue;
      Log(absl::StrCat("poll failed: ", ErrnoText(errno)));
      break;
    }
    if (fds[1].revents != 0) break;  // Stop()
    // Readable (or closed) connections go to the workers; idle past the deadline are closed.
    absl::Time now = absl::Now();
    std::vector<Connection> still_waiting;
    for (size_t i = 0; i < waiting.size(); ++i) {
      if (fds[i + 2].revents != 0) {
        Dispatch(waiting[i]);
      } else if (now >= waiting[i].read_deadline) {
        close(waiting[i].fd);
      } else {
        still_waiting.push_back(waiting[i]);
      }
    }
    waiting.swap(still_waiting);
    if (fds[0].revents == 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      int err = errno;
      if (err == EINTR || err == EAGAIN || err == ECONNABORTED) continue;
      // Out of file descriptors or memory: say so and back off instead of spinning.
      Log(absl::StrCat("accept failed: ", ErrnoText(err)));
      poll(nullptr, 0, 100);
      continue;
    }
    if (static_cast<int>(waiting.size()) >= options_.max_waiting) {
      close(waiting.front().fd);  // the oldest idle connection makes room
      waiting.erase(waiting.begin());
    }
    waiting.push_back({fd, absl::Now() + options_.read_deadline});
  }
  for (const Connection& c : waiting) close(c.fd);
}

void HttpServer::Dispatch(Connection connection) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<int>(pending_.size()) < options_.max_pending) {
      pending_.push_back(connection);
      work_.notify_one();
      return;
    }
  }
  std::string busy = http::SerializeResponse(
      http::TextResponse(503, "coil inspect is busy: too many connections; retry"));
  SendAll(connection.fd, busy, absl::Now() + absl::Milliseconds(100));
  close(connection.fd);
  Log("refused a connection: too many pending -> 503");
}

void HttpServer::WorkerLoop() {
  while (true) {
    Connection connection;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (stopping_) return;
      connection = pending_.front();
      pending_.pop_front();
    }
    HandleConnection(connection);
  }
}

bool HttpServer::IsOwnHost(const std::string& host) const {
  std::string h = absl::AsciiStrToLower(host);
  std::string port_suffix = absl::StrCat(":", port_);
  if (h.size() > port_suffix.size() && h.compare(h.size() - port_suffix.size(),
                                                  port_suffix.size(), port_suffix) == 0) {
    h.resize(h.size() - port_suffix.size());
  } else if (port_ != 80) {
    return false;
  }
  return h == "127.0.0.1" || h == "localhost";
}

void HttpServer::HandleConnection(Connection connection) {
  const int fd = connection.fd;
  FdCloser closer(fd);
  const absl::Time read_deadline = connection.read_deadline;
  std::string head;
  size_t head_end;
  char chunk[4096];
  std::optional<http::Response> timed_out;
  while ((head_end = http::FindHeadEnd(head)) == std::string::npos) {
    if (head.size() > options_.max_head_bytes) break;
    if (!WaitFor(fd, POLLIN, read_deadline)) {
      if (head.empty()) return;  // an idle (speculative) connection: close it quietly
      timed_out = http::TextResponse(408, "request head not received in time");
      break;
    }
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n == 0) {
      if (!head.empty()) Log("client closed the connection mid-request");
      return;
    }
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      Log(absl::StrCat("read failed: ", ErrnoText(errno)));
      return;
    }
    head.append(chunk, static_cast<size_t>(n));
  }
  http::Response response;
  std::string what;  // the request line or what went wrong, for the log
  if (timed_out) {
    response = *timed_out;
    what = "incomplete request";
  } else if (head_end == std::string::npos || head_end > options_.max_head_bytes) {
    response = http::TextResponse(
        431, absl::StrCat("request head larger than ", options_.max_head_bytes, " bytes"));
    what = "oversized request";
  } else {
    absl::StatusOr<http::Request> request =
        http::ParseRequestHead(absl::string_view(head).substr(0, head_end));
    if (!request.ok()) {
      int status = absl::IsUnimplemented(request.status()) ? 505 : 400;
      response = http::TextResponse(status, request.status().message());
      what = std::string(request.status().message());
    } else {
      what = absl::StrCat(request->method, " ", request->target);
      if (request->version == "HTTP/1.1" && !request->HasHeader("host")) {
        response = http::TextResponse(400, "malformed request: HTTP/1.1 needs a Host header");
      } else if (request->HasHeader("host") && !IsOwnHost(request->Header("host"))) {
        response = http::TextResponse(
            403, absl::StrCat("Host '", request->Header("host"),
                              "' is not this server: coil inspect answers only to 127.0.0.1:",
                              port_, " and localhost:", port_));
      } else {
        response = handler_(*request);
        if (request->method == "HEAD") response.omit_body = true;
      }
    }
  }
  SendResult sent =
      SendAll(fd, http::SerializeResponse(response), absl::Now() + options_.write_deadline);
  std::string outcome = sent == SendResult::kSent       ? ""
                        : sent == SendResult::kTimedOut ? " (client too slow: gave up)"
                                                        : " (client went away)";
  Log(absl::StrCat(what, " -> ", response.status, " (", response.body.size(), " bytes)", outcome));
  if (sent == SendResult::kSent) LingeringClose(fd);
}

void HttpServer::Log(const std::string& line) {
  if (!options_.log) return;
  std::lock_guard<std::mutex> lock(log_mu_);
  options_.log(line);
}

}  // namespace coil::cli
