// Tests of embedding a report into the inspector page (inspect_export.h).
#include "tools/coil/inspect_export.h"

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace coil::cli {
namespace {

using ::testing::HasSubstr;

// The base64 payload and data-name of the one embedded element in `html`.
struct Embedded {
  std::string name;
  std::string bytes;
  int count = 0;
};

Embedded FindEmbedded(const std::string& html) {
  Embedded e;
  const std::string open = "<script id=\"coil-embedded\" type=\"application/octet-stream\" data-name=\"";
  for (size_t at = html.find(open); at != std::string::npos; at = html.find(open, at + 1)) {
    ++e.count;
    size_t name_end = html.find("\">", at + open.size());
    e.name = html.substr(at + open.size(), name_end - at - open.size());
    size_t close = html.find("</script>", name_end);
    absl::Base64Unescape(html.substr(name_end + 2, close - name_end - 2), &e.bytes);
  }
  return e;
}

// Binary bytes including NUL and every byte value, as a real protobuf has.
std::string BinaryReport() {
  std::string bytes;
  for (int i = 0; i < 1000; ++i) bytes += static_cast<char>((i * 37) & 0xff);
  return bytes;
}

TEST(EmbedReport, FillsTheTemplatesEmptyElement) {
  std::string page =
      "<html><body><script>const q = 'id=\"coil-embedded\"';</script>\n"
      "<script id=\"coil-embedded\" type=\"application/octet-stream\" data-name=\"report.pb\">"
      "  </script>\n</body></html>";
  absl::StatusOr<std::string> html = EmbedReport(page, "report.pb", BinaryReport());
  ASSERT_TRUE(html.ok()) << html.status();
  Embedded e = FindEmbedded(*html);
  EXPECT_EQ(e.count, 1);
  EXPECT_EQ(e.name, "report.pb");
  EXPECT_EQ(e.bytes, BinaryReport());
  // The JavaScript that mentions the id is untouched; the element stays before </body>.
  EXPECT_THAT(*html, HasSubstr("<script>const q = 'id=\"coil-embedded\"';</script>\n<script id="));
  EXPECT_THAT(*html, HasSubstr("</script>\n</body></html>"));
  EXPECT_EQ(html->find("  </script>"), std::string::npos);
}

TEST(EmbedReport, IgnoresTagsInsideScriptsAndComments) {
  // The page's JavaScript documents the element and writes "</body>" in a string; an HTML
  // comment mentions it too. Only the real element (and the real </body>) count.
  std::string page =
      "<html><!-- <script id=\"coil-embedded\">x</script> --><body>\n"
      "<SCRIPT>\n// an embedded report: <script id=\"coil-embedded\" type=\"a\">BASE64\n"
      "const s = '</body>';\n</SCRIPT>\n"
      "<style>p::after { content: \"<script id=\\\"coil-embedded\\\">\"; }</style>\n"
      "<script id=\"coil-embedded\" type=\"application/octet-stream\" data-name=\"report.pb\">"
      "</script>\n</body></html>";
  absl::StatusOr<std::string> html = EmbedReport(page, "report.pb", "abc");
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_EQ(FindEmbedded(*html).count, 1);
  EXPECT_EQ(FindEmbedded(*html).bytes, "abc");
  EXPECT_THAT(*html, HasSubstr("data-name=\"report.pb\">YWJj</script>\n</body></html>"));
  EXPECT_THAT(*html, HasSubstr("type=\"a\">BASE64\nconst s = '</body>';"));

  // Without the template element, the report goes before the real </body>, not the one in JS.
  std::string no_element = "<body><script>const s = '</body>';</script><p>end</p></body>";
  html = EmbedReport(no_element, "r.pb", "abc");
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_THAT(*html, HasSubstr("<p>end</p><script id=\"coil-embedded\""));
}

TEST(EmbedReport, InsertsBeforeBodyWithoutATemplateElement) {
  std::string page = "<HTML><BODY><p>x</p></BODY></HTML>";
  absl::StatusOr<std::string> html = EmbedReport(page, "01_import.pb", "\x08\x01");
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_EQ(*html,
            "<HTML><BODY><p>x</p><script id=\"coil-embedded\" type=\"application/octet-stream\" "
            "data-name=\"01_import.pb\">CAE=</script>\n</BODY></HTML>");
}

TEST(EmbedReport, EscapesTheName) {
  absl::StatusOr<std::string> html =
      EmbedReport("<body></body>", "a\"<b>&.pb", "x");
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_THAT(*html, HasSubstr("data-name=\"a&quot;&lt;b&gt;&amp;.pb\""));
}

TEST(EmbedReport, Errors) {
  absl::StatusOr<std::string> html = EmbedReport("<html>no body</html>", "r.pb", "x");
  EXPECT_TRUE(absl::IsInvalidArgument(html.status())) << html.status();
  EXPECT_THAT(std::string(html.status().message()), HasSubstr("no </body>"));

  absl::StatusOr<std::string> once = EmbedReport("<body></body>", "r.pb", "x");
  ASSERT_TRUE(once.ok());
  html = EmbedReport(*once, "r.pb", "y");
  EXPECT_TRUE(absl::IsFailedPrecondition(html.status())) << html.status();
  EXPECT_THAT(std::string(html.status().message()), HasSubstr("already embeds a report"));
}

}  // namespace
}  // namespace coil::cli
