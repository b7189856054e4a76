// What `coil inspect` serves: the inspector page, the list of .pb files in a folder of compile
// artifacts (or one .pb file), and those files' bytes. Everything else is 404.
//
//   GET /                 the page (text/html)
//   GET /files.json       {"files": ["report.pb", "01_import.pb", ...]}: report.pb first, then
//                         the other .pb files by name (the page opens the first)
//   GET /files/NAME.pb    the file's bytes (application/octet-stream)
//
// Only listed files are served: a name with a path separator or a leading dot, a name not ending
// in .pb, or a link that resolves outside the folder is refused (403); a .pb name that is not
// there is 404. The folder is listed on every request, so files written later (a new
// `coil compile --dump`) show up on reload. Thread-safe: Handle() only reads.
#ifndef COIL_TOOLS_COIL_INSPECT_SITE_H_
#define COIL_TOOLS_COIL_INSPECT_SITE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/coil/inspect_http.h"

namespace coil::cli {

class InspectSite {
 public:
  struct Listing {
    std::vector<std::string> files;    // servable, in the order files.json gives
    std::vector<std::string> skipped;  // .pb files whose names a URL cannot carry safely
  };

  // `source` is a folder holding .pb files or one .pb file; `page` is the HTML served at /.
  // Errors name the source: it does not exist, is neither a folder nor a .pb file, or is a
  // folder without .pb files.
  static absl::StatusOr<InspectSite> Open(const std::string& source, std::string page);

  // The servable files now (a folder is re-read on each call).
  absl::StatusOr<Listing> List() const;

  // The bytes of a listed file. NotFound when `name` is not listed, PermissionDenied when it
  // resolves outside the folder.
  absl::StatusOr<std::string> ReadListedFile(const std::string& name) const;

  // Answers one request (GET or HEAD; other methods get 405).
  http::Response Handle(const http::Request& request) const;

  // The folder served (canonical path), and the one file when serving a single file.
  const std::string& folder() const { return folder_; }
  const std::string& single_file() const { return single_; }
  const std::string& page() const { return page_; }

 private:
  InspectSite(std::string folder, std::string single, std::string page)
      : folder_(std::move(folder)), single_(std::move(single)), page_(std::move(page)) {}

  std::string folder_;
  std::string single_;
  std::string page_;
};

// Whether a file name can be listed and requested: printable ASCII without / \ " % # ?, not
// starting with a dot.
bool IsServableName(const std::string& name);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_INSPECT_SITE_H_
