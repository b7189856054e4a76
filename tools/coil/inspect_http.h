// HTTP/1.1 messages for `coil inspect`: parsing a request head and writing a response.
//
// Only what a local, read-only file server needs: GET/HEAD requests without bodies, answered
// with `Connection: close`. Transport (sockets, timeouts) lives in inspect_server.h.
//
//   absl::StatusOr<http::Request> r = http::ParseRequestHead("GET /files.json HTTP/1.1\r\n"
//                                                            "Host: 127.0.0.1:8080\r\n\r\n");
//   r->path == "/files.json"; r->Header("host") == "127.0.0.1:8080"
#ifndef COIL_TOOLS_COIL_INSPECT_HTTP_H_
#define COIL_TOOLS_COIL_INSPECT_HTTP_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace coil::cli::http {

struct Request {
  std::string method;   // "GET", "HEAD", ... (case-sensitive, as RFC 9110 says)
  std::string target;   // the request target as sent, e.g. "/files/a%20b.pb?x=1"
  std::string path;     // percent-decoded path without query, e.g. "/files/a b.pb"
  std::string version;  // "HTTP/1.0" or "HTTP/1.1"
  // For an absolute-form target ("http://localhost:9/x"), its authority ("localhost:9"), which
  // replaces the Host header (RFC 9112 section 3.2.2); empty for an origin-form target.
  std::string authority;
  // Header fields in order, names lower-cased, values without surrounding blanks.
  std::vector<std::pair<std::string, std::string>> headers;

  // The first field named `name` (lower case), or "" when absent.
  std::string Header(absl::string_view name) const;
  bool HasHeader(absl::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Extra header fields (Content-Type, Content-Length and Connection are always written).
  std::vector<std::pair<std::string, std::string>> headers;
  // HEAD: write the headers (with the body's Content-Length) but not the body.
  bool omit_body = false;
};

// A plain-text response whose body is `message` plus a newline.
Response TextResponse(int status, absl::string_view message);

// The reason phrase for a status code ("Not Found"); "Unknown" for codes coil never sends.
absl::string_view StatusText(int status);

// The length of the request head in `bytes` including its blank line ("\r\n\r\n", or "\n\n"
// from lenient clients), or std::string::npos while it is incomplete.
size_t FindHeadEnd(absl::string_view bytes);

// Parses a request head (request line + header fields, up to and including the blank line).
// Errors say what is wrong: InvalidArgument for a malformed request (answer 400), including
// more than one Host header (RFC 9112 section 3.2) and an absolute-form target without a host
// or with user information; Unimplemented for an HTTP version other than 1.0/1.1 (answer 505).
absl::StatusOr<Request> ParseRequestHead(absl::string_view head);

// Decodes %XX escapes; a '%' not followed by two hex digits is an InvalidArgument error.
// '+' stays '+' (it means a space only in form bodies, never in a path).
absl::StatusOr<std::string> PercentDecode(absl::string_view s);

// The bytes of a response: status line, Content-Type, Content-Length, Connection: close,
// the extra headers, a blank line and the body (unless omit_body).
std::string SerializeResponse(const Response& response);

}  // namespace coil::cli::http

#endif  // COIL_TOOLS_COIL_INSPECT_HTTP_H_
