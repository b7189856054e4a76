// The inspector page compiled into the coil binary, so `coil inspect` needs no other file.
//
// The bytes come from one self-contained HTML file (page, CSS, JS and wasm inlined) at build
// time: tools/coil/BUILD's `inspector_page` genrule runs page_embed_gen over it.
#ifndef COIL_TOOLS_COIL_PAGE_EMBED_H_
#define COIL_TOOLS_COIL_PAGE_EMBED_H_

#include "absl/strings/string_view.h"

namespace coil::cli {

// The page's bytes (static storage).
absl::string_view InspectorPage();

}  // namespace coil::cli

#endif  // COIL_TOOLS_COIL_PAGE_EMBED_H_
