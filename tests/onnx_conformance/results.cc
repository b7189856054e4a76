// Summaries, the JSON report and the grouping key of unsupported features.
#include <cstdio>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tests/onnx_conformance/conformance.h"

namespace coil::onnx_testing {
namespace {

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// The word after `marker` in `s` (letters, digits, '_', '.', '-'), or "".
std::string WordAfter(absl::string_view s, absl::string_view marker) {
  size_t at = s.find(marker);
  if (at == absl::string_view::npos) return "";
  absl::string_view rest = s.substr(at + marker.size());
  while (!rest.empty() && (rest[0] == '\'' || rest[0] == '"' || rest[0] == ' ')) rest.remove_prefix(1);
  size_t n = 0;
  while (n < rest.size() && (absl::ascii_isalnum(rest[n]) || rest[n] == '_' || rest[n] == '.' ||
                             rest[n] == '-')) {
    ++n;
  }
  return std::string(rest.substr(0, n));
}

}  // namespace

std::string UnsupportedFeature(absl::string_view message) {
  // The reference interpreter: "node 3 %4 = aten.foo(...): no reference kernel for op 'aten.foo'".
  if (std::string op = WordAfter(message, "kernel for op "); !op.empty()) {
    return absl::StrCat("kernel ", op);
  }
  // The importer: "op Foo is not supported (node n)", "op Foo attribute a=b is not supported
  // (node n)", "op Foo: what (node n)", "domain 'd' is not supported (op Foo, node n)".
  if (std::string domain = WordAfter(message, "domain "); !domain.empty()) {
    return absl::StrCat("domain ", domain);
  }
  for (absl::string_view marker : {"op ", "(op "}) {
    if (absl::StartsWith(message, marker) || absl::StrContains(message, absl::StrCat(" ", marker))) {
      if (std::string op = WordAfter(message, marker); !op.empty()) return absl::StrCat("op ", op);
    }
  }
  if (std::string type = WordAfter(message, "element type "); !type.empty()) {
    return absl::StrCat("element type ", type);
  }
  if (std::string opset = WordAfter(message, "opset "); !opset.empty()) {
    return absl::StrCat("opset ", opset);
  }
  // Otherwise the message up to its first ':' or '(' keeps node names out of the key.
  absl::string_view key = message;
  size_t cut = key.find_first_of(":(");
  if (cut != absl::string_view::npos) key = key.substr(0, cut);
  return std::string(absl::StripAsciiWhitespace(key));
}

double SuiteSummary::pass_rate() const {
  return total() == 0 ? 0.0 : static_cast<double>(passed) / total();
}

SuiteSummary Summarize(absl::Span<const TestResult> results) {
  SuiteSummary s;
  for (const TestResult& r : results) {
    switch (r.outcome) {
      case Outcome::kPassed: ++s.passed; break;
      case Outcome::kFailed: ++s.failed; break;
      case Outcome::kUnsupported: ++s.unsupported; break;
    }
  }
  return s;
}

std::string ResultsToJson(absl::Span<const TestResult> results, absl::string_view data_dir,
                          absl::string_view backend) {
  std::map<std::string, std::vector<TestResult>> by_suite;
  for (const TestResult& r : results) by_suite[r.suite].push_back(r);
  std::vector<std::string> suites;
  for (const auto& [name, rs] : by_suite) {
    SuiteSummary s = Summarize(rs);
    suites.push_back(absl::StrFormat(
        "    %s: {\"passed\": %d, \"failed\": %d, \"unsupported\": %d, \"total\": %d}",
        JsonString(name), s.passed, s.failed, s.unsupported, s.total()));
  }
  std::vector<std::string> tests;
  for (const TestResult& r : results) {
    tests.push_back(absl::StrFormat(
        "    {\"suite\": %s, \"name\": %s, \"result\": %s, \"message\": %s, \"unsupported\": %s, "
        "\"seconds\": %.3f}",
        JsonString(r.suite), JsonString(r.name), JsonString(OutcomeName(r.outcome)),
        JsonString(r.message), JsonString(r.unsupported), r.seconds));
  }
  return absl::StrCat("{\n  \"data_dir\": ", JsonString(data_dir), ",\n  \"backend\": ",
                      JsonString(backend), ",\n  \"suites\": {\n", absl::StrJoin(suites, ",\n"),
                      "\n  },\n  \"tests\": [\n", absl::StrJoin(tests, ",\n"), "\n  ]\n}\n");
}

}  // namespace coil::onnx_testing
