// A minimal HTTP/1.1 server on POSIX sockets, listening on 127.0.0.1 only (`coil inspect`).
//
// One request per connection (Connection: close). One thread (Serve) owns every socket: it
// accepts, reads request heads and writes responses, all non-blocking and multiplexed with
// poll(). A worker thread is taken only once a head is complete, for what may be slow (parsing,
// the Host checks and the handler, which reads files), and hands the serialized response back.
// So no client can hold a worker by being slow: one that sends its head a byte at a time, stops
// halfway or never reads its response costs a socket and a buffer, not a thread, and never
// delays others. (The alternative, a worker per connection with a short head deadline, still
// lets N slow clients stall N workers for the whole deadline.)
//
// Bounds: connections still sending their head (max_waiting; the oldest is dropped to make
// room), requests in progress from complete head to sent response (max_pending; more get 503
// at once, which also bounds the response bytes held), the head size (431), the head deadline
// from accept (408; an idle connection, as browsers open speculatively, is closed quietly) and
// the write deadline. Partial reads and writes, EINTR and clients that disconnect mid-request
// are handled without ending the server. Requests for another host are refused: a Host header
// other than this loopback address gets 403 (a web page elsewhere cannot read the files
// through DNS rebinding), an absolute-form target naming another host 421 (its authority
// replaces Host, RFC 9112 section 3.2.2), two Host headers 400 (section 3.2).
//
//   absl::StatusOr<std::unique_ptr<HttpServer>> server =
//       HttpServer::Listen({.port = 0}, [](const http::Request& r) { ... return response; });
//   std::printf("http://127.0.0.1:%d/\n", (*server)->port());
//   (*server)->Serve();  // until Stop() from another thread
#ifndef COIL_TOOLS_COIL_INSPECT_SERVER_H_
#define COIL_TOOLS_COIL_INSPECT_SERVER_H_

#include <condition_variable>
#include <cstdint>
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
    int threads = 4;   // requests handled at once (heads are read and responses sent by Serve)
    int max_waiting = 256;  // connections still sending their head; the oldest is dropped
    int max_pending = 64;   // requests between a complete head and a sent response; more: 503
    size_t max_head_bytes = 16 * 1024;                // larger request heads get 431
    absl::Duration read_deadline = absl::Seconds(10);  // from accept to the whole head (408)
    absl::Duration write_deadline = absl::Seconds(60);  // to send the whole response
    // Called (from Serve's thread, one call at a time) with one line per request, e.g.
    // "GET /files.json -> 200 (57 bytes)"; nullptr logs nothing.
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

  // Accepts connections, reads heads, hands complete ones to the workers and sends their
  // responses until Stop(). Call once.
  void Serve();

  // Makes Serve() return; safe from any thread, idempotent.
  void Stop();

 private:
  HttpServer(const Options& options, Handler handler, int listen_fd, int port, int wake_read,
             int wake_write);

  // A complete head for a worker, and the response it makes (by connection id).
  struct Job {
    uint64_t id;
    std::string head;
  };
  struct Done {
    uint64_t id;
    std::string bytes;  // the serialized response
    std::string log;    // "GET /x -> 200 (5 bytes)"
  };

  void WorkerLoop();
  // The response to a complete request head: parse errors, Host checks, then the handler.
  // `log` receives the log line without the send outcome.
  std::string Respond(const std::string& head, std::string& log) const;
  // Whether a Host header value or absolute-form authority names this server (127.0.0.1 or
  // localhost, with its port).
  bool IsOwnHost(const std::string& host) const;
  void Log(const std::string& line);

  const Options options_;
  const Handler handler_;
  const int listen_fd_;
  const int port_;
  const int wake_read_;   // a byte here wakes Serve's poll(): Stop() or a finished job
  const int wake_write_;
  std::vector<std::thread> workers_;

  std::mutex mu_;
  std::condition_variable work_;  // signalled when jobs_ grows or stopping_ is set
  std::deque<Job> jobs_;          // complete heads waiting for a worker (guarded by mu_)
  std::vector<Done> done_;        // responses for Serve to send (guarded by mu_)
  bool stopping_ = false;         // guarded by mu_
  std::mutex log_mu_;
};

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_INSPECT_SERVER_H_
