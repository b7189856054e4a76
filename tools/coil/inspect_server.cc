// The loopback HTTP server behind `coil inspect`: one poll() loop owning every socket (heads
// in, responses out, deadlines) and a worker pool for complete requests (see the header).
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
#include <map>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ir/check.h"

namespace coil::cli {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// Milliseconds left until `deadline` for poll(), at least 0.
int MillisUntil(absl::Time deadline) {
  // Rounded up: waking before the deadline would only spin until it passes.
  int64_t ms = absl::ToInt64Milliseconds(absl::Ceil(deadline - absl::Now(), absl::Milliseconds(1)));
  return ms < 0 ? 0 : static_cast<int>(std::min<int64_t>(ms, 1 << 30));
}

// Where a connection is: receiving its head, waiting for or in a worker, sending the
// response, or draining what the client still sends after the response (see kLinger).
enum class State { kReading, kHandling, kWriting, kLingering };

struct Connection {
  int fd = -1;
  State state = State::kReading;
  absl::Time deadline;  // of the current state
  std::string in;       // the head so far (kReading)
  std::string out;      // the response (kWriting)
  size_t sent = 0;
  std::string log;      // the request and status, for the log line once sent
};

// After the response: half-close, then read for a moment until the client closes, so that
// unread request bytes do not turn the close into a reset that loses the response.
constexpr absl::Duration kLinger = absl::Milliseconds(200);

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Listen(const Options& options,
                                                                Handler handler) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port ", options.port, " is out of range (0..65535; 0 picks a free port)"));
  }
  COIL_CHECK(options.threads >= 1 && options.max_pending >= 1 && options.max_waiting >= 1);
  std::string address = absl::StrCat("127.0.0.1:", options.port);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
  std::map<uint64_t, Connection> connections;  // by id, i.e. accept order
  uint64_t next_id = 0;
  int reading = 0;  // connections in kReading
  int in_progress = 0;  // connections in kHandling or kWriting
  auto close_connection = [&](std::map<uint64_t, Connection>::iterator it) {
    if (it->second.state == State::kReading) --reading;
    if (it->second.state == State::kHandling || it->second.state == State::kWriting) {
      --in_progress;
    }
    close(it->second.fd);
    return connections.erase(it);
  };
  // Starts sending `bytes`; `log` is written once they are sent.
  auto respond = [&](Connection& c, std::string bytes, std::string log) {
    if (c.state == State::kReading) {
      --reading;
      ++in_progress;
    }
    c.state = State::kWriting;
    c.deadline = absl::Now() + options_.write_deadline;
    c.in.clear();
    c.out = std::move(bytes);
    c.sent = 0;
    c.log = std::move(log);
  };
  // A plain-text error answered by this thread (no worker).
  auto respond_error = [&](Connection& c, int status, absl::string_view message,
                           absl::string_view what) {
    http::Response r = http::TextResponse(status, message);
    respond(c, http::SerializeResponse(r),
            absl::StrCat(what, " -> ", status, " (", r.body.size(), " bytes)"));
  };
  // Sends what the socket takes; false when the connection is over (closed here).
  auto on_writable = [&](Connection& c) -> bool {
    while (c.sent < c.out.size()) {
      ssize_t n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n > 0) {
        c.sent += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return true;
      } else {
        Log(absl::StrCat(c.log, " (client went away)"));  // EPIPE, ECONNRESET, ...
        return false;
      }
    }
    Log(c.log);
    --in_progress;
    c.state = State::kLingering;
    c.deadline = absl::Now() + kLinger;
    c.out = std::string();
    shutdown(c.fd, SHUT_WR);
    return true;
  };

  // Reads what the client sent; false when the connection is over (closed here).
  auto on_readable = [&](Connection& c, uint64_t id) -> bool {
    char chunk[4096];
    while (true) {
      ssize_t n = recv(c.fd, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n <= 0) {
        if (n < 0 && c.state == State::kReading) {
          Log(absl::StrCat("read failed: ", ErrnoText(errno)));
        } else if (n == 0 && c.state == State::kReading && !c.in.empty()) {
          Log("client closed the connection mid-request");
        }
        return false;
      }
      if (c.state == State::kLingering) continue;  // unread request bytes: discard
      c.in.append(chunk, static_cast<size_t>(n));
      size_t head_end = http::FindHeadEnd(c.in);
      if (head_end == std::string::npos && c.in.size() <= options_.max_head_bytes) continue;
      if (head_end == std::string::npos || head_end > options_.max_head_bytes) {
        respond_error(c, 431,
                      absl::StrCat("request head larger than ", options_.max_head_bytes, " bytes"),
                      "oversized request");
        return on_writable(c);
      }
      if (in_progress >= options_.max_pending) {
        respond_error(c, 503, "coil inspect is busy: too many requests in progress; retry",
                      "refused a request: too many in progress");
        return on_writable(c);
      }
      c.in.resize(head_end);  // bytes after the head (a body) are not used
      --reading;
      ++in_progress;
      c.state = State::kHandling;
      {
        std::lock_guard<std::mutex> lock(mu_);
        jobs_.push_back({id, std::move(c.in)});
      }
      work_.notify_one();
      c.in.clear();
      return true;
    }
  };
  std::vector<pollfd> fds;
  std::vector<uint64_t> polled;  // the connection id of fds[i + 2]
  while (true) {
    fds.assign({{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}});
    polled.clear();
    absl::Time next_deadline = absl::InfiniteFuture();
    for (const auto& [id, c] : connections) {
      if (c.state == State::kHandling) continue;  // a worker has it; no deadline
      fds.push_back({c.fd, static_cast<short>(c.state == State::kWriting ? POLLOUT : POLLIN), 0});
      polled.push_back(id);
      next_deadline = std::min(next_deadline, c.deadline);
    }
    int timeout = next_deadline == absl::InfiniteFuture() ? -1 : MillisUntil(next_deadline);
    int r = poll(fds.data(), fds.size(), timeout);
    if (r < 0) {
      if (errno == EINTR) continue;
      Log(absl::StrCat("poll failed: ", ErrnoText(errno)));
      break;
    }
    // Stop() or finished jobs.
    if (fds[1].revents != 0) {
      char drain[256];
      while (read(wake_read_, drain, sizeof drain) > 0) {
      }
    }
    std::vector<Done> done;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;
      done.swap(done_);
    }
    for (Done& d : done) {
      auto it = connections.find(d.id);
      if (it == connections.end()) continue;
      respond(it->second, std::move(d.bytes), std::move(d.log));
      if (!on_writable(it->second)) close_connection(it);
    }
    // Sockets that are ready, then deadlines.
    const absl::Time now = absl::Now();
    for (size_t i = 0; i < polled.size(); ++i) {
      auto it = connections.find(polled[i]);
      if (it == connections.end()) continue;
      Connection& c = it->second;
      bool alive = true;
      if (fds[i + 2].revents != 0) {
        alive = c.state == State::kWriting ? on_writable(c) : on_readable(c, it->first);
      } else if (now >= c.deadline) {
        if (c.state == State::kReading && !c.in.empty()) {
          respond_error(c, 408, "request head not received in time", "incomplete request");
          alive = on_writable(c);
        } else if (c.state == State::kWriting) {
          Log(absl::StrCat(c.log, " (client too slow: gave up)"));
          alive = false;
        } else {
          alive = false;  // an idle (speculative) connection, or lingering done
        }
      }
      if (!alive) close_connection(it);
    }
    if (fds[0].revents == 0) continue;
    // Accept what is queued (the listening socket is non-blocking).
    for (int k = 0; k < 64; ++k) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        int err = errno;
        if (err == EINTR || err == ECONNABORTED) continue;
        if (err == EAGAIN || err == EWOULDBLOCK) break;
        // Out of file descriptors or memory: say so and back off instead of spinning.
        Log(absl::StrCat("accept failed: ", ErrnoText(err)));
        poll(nullptr, 0, 100);
        break;
      }
      if (reading >= options_.max_waiting) {
        // The oldest connection still sending its head makes room.
        for (auto it = connections.begin(); it != connections.end(); ++it) {
          if (it->second.state == State::kReading) {
            close_connection(it);
            break;
          }
        }
      }
      Connection c;
      c.fd = fd;
      c.deadline = absl::Now() + options_.read_deadline;
      connections.emplace(next_id++, std::move(c));
      ++reading;
    }
  }
  for (auto& [id, c] : connections) close(c.fd);
}

void HttpServer::WorkerLoop() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    Done done;
    done.id = job.id;
    done.bytes = Respond(job.head, done.log);
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_.push_back(std::move(done));
    }
    char byte = 1;
    while (write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
    }
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

std::string HttpServer::Respond(const std::string& head, std::string& log) const {
  http::Response response;
  std::string what;  // the request line or what went wrong, for the log
  absl::StatusOr<http::Request> request = http::ParseRequestHead(head);
  if (!request.ok()) {
    int status = absl::IsUnimplemented(request.status()) ? 505 : 400;
    response = http::TextResponse(status, request.status().message());
    what = std::string(request.status().message());
  } else {
    what = absl::StrCat(request->method, " ", request->target);
    const std::string own = absl::StrCat("coil inspect answers only to 127.0.0.1:", port_,
                                         " and localhost:", port_);
    if (request->version == "HTTP/1.1" && !request->HasHeader("host")) {
      response = http::TextResponse(400, "malformed request: HTTP/1.1 needs a Host header");
    } else if (!request->authority.empty() && !IsOwnHost(request->authority)) {
      // An absolute-form target's authority replaces Host (RFC 9112 section 3.2.2).
      response = http::TextResponse(
          421, absl::StrCat("the target names host '", request->authority,
                            "', which is not this server: ", own));
    } else if (request->authority.empty() && request->HasHeader("host") &&
               !IsOwnHost(request->Header("host"))) {
      response = http::TextResponse(
          403, absl::StrCat("Host '", request->Header("host"), "' is not this server: ", own));
    } else {
      response = handler_(*request);
      if (request->method == "HEAD") response.omit_body = true;
    }
  }
  log = absl::StrCat(what, " -> ", response.status, " (", response.body.size(), " bytes)");
  return http::SerializeResponse(response);
}

void HttpServer::Log(const std::string& line) {
  if (!options_.log) return;
  std::lock_guard<std::mutex> lock(log_mu_);
  options_.log(line);
}

}  // namespace coil::cli
