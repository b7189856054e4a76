// `coil inspect --export`: the inspector page with a report embedded, as one HTML file to share.
//
// The page opens an embedded report before anything else (docs/inspector.md):
//   <script id="coil-embedded" type="application/octet-stream" data-name="report.pb">BASE64</script>
// EmbedReport puts that element where the page template has an empty one, or else right before
// the page's closing </body>.
//
//   absl::StatusOr<std::string> html = EmbedReport(InspectorPage(), "report.pb", bytes);
#ifndef COIL_TOOLS_COIL_INSPECT_EXPORT_H_
#define COIL_TOOLS_COIL_INSPECT_EXPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace coil::cli {

// The page with `bytes` (a file called `name`) embedded as base64. Errors: the page already
// embeds a report, or has neither an empty coil-embedded element nor a </body>.
absl::StatusOr<std::string> EmbedReport(absl::string_view page, absl::string_view name,
                                        absl::string_view bytes);

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_INSPECT_EXPORT_H_
