// Tests of HTTP request parsing and response writing (inspect_http.h).
#include "tools/coil/inspect_http.h"

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil::cli::http {
namespace {

using ::testing::HasSubstr;

TEST(FindHeadEnd, FindsTheBlankLine) {
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), 27u);
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\r\nHost: a\r\n\r\nextra"), 27u);
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\nHost: a\n\n"), 24u);  // bare newlines
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\r\nHost: a\r\n"), std::string::npos);
  EXPECT_EQ(FindHeadEnd(""), std::string::npos);
  // Empty lines before the request line do not end the head.
  EXPECT_EQ(FindHeadEnd("\r\n\r\n"), std::string::npos);
  EXPECT_EQ(FindHeadEnd("\r\nGET / HTTP/1.0\r\n\r\n"), 20u);
}

TEST(ParseRequestHead, ReadsRequestLineAndHeaders) {
  absl::StatusOr<Request> r = ParseRequestHead(
      "GET /files/a%20b.pb?x=1#frag HTTP/1.1\r\nHost:  127.0.0.1:8080 \r\nX-Thing: 1\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->target, "/files/a%20b.pb?x=1#frag");
  EXPECT_EQ(r->path, "/files/a b.pb");
  EXPECT_EQ(r->version, "HTTP/1.1");
  EXPECT_EQ(r->Header("host"), "127.0.0.1:8080");
  EXPECT_EQ(r->Header("x-thing"), "1");
  EXPECT_TRUE(r->HasHeader("x-thing"));
  EXPECT_FALSE(r->HasHeader("cookie"));
  EXPECT_EQ(r->Header("cookie"), "");
}

TEST(ParseRequestHead, AcceptsAbsoluteFormAndHttp10) {
  absl::StatusOr<Request> r = ParseRequestHead("HEAD http://localhost:9/files.json HTTP/1.0\n\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->path, "/files.json");
  EXPECT_EQ(r->version, "HTTP/1.0");
  r = ParseRequestHead("GET http://localhost:9 HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->path, "/");
}

TEST(ParseRequestHead, AbsoluteFormKeepsItsAuthority) {
  absl::StatusOr<Request> r =
      ParseRequestHead("GET http://Evil.Example:81/files.json?x HTTP/1.1\r\nHost: a\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->authority, "Evil.Example:81");
  EXPECT_EQ(r->path, "/files.json");
  r = ParseRequestHead("GET http://localhost:9?q HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->authority, "localhost:9");
  EXPECT_EQ(r->path, "/");
  r = ParseRequestHead("GET /files.json HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->authority, "");  // origin form: the Host header names the server
}

// Expected errors (issue 15): requests that could name two servers.
TEST(ParseRequestHeadErrors, DuplicateHost) {
  absl::StatusOr<Request> r =
      ParseRequestHead("GET / HTTP/1.1\r\nHost: localhost:1\r\nhost: evil.example\r\n\r\n");
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_EQ(r.status().message(), "malformed request: more than one Host header (2)");
}

TEST(ParseRequestHeadErrors, DuplicateHostWithTheSameValue) {
  absl::StatusOr<Request> r =
      ParseRequestHead("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\nHost: a\r\n\r\n");
  EXPECT_EQ(r.status().message(), "malformed request: more than one Host header (2)");
}

TEST(ParseRequestHeadErrors, AbsoluteFormWithoutHost) {
  absl::StatusOr<Request> r = ParseRequestHead("GET http:///files.json HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_EQ(r.status().message(),
            "malformed request: the target 'http:///files.json' names no host");
}

TEST(ParseRequestHeadErrors, AbsoluteFormWithUserInformation) {
  absl::StatusOr<Request> r =
      ParseRequestHead("GET http://localhost:1@evil.example/ HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_EQ(r.status().message(),
            "malformed request: the target 'http://localhost:1@evil.example/' has user "
            "information");
}

TEST(ParseRequestHead, DecodesTraversalSoCallersSeeIt) {
  absl::StatusOr<Request> r = ParseRequestHead("GET /files/..%2F..%2Fetc%2Fpasswd HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->path, "/files/../../etc/passwd");
}

TEST(ParseRequestHead, RejectsMalformedRequests) {
  struct Case {
    const char* head;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"\r\n\r\n", "empty request"},
           {"GET /\r\n\r\n", "is not 'METHOD TARGET HTTP/1.1'"},
           {"GET / HTTP/1.1 extra\r\n\r\n", "is not 'METHOD TARGET HTTP/1.1'"},
           {"GET  / HTTP/1.1\r\n\r\n", "is not 'METHOD TARGET HTTP/1.1'"},
           {"G(T / HTTP/1.1\r\n\r\n", "bad method 'G(T'"},
           {"GET / FTP/1.1\r\n\r\n", "bad protocol 'FTP/1.1'"},
           {"GET files.json HTTP/1.1\r\n\r\n", "is not a path"},
           {"GET /a\x01 HTTP/1.1\r\n\r\n", "control, blank or non-ASCII"},
           {"GET /a%zz HTTP/1.1\r\n\r\n", "bad percent escape at offset 2"},
           {"GET /a%4 HTTP/1.1\r\n\r\n", "bad percent escape"},
           {"GET / HTTP/1.1\r\nHost a\r\n\r\n", "bad header line 'Host a'"},
           {"GET / HTTP/1.1\r\nHo st: a\r\n\r\n", "bad header line"},
           {"GET / HTTP/1.1\r\nHost: a\r\n  folded\r\n\r\n", "folded header line"},
       }) {
    absl::StatusOr<Request> r = ParseRequestHead(c.head);
    ASSERT_FALSE(r.ok()) << c.head;
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("malformed request"));
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.message)) << c.head;
  }
}

TEST(ParseRequestHead, OtherHttpVersionsAreUnimplemented) {
  absl::StatusOr<Request> r = ParseRequestHead("GET / HTTP/2.0\r\n\r\n");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsUnimplemented(r.status())) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("'HTTP/2.0'"));
}

TEST(PercentDecode, DecodesEscapesOnly) {
  EXPECT_EQ(*PercentDecode("%2e%2E/%41+b"), "../A+b");
  EXPECT_EQ(*PercentDecode(""), "");
  EXPECT_EQ(*PercentDecode("%00"), std::string(1, '\0'));
  EXPECT_FALSE(PercentDecode("%").ok());
  EXPECT_FALSE(PercentDecode("a%g0").ok());
}

TEST(SerializeResponse, WritesStatusHeadersAndBody) {
  Response r;
  r.status = 404;
  r.body = "gone\n";
  r.headers.emplace_back("Cache-Control", "no-store");
  EXPECT_EQ(SerializeResponse(r),
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 5\r\nConnection: close\r\nCache-Control: no-store\r\n\r\ngone\n");
}

TEST(SerializeResponse, HeadKeepsLengthButDropsBody) {
  Response r = TextResponse(200, "hello");
  r.omit_body = true;
  EXPECT_EQ(SerializeResponse(r),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 6\r\nConnection: close\r\n\r\n");
}

TEST(StatusText, NamesTheCodesCoilSends) {
  EXPECT_EQ(StatusText(200), "OK");
  EXPECT_EQ(StatusText(403), "Forbidden");
  EXPECT_EQ(StatusText(431), "Request Header Fields Too Large");
  EXPECT_EQ(StatusText(505), "HTTP Version Not Supported");
  EXPECT_EQ(StatusText(299), "Unknown");
}

}  // namespace
}  // namespace coil::cli::http
