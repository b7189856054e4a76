// A minimal HTTP/1.1 server on POSIX sockets, listening on 127.0.0.1 only (`coil inspect`).
//
// One request per connection (Connection: close). The accept loop watches new connections
// itself and hands one to the small pool of worker threads only once it has bytes to read, so
// idle connections (browsers open speculative ones) cost no thread and never delay others;
// idle ones are closed at the read deadline. Every read and write has a deadline; partial reads
// and writes, EINTR, clients that disconnect mid-request and oversized heads are handled
// without ending the server. Requests whose Host is not this loopback address are refused (a web page elsewhere
// cannot read the files through DNS rebinding).
//
//   absl::StatusOr<std::unique_ptr<HttpServer>> server =
//       HttpServer::Listen({.port = 0}, [](const http::Request& r) { ... return response; });
//   std::printf("http://127.0.0.1:%d/\n", (*server)->port());
//   (*server)->Serve();  // until Stop() from another thread
#ifndef COIL_TOOLS_COIL_INSPECT_SERVER_H_
#define COIL_TOOLS_COIL_INSPECT_SERVER_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/coil/inspect_http.h"

namespace coil::cli {

class HttpServer {
 public:
  using Handler = std::function<http::Response(const http::Request&)>;

  struct Options {
    int port = 8080;   // 0 picks a free port
    int threads = 4;   // connections served at once
    int max_waiting = 256;  // accepted connections not yet readable; the oldest is dropped
    int max_pending = 64;   // readable connections waiting for a thread; more get 503
    size_t max_head_bytes = 16 * 1024;                // larger request heads get 431
    absl::Duration read_deadline = absl::Seconds(10);  // from accept to the whole head (408)
    absl::Duration write_deadline = absl::Seconds(60);  // to send the whole response
    // Called (from worker threads, one call at a time) with one line per request, e.g.
    // "GET /files.json 200 57"; nullptr logs nothing.
    std::function<void(const std::string&)> log;
  };

  // Binds 127.0.0.1:options.port and starts listening. Errors name the address: port in use,
  // permission denied, port out of range.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Listen(const Options& options,
                                                            Handler handler);

  ~HttpServer();  // stops and joins the workers
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port actually bound (the free one chosen when options.port was 0).
  int port() const { return port_; }

  // Accepts connections and hands them to the workers until Stop(). Call once.
  void Serve();

  // Makes Serve() return; safe from any thread, idempotent.
  void Stop();

 private:
  HttpServer(const Options& options, Handler handler, int listen_fd, int port, int wake_read,
             int wake_write);

  struct Connection {
    int fd;
    absl::Time read_deadline;
  };

  // Hands a readable connection to the workers (or answers 503 when too many wait).
  void Dispatch(Connection connection);
  void WorkerLoop();
  void HandleConnection(Connection connection);
  // Whether a Host header value names this server (127.0.0.1 or localhost, with its port).
  bool IsOwnHost(const std::string& host) const;
  void Log(const std::string& line);

  const Options options_;
  const Handler handler_;
  const int listen_fd_;
  const int port_;
  const int wake_read_;   // Stop() writes a byte here to wake the accept loop's poll()
  const int wake_write_;
  std::vector<std::thread> workers_;

  std::mutex mu_;
  std::condition_variable work_;    // signalled when pending_ grows or stopping_ is set
  std::deque<Connection> pending_;  // readable sockets waiting for a worker (guarded by mu_)
  bool stopping_ = false;           // guarded by mu_
  std::mutex log_mu_;
};

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_INSPECT_SERVER_H_
