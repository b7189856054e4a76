// Embedding a report into the inspector page (`coil inspect --export`).
#include "tools/coil/inspect_export.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace coil::cli {
namespace {

constexpr absl::string_view kIdAttribute = "id=\"coil-embedded\"";

std::string EscapeAttribute(absl::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

// Where the report goes in a page: the template's `<script id="coil-embedded">` element and the
// closing </body>, found by a small scan of the markup that skips comments and the contents of
// <script> and <style> elements (the page's own JavaScript may mention both tags in comments or
// strings).
struct Element {
  size_t begin = std::string::npos;  // npos: the page has no such element
  size_t content_begin = 0;
  size_t content_end = 0;
  size_t end = 0;
};

struct Landmarks {
  Element embedded;
  size_t body_close = std::string::npos;  // the last top-level "</body", or npos
};

Landmarks ScanPage(absl::string_view page) {
  const std::string lower = absl::AsciiStrToLower(page);
  auto starts_tag = [&](size_t at, absl::string_view name) {
    if (absl::string_view(lower).substr(at, name.size()) != name) return false;
    size_t after = at + name.size();
    return after >= lower.size() || lower[after] == '>' || lower[after] == '/' ||
           absl::ascii_isspace(static_cast<unsigned char>(lower[after]));
  };
  Landmarks found;
  size_t i = 0;
  while ((i = lower.find('<', i)) != std::string::npos) {
    if (lower.compare(i, 4, "<!--") == 0) {
      size_t close = lower.find("-->", i + 4);
      if (close == std::string::npos) break;
      i = close + 3;
      continue;
    }
    if (starts_tag(i, "</body")) {
      found.body_close = i;
      ++i;
      continue;
    }
    for (absl::string_view raw_text : {"script", "style"}) {
      if (!starts_tag(i, absl::StrCat("<", raw_text))) continue;
      // A raw-text element: its content ends at the first "</script" (or "</style").
      size_t tag_end = lower.find('>', i);
      if (tag_end == std::string::npos) return found;
      size_t close = lower.find(absl::StrCat("</", raw_text), tag_end + 1);
      if (close == std::string::npos) return found;
      size_t close_end = lower.find('>', close);
      if (close_end == std::string::npos) return found;
      absl::string_view start_tag = page.substr(i, tag_end + 1 - i);
      if (raw_text == "script" && found.embedded.begin == std::string::npos &&
          start_tag.find(kIdAttribute) != absl::string_view::npos) {
        found.embedded = Element{i, tag_end + 1, close, close_end + 1};
      }
      i = close_end;
      break;
    }
    ++i;
  }
  return found;
}

}  // namespace

absl::StatusOr<std::string> EmbedReport(absl::string_view page, absl::string_view name,
                                        absl::string_view bytes) {
  std::string element = absl::StrCat(
      "<script id=\"coil-embedded\" type=\"application/octet-stream\" data-name=\"",
      EscapeAttribute(name), "\">", absl::Base64Escape(bytes), "</script>");
  Landmarks landmarks = ScanPage(page);
  const Element& existing = landmarks.embedded;
  if (existing.begin != std::string::npos) {
    absl::string_view content =
        page.substr(existing.content_begin, existing.content_end - existing.content_begin);
    if (!absl::StripAsciiWhitespace(content).empty()) {
      return absl::FailedPreconditionError(
          "the page already embeds a report (its coil-embedded element is not empty); export "
          "from the plain page");
    }
    return absl::StrCat(page.substr(0, existing.begin), element, page.substr(existing.end));
  }
  size_t body = landmarks.body_close;
  if (body == std::string::npos) {
    return absl::InvalidArgumentError(
        "the page has no empty <script id=\"coil-embedded\"> element and no </body> to insert "
        "the report before");
  }
  return absl::StrCat(page.substr(0, body), element, "\n", page.substr(body));
}

}  // namespace coil::cli
