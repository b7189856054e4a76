// The routes of `coil inspect`: page, files.json and files/NAME.pb over a folder or one file.
#include "tools/coil/inspect_site.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/io/read_file.h"

namespace coil::cli {
namespace fs = std::filesystem;
namespace {

constexpr char kListedName[] = "report.pb";  // always first: the page opens the first file

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// `path` resolved through links lies inside `folder` (both canonical).
bool IsInside(const fs::path& path, const std::string& folder) {
  std::error_code ec;
  fs::path real = fs::canonical(path, ec);
  if (ec) return false;
  return absl::StartsWith(real.string(), folder + "/");
}

http::Response WithNoCache(http::Response r) {
  // Reloading the page must show files written since (a new compile); never guess types.
  r.headers.emplace_back("Cache-Control", "no-store");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return r;
}

}  // namespace

bool IsServableName(const std::string& name) {
  if (name.empty() || name[0] == '.') return false;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) return false;
    if (absl::string_view("/\\\"%#?").find(c) != absl::string_view::npos) return false;
  }
  return true;
}

absl::StatusOr<InspectSite> InspectSite::Open(const std::string& source, std::string page) {
  std::error_code ec;
  fs::file_status status = fs::status(source, ec);
  if (ec || !fs::exists(status)) {
    return absl::NotFoundError(absl::StrCat("'", source, "' does not exist"));
  }
  fs::path real = fs::canonical(source, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot resolve '", source, "': ", ec.message()));
  }
  if (fs::is_directory(status)) {
    InspectSite site(real.string(), "", std::move(page));
    absl::StatusOr<Listing> listing = site.List();
    if (!listing.ok()) return listing.status();
    if (listing->files.empty()) {
      std::string why = listing->skipped.empty()
                            ? ""
                            : absl::StrCat(" it can serve (names a URL cannot carry: ",
                                           absl::StrJoin(listing->skipped, ", "), ")");
      return absl::FailedPreconditionError(absl::StrCat(
          "'", source, "' has no .pb files", why,
          "; write some with `coil compile MODEL --dump ", source, "`"));
    }
    return site;
  }
  if (!fs::is_regular_file(status)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", source, "' is neither a folder nor a regular file"));
  }
  std::string name = real.filename().string();
  if (!absl::EndsWith(name, ".pb")) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", source, "' is not a .pb file (coil inspect opens a CompileReport "
                                  "report.pb, a stage's .pb file, or a folder of them)"));
  }
  if (!IsServableName(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", source, "': the name has characters a URL cannot carry safely; rename it"));
  }
  return InspectSite(real.parent_path().string(), name, std::move(page));
}

absl::StatusOr<InspectSite::Listing> InspectSite::List() const {
  Listing listing;
  if (!single_.empty()) {
    listing.files.push_back(single_);
    return listing;
  }
  std::error_code ec;
  fs::directory_iterator it(folder_, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot list '", folder_, "': ", ec.message()));
  }
  for (const fs::directory_entry& entry : it) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.' || !absl::EndsWith(name, ".pb")) continue;
    std::error_code type_ec;
    if (!entry.is_regular_file(type_ec) || !IsInside(entry.path(), folder_)) continue;
    (IsServableName(name) ? listing.files : listing.skipped).push_back(name);
  }
  std::sort(listing.files.begin(), listing.files.end(),
            [](const std::string& a, const std::string& b) {
              bool a_first = a == kListedName, b_first = b == kListedName;
              return a_first != b_first ? a_first : a < b;
            });
  std::sort(listing.skipped.begin(), listing.skipped.end());
  return listing;
}

absl::StatusOr<std::string> InspectSite::ReadListedFile(const std::string& name) const {
  absl::StatusOr<Listing> listing = List();
  if (!listing.ok()) return listing.status();
  if (std::find(listing->files.begin(), listing->files.end(), name) == listing->files.end()) {
    return absl::NotFoundError(absl::StrCat("no file '", name, "' in ", folder_));
  }
  fs::path path = fs::path(folder_) / name;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return absl::NotFoundError(absl::StrCat("'", name, "' is gone from ", folder_));
  }
  if (!IsInside(path, folder_)) {
    return absl::PermissionDeniedError(absl::StrCat("'", name, "' resolves outside ", folder_));
  }
  // Only regular files: a FIFO or device swapped in after the listing must not block a
  // worker (or feed it forever).
  absl::StatusOr<std::string> bytes = ReadRegularFile(path.string());
  if (!bytes.ok()) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot serve '", name, "': ", bytes.status().message()));
  }
  return bytes;
}

http::Response InspectSite::Handle(const http::Request& request) const {
  if (request.method != "GET" && request.method != "HEAD") {
    http::Response r = http::TextResponse(
        405, absl::StrCat("method ", request.method, " not allowed: coil inspect is read-only"));
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  const std::string& path = request.path;
  if (path == "/" || path == "/index.html") {
    http::Response r;
    r.content_type = "text/html; charset=utf-8";
    r.body = page_;
    return WithNoCache(std::move(r));
  }
  if (path == "/files.json") {
    absl::StatusOr<Listing> listing = List();
    if (!listing.ok()) return http::TextResponse(500, listing.status().message());
    http::Response r;
    r.content_type = "application/json";
    std::vector<std::string> quoted;
    for (const std::string& f : listing->files) quoted.push_back(JsonString(f));
    r.body = absl::StrCat("{\"files\": [", absl::StrJoin(quoted, ", "), "]}\n");
    return WithNoCache(std::move(r));
  }
  constexpr absl::string_view kFiles = "/files/";
  if (!absl::StartsWith(path, kFiles)) {
    return http::TextResponse(404, absl::StrCat("not found: ", request.target,
                                                " (coil inspect serves /, /files.json and "
                                                "/files/NAME.pb)"));
  }
  std::string name = path.substr(kFiles.size());
  if (name.empty()) return http::TextResponse(404, "not found: no file name after /files/");
  if (name.find_first_of(std::string("/\\\0", 3)) != std::string::npos || name[0] == '.') {
    return http::TextResponse(
        403, absl::StrCat("forbidden: '", request.target, "' is not a file in the served folder"));
  }
  if (!absl::EndsWith(name, ".pb")) {
    return http::TextResponse(
        403, absl::StrCat("forbidden: '", name, "': coil inspect serves only .pb files"));
  }
  absl::StatusOr<std::string> bytes = ReadListedFile(name);
  if (!bytes.ok()) {
    int status = absl::IsNotFound(bytes.status())           ? 404
                 : absl::IsPermissionDenied(bytes.status()) ? 403
                                                            : 500;
    return http::TextResponse(status, bytes.status().message());
  }
  http::Response r;
  r.content_type = "application/octet-stream";
  r.body = *std::move(bytes);
  return WithNoCache(std::move(r));
}

}  // namespace coil::cli
