// Tests of the loopback HTTP server (inspect_server.h) over real sockets: partial reads and
// writes, slow, idle and broken clients (none of which may delay others), malformed requests,
// Host and absolute-form checks, deadlines, 503 when busy, port use.
#include "tools/coil/inspect_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A server on a free port, serving in a background thread until the fixture ends.
class ServerTest : public ::testing::Test {
 protected:
  void Start(HttpServer::Options options = {}) {
    options.port = 0;
    options.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      log_.push_back(line);
    };
    absl::StatusOr<std::unique_ptr<HttpServer>> server =
        HttpServer::Listen(options, [this](const http::Request& r) { return Handle(r); });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    ASSERT_GT(server_->port(), 0);
    thread_ = std::thread([this] { server_->Serve(); });
  }

  void TearDown() override {
    if (!server_) return;
    server_->Stop();
    thread_.join();
    server_.reset();
  }

  http::Response Handle(const http::Request& r) {
    if (r.path == "/sleep") std::this_thread::sleep_for(std::chrono::milliseconds(500));
    if (r.path == "/big") {
      http::Response big;
      big.content_type = "application/octet-stream";
      big.body = BigBody();
      return big;
    }
    return http::TextResponse(200, absl::StrCat("path=", r.path));
  }

  static std::string BigBody() {
    std::string body(4 << 20, '\0');
    for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>((i * 131) >> 7);
    return body;
  }

  int Connect() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval tv{20, 0};  // a hung server fails the test instead of hanging it
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
  }

  static void SendText(int fd, const std::string& s) {
    ASSERT_EQ(send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
  }

  // Reads until the server closes; `chunk` bytes at a time with `pause` between reads.
  static std::string ReadAll(int fd, size_t chunk = 65536,
                             std::chrono::milliseconds pause = std::chrono::milliseconds(0)) {
    std::string out;
    std::string buf(chunk, '\0');
    while (true) {
      ssize_t n = recv(fd, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      out.append(buf.data(), static_cast<size_t>(n));
      if (pause.count() > 0) std::this_thread::sleep_for(pause);
    }
    close(fd);
    return out;
  }

  std::string Host() const { return absl::StrCat("127.0.0.1:", server_->port()); }

  std::string Request(const std::string& raw) {
    int fd = Connect();
    SendText(fd, raw);
    return ReadAll(fd);
  }

  std::string Get(const std::string& path) {
    return Request(absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: ", Host(), "\r\n\r\n"));
  }

  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }

  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  std::mutex log_mu_;
  std::vector<std::string> log_;
};

TEST_F(ServerTest, AnswersAndCloses) {
  Start();
  std::string response = Get("/files.json");
  EXPECT_EQ(response, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
                      "Content-Length: 17\r\nConnection: close\r\n\r\npath=/files.json\n");
  EXPECT_THAT(Log(), ::testing::Contains("GET /files.json -> 200 (17 bytes)"));
}

TEST_F(ServerTest, HeadHasNoBody) {
  Start();
  std::string response =
      Request(absl::StrCat("HEAD /x HTTP/1.1\r\nHost: localhost:", server_->port(), "\r\n\r\n"));
  EXPECT_THAT(response, HasSubstr("Content-Length: 8\r\n"));
  EXPECT_THAT(response, ::testing::EndsWith("\r\n\r\n"));
}

TEST_F(ServerTest, RequestArrivingByteByByte) {
  Start();
  int fd = Connect();
  std::string raw = absl::StrCat("GET /slow HTTP/1.1\r\nHost: ", Host(), "\r\n\r\n");
  for (char c : raw) {
    SendText(fd, std::string(1, c));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_THAT(ReadAll(fd), HasSubstr("\r\n\r\npath=/slow\n"));
}

TEST_F(ServerTest, LargeResponseToASlowReader) {
  Start();
  int fd = Connect();
  int small = 65536;  // a small receive buffer forces many partial writes on the server side
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  SendText(fd, absl::StrCat("GET /big HTTP/1.1\r\nHost: ", Host(), "\r\n\r\n"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // server blocks on a full buffer
  std::string response = ReadAll(fd);
  size_t body = response.find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos);
  EXPECT_THAT(response.substr(0, body), HasSubstr(absl::StrCat("Content-Length: ", 4 << 20)));
  EXPECT_TRUE(response.substr(body + 4) == BigBody()) << "body differs";
}

TEST_F(ServerTest, IdleConnectionsDoNotBlockOthers) {
  Start();
  // Browsers open speculative connections and send nothing: more idle ones than threads.
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) idle.push_back(Connect());
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_THAT(Get("/after"), HasSubstr("path=/after"));
  // Far below the 10 s read deadline that closes the idle ones.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  for (int fd : idle) close(fd);
}

TEST_F(ServerTest, IdleConnectionsCloseAtTheDeadline) {
  HttpServer::Options options;
  options.read_deadline = absl::Milliseconds(200);
  Start(options);
  int fd = Connect();
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(ReadAll(fd), "");  // closed without a response
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST_F(ServerTest, BrokenClientsDoNotStopTheServer) {
  Start();
  close(Connect());  // connects and leaves
  int fd = Connect();
  SendText(fd, "GET /half HTTP/1.1\r\nHo");  // leaves mid-request
  close(fd);
  fd = Connect();  // asks for a big body and leaves without reading it
  SendText(fd, absl::StrCat("GET /big HTTP/1.1\r\nHost: ", Host(), "\r\n\r\n"));
  linger reset{1, 0};  // close with a reset
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  close(fd);
  EXPECT_THAT(Get("/still"), HasSubstr("path=/still"));
}

TEST_F(ServerTest, MalformedRequestsGetClearErrors) {
  Start();
  EXPECT_THAT(Request("NONSENSE\r\n\r\n"),
              AllOf(StartsWith("HTTP/1.1 400 Bad Request"), HasSubstr("malformed request")));
  EXPECT_THAT(Request("GET / HTTP/2.0\r\n\r\n"),
              StartsWith("HTTP/1.1 505 HTTP Version Not Supported"));
  EXPECT_THAT(Request("GET / HTTP/1.1\r\n\r\n"),
              AllOf(StartsWith("HTTP/1.1 400"), HasSubstr("needs a Host header")));
  EXPECT_THAT(Request("GET / HTTP/1.0\r\n\r\n"), StartsWith("HTTP/1.1 200"));  // 1.0: optional
  std::string huge = absl::StrCat("GET / HTTP/1.1\r\nHost: ", Host(), "\r\nX: ",
                                  std::string(20000, 'a'), "\r\n\r\n");
  EXPECT_THAT(Request(huge), StartsWith("HTTP/1.1 431"));
  EXPECT_THAT(Get("/ok"), HasSubstr("path=/ok"));
}

TEST_F(ServerTest, RefusesForeignHosts) {
  Start();
  // A page on another site reaching this port through DNS rebinding sends its own Host.
  EXPECT_THAT(Request("GET / HTTP/1.1\r\nHost: evil.example:80\r\n\r\n"),
              AllOf(StartsWith("HTTP/1.1 403"), HasSubstr("'evil.example:80' is not this server")));
  EXPECT_THAT(Request("GET / HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n"), StartsWith("HTTP/1.1 403"));
  EXPECT_THAT(Request(absl::StrCat("GET / HTTP/1.1\r\nHost: LOCALHOST:", server_->port(),
                                   "\r\n\r\n")),
              StartsWith("HTTP/1.1 200"));
}

TEST_F(ServerTest, SlowHeadTimesOut) {
  HttpServer::Options options;
  options.read_deadline = absl::Milliseconds(300);
  Start(options);
  int fd = Connect();
  SendText(fd, "GET / HTTP/1.1\r\n");  // and nothing more
  EXPECT_THAT(ReadAll(fd), StartsWith("HTTP/1.1 408 Request Timeout"));
  EXPECT_THAT(Get("/next"), HasSubstr("path=/next"));
}

// Issue 15: ten clients that send part of a head (more than the 4 workers) must not delay a
// normal request. Heads are read by the poll loop, so none of them holds a worker.
TEST_F(ServerTest, PartialHeadsDoNotDelayOthers) {
  Start();  // 4 workers, the 10 s head deadline
  std::vector<int> slow;
  for (int i = 0; i < 10; ++i) {
    slow.push_back(Connect());
    SendText(slow.back(), "GET /partial HTTP/1.1\r\nHo");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // all of them read by now
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_THAT(Get("/after"), HasSubstr("path=/after"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1000));
  // Each slow one is still served once its head is complete.
  SendText(slow[0], absl::StrCat("st: ", Host(), "\r\n\r\n"));
  EXPECT_THAT(ReadAll(slow[0]), HasSubstr("path=/partial"));
  for (size_t i = 1; i < slow.size(); ++i) close(slow[i]);
}

// Nor do clients that never read their (large) response.
TEST_F(ServerTest, ClientsThatDoNotReadDoNotDelayOthers) {
  HttpServer::Options options;
  options.threads = 2;
  Start(options);
  std::vector<int> stuck;
  for (int i = 0; i < 6; ++i) {
    stuck.push_back(Connect());
    SendText(stuck.back(), absl::StrCat("GET /big HTTP/1.1\r\nHost: ", Host(), "\r\n\r\n"));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_THAT(Get("/after"), HasSubstr("path=/after"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1000));
  for (int fd : stuck) close(fd);
}

TEST_F(ServerTest, TooManyRequestsInProgressGet503) {
  HttpServer::Options options;
  options.threads = 1;
  options.max_pending = 1;
  Start(options);
  int first = Connect();
  SendText(first, absl::StrCat("GET /sleep HTTP/1.1\r\nHost: ", Host(), "\r\n\r\n"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_THAT(Get("/second"), AllOf(StartsWith("HTTP/1.1 503"), HasSubstr("too many requests")));
  EXPECT_THAT(ReadAll(first), HasSubstr("path=/sleep"));
  EXPECT_THAT(Get("/third"), HasSubstr("path=/third"));
}

// Expected errors (issue 15): two Host headers are 400 (RFC 9112 section 3.2); an
// absolute-form target's authority replaces Host (section 3.2.2), so a foreign one is 421.
TEST_F(ServerTest, DuplicateHostIs400) {
  Start();
  EXPECT_EQ(Request(absl::StrCat("GET / HTTP/1.1\r\nHost: ", Host(), "\r\nHost: ", Host(),
                                 "\r\n\r\n")),
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 49\r\nConnection: close\r\n\r\n"
            "malformed request: more than one Host header (2)\n");
  EXPECT_THAT(Request(absl::StrCat("GET / HTTP/1.1\r\nHost: ", Host(),
                                   "\r\nHost: evil.example\r\n\r\n")),
              AllOf(StartsWith("HTTP/1.1 400"), HasSubstr("more than one Host header")));
}

TEST_F(ServerTest, AbsoluteFormNamingAForeignHostIs421) {
  Start();
  EXPECT_THAT(
      Request(absl::StrCat("GET http://evil.example/files.json HTTP/1.1\r\nHost: ", Host(),
                           "\r\n\r\n")),
      AllOf(StartsWith("HTTP/1.1 421 Misdirected Request"),
            HasSubstr(absl::StrCat("the target names host 'evil.example', which is not this "
                                   "server: coil inspect answers only to 127.0.0.1:",
                                   server_->port()))));
  // Another port of this machine is another server too.
  EXPECT_THAT(Request(absl::StrCat("GET http://127.0.0.1:1/ HTTP/1.1\r\nHost: ", Host(),
                                   "\r\n\r\n")),
              StartsWith("HTTP/1.1 421"));
  // Our own authority is served, whatever Host says (the authority replaces it).
  EXPECT_THAT(Request(absl::StrCat("GET http://", Host(),
                                   "/x HTTP/1.1\r\nHost: evil.example\r\n\r\n")),
              AllOf(StartsWith("HTTP/1.1 200"), HasSubstr("path=/x")));
  EXPECT_THAT(Request("GET http://localhost:1@evil.example/ HTTP/1.1\r\nHost: x\r\n\r\n"),
              AllOf(StartsWith("HTTP/1.1 400"), HasSubstr("has user information")));
}

TEST_F(ServerTest, PortInUseIsAClearError) {
  Start();
  HttpServer::Options options;
  options.port = server_->port();
  absl::StatusOr<std::unique_ptr<HttpServer>> second =
      HttpServer::Listen(options, [](const http::Request&) { return http::Response(); });
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::IsUnavailable(second.status())) << second.status();
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr(absl::StrCat("127.0.0.1:", server_->port(), " is already in use")));
}

TEST(HttpServer, RejectsOutOfRangePorts) {
  HttpServer::Options options;
  options.port = 70000;
  absl::StatusOr<std::unique_ptr<HttpServer>> server =
      HttpServer::Listen(options, [](const http::Request&) { return http::Response(); });
  EXPECT_TRUE(absl::IsInvalidArgument(server.status())) << server.status();
  EXPECT_THAT(std::string(server.status().message()), HasSubstr("port 70000 is out of range"));
}

}  // namespace
}  // namespace coil::cli
