// HTTP/1.1 request parsing and response writing for `coil inspect`.
#include "tools/coil/inspect_http.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace coil::cli::http {
namespace {

// RFC 9110 token characters (method names, header field names).
bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) != absl::string_view::npos;
}

bool IsToken(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed request: ", what));
}

// A printable rendering of untrusted bytes for error messages (at most 60 characters).
std::string Quote(absl::string_view s) {
  std::string out = "'";
  for (char c : s.substr(0, 60)) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  if (s.size() > 60) out += "...";
  return out + "'";
}

}  // namespace

std::string Request::Header(absl::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (n == name) return v;
  }
  return "";
}

bool Request::HasHeader(absl::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (n == name) return true;
  }
  return false;
}

Response TextResponse(int status, absl::string_view message) {
  Response r;
  r.status = status;
  r.body = absl::StrCat(message, "\n");
  return r;
}

absl::string_view StatusText(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 414: return "URI Too Long";
    case 421: return "Misdirected Request";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

size_t FindHeadEnd(absl::string_view bytes) {
  // Empty lines before the request line are ignored (RFC 9112 section 2.2), so they do not end
  // the head. Lenient clients end lines with a bare "\n"; accept any mix of "\r\n" and "\n".
  size_t start = 0;
  while (start < bytes.size() && (bytes[start] == '\r' || bytes[start] == '\n')) ++start;
  for (size_t i = start; i < bytes.size(); ++i) {
    if (bytes[i] != '\n') continue;
    size_t j = i + 1;
    if (j < bytes.size() && bytes[j] == '\r') ++j;
    if (j < bytes.size() && bytes[j] == '\n') return j + 1;
  }
  return std::string::npos;
}

absl::StatusOr<std::string> PercentDecode(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    int hi = i + 1 < s.size() ? HexValue(s[i + 1]) : -1;
    int lo = i + 2 < s.size() ? HexValue(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad percent escape at offset ", i, " of ", Quote(s)));
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

absl::StatusOr<Request> ParseRequestHead(absl::string_view head) {
  std::vector<absl::string_view> lines = absl::StrSplit(head, '\n');
  for (absl::string_view& line : lines) absl::ConsumeSuffix(&line, "\r");
  size_t first = 0;
  while (first < lines.size() && lines[first].empty()) ++first;
  if (first == lines.size()) return Malformed("empty request");

  Request request;
  std::vector<absl::string_view> parts = absl::StrSplit(lines[first], ' ');
  if (parts.size() != 3) {
    return Malformed(absl::StrCat("the request line ", Quote(lines[first]),
                                  " is not 'METHOD TARGET HTTP/1.1'"));
  }
  if (!IsToken(parts[0])) return Malformed(absl::StrCat("bad method ", Quote(parts[0])));
  request.method = std::string(parts[0]);
  request.target = std::string(parts[1]);
  request.version = std::string(parts[2]);
  if (!absl::StartsWith(request.version, "HTTP/")) {
    return Malformed(absl::StrCat("bad protocol ", Quote(request.version)));
  }
  if (request.version != "HTTP/1.1" && request.version != "HTTP/1.0") {
    return absl::UnimplementedError(
        absl::StrCat("unsupported protocol ", Quote(request.version), " (HTTP/1.1 or 1.0)"));
  }
  for (char c : request.target) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) {
      return Malformed(absl::StrCat("the target ", Quote(request.target),
                                    " has a control, blank or non-ASCII byte"));
    }
  }
  // Origin form "/path?query", or absolute form "http://host/path?query" (proxies send it).
  absl::string_view path = request.target;
  if (absl::StartsWithIgnoreCase(path, "http://")) {
    path.remove_prefix(7);
    size_t end = path.find_first_of("/?#");
    absl::string_view authority = path.substr(0, end);
    if (authority.empty()) {
      return Malformed(absl::StrCat("the target ", Quote(request.target), " names no host"));
    }
    if (absl::StrContains(authority, '@')) {
      return Malformed(
          absl::StrCat("the target ", Quote(request.target), " has user information"));
    }
    request.authority = std::string(authority);
    path = end == absl::string_view::npos ? absl::string_view("/") : path.substr(end);
    if (path[0] != '/') path = "/";  // "http://host?q": the path is empty, i.e. "/"
  }
  path = path.substr(0, path.find_first_of("?#"));
  if (path.empty() || path[0] != '/') {
    return Malformed(absl::StrCat("the target ", Quote(request.target), " is not a path"));
  }
  absl::StatusOr<std::string> decoded = PercentDecode(path);
  if (!decoded.ok()) return Malformed(decoded.status().message());
  request.path = *std::move(decoded);

  for (size_t i = first + 1; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    if (line.empty()) break;  // the blank line that ends the head
    if (line[0] == ' ' || line[0] == '\t') {
      return Malformed(absl::StrCat("folded header line ", Quote(line)));
    }
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Malformed(absl::StrCat("bad header line ", Quote(line)));
    }
    request.headers.emplace_back(absl::AsciiStrToLower(line.substr(0, colon)),
                                 std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  // Two Host lines could name two servers; a server must answer 400 (RFC 9112 section 3.2).
  int hosts = 0;
  for (const auto& [name, value] : request.headers) hosts += name == "host";
  if (hosts > 1) return Malformed(absl::StrCat("more than one Host header (", hosts, ")"));
  return request;
}

std::string SerializeResponse(const Response& response) {
  std::string out = absl::StrCat("HTTP/1.1 ", response.status, " ", StatusText(response.status),
                                 "\r\nContent-Type: ", response.content_type,
                                 "\r\nContent-Length: ", response.body.size(),
                                 "\r\nConnection: close\r\n");
  for (const auto& [name, value] : response.headers) absl::StrAppend(&out, name, ": ", value, "\r\n");
  out += "\r\n";
  if (!response.omit_body) out += response.body;
  return out;
}

}  // namespace coil::cli::http
