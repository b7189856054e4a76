// TokenizeSource: token kinds on LLVM IR and C-like code, and offsets in UTF-16 code units
// (what JavaScript's string indices count) when the source has non-ASCII characters.
#include "inspector_web/core/source_tokens.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace coil::inspector {
namespace {

struct Seen {
  std::string text;
  TokenKind kind;
  bool operator==(const Seen& o) const { return text == o.text && kind == o.kind; }
};

// Tokens as (text, kind) for an ASCII source (offsets equal bytes there).
std::vector<Seen> Tokens(const std::string& src, SourceLanguage lang) {
  std::vector<Seen> out;
  for (const Token& t : TokenizeSource(src, lang)) {
    out.push_back({src.substr(t.start, t.length), t.kind});
  }
  return out;
}

TEST(SourceTokensTest, LlvmIr) {
  std::string src =
      "; a comment\n"
      "define void @k(ptr noalias %a, i64 %n) #0 {\n"
      "entry:\n"
      "  %x = fadd fast <8 x float> %v, <float 1.5e+00, float -2.0>\n"
      "  store i8 0, ptr @g, align 4, !tbaa !3\n"
      "  ret void\n"
      "}\n"
      "@s = private constant [3 x i8] c\"ab\\00\"\n";
  std::vector<Seen> t = Tokens(src, SourceLanguage::kLlvmIr);
  auto has = [&](const std::string& text, TokenKind kind) {
    return std::find(t.begin(), t.end(), Seen{text, kind}) != t.end();
  };
  EXPECT_TRUE(has("; a comment", TokenKind::kComment));
  EXPECT_TRUE(has("define", TokenKind::kKeyword));
  EXPECT_TRUE(has("void", TokenKind::kType));
  EXPECT_TRUE(has("@k", TokenKind::kGlobal));
  EXPECT_TRUE(has("ptr", TokenKind::kType));
  EXPECT_TRUE(has("noalias", TokenKind::kKeyword));
  EXPECT_TRUE(has("%a", TokenKind::kLocal));
  EXPECT_TRUE(has("i64", TokenKind::kType));
  EXPECT_TRUE(has("#0", TokenKind::kAttribute));
  EXPECT_TRUE(has("entry:", TokenKind::kLabel));
  EXPECT_TRUE(has("fadd", TokenKind::kKeyword));
  EXPECT_TRUE(has("1.5e+00", TokenKind::kNumber));
  EXPECT_TRUE(has("-2.0", TokenKind::kNumber));
  EXPECT_TRUE(has("!3", TokenKind::kMetadata));
  EXPECT_TRUE(has("c\"ab\\00\"", TokenKind::kString));
  EXPECT_FALSE(has("x", TokenKind::kKeyword));  // the vector 'x' stays plain
  // Sorted, non-overlapping.
  std::vector<Token> raw = TokenizeSource(src, SourceLanguage::kLlvmIr);
  for (size_t i = 1; i < raw.size(); ++i) {
    EXPECT_GE(raw[i].start, raw[i - 1].start + raw[i - 1].length);
  }
}

TEST(SourceTokensTest, CLike) {
  std::string src =
      "#include <cuda_fp16.h>\n"
      "// add one\n"
      "__global__ void k(const float* __restrict__ a, int n) {\n"
      "  /* body */ if (n > 0) a[0] = 1.5f; const char* s = \"x\\\"y\";\n"
      "}\n";
  std::vector<Seen> t = Tokens(src, SourceLanguage::kC);
  auto has = [&](const std::string& text, TokenKind kind) {
    return std::find(t.begin(), t.end(), Seen{text, kind}) != t.end();
  };
  EXPECT_TRUE(has("#include <cuda_fp16.h>", TokenKind::kAttribute));
  EXPECT_TRUE(has("// add one", TokenKind::kComment));
  EXPECT_TRUE(has("/* body */", TokenKind::kComment));
  EXPECT_TRUE(has("__global__", TokenKind::kKeyword));
  EXPECT_TRUE(has("float", TokenKind::kType));
  EXPECT_TRUE(has("if", TokenKind::kKeyword));
  EXPECT_TRUE(has("1.5f", TokenKind::kNumber));
  EXPECT_TRUE(has("\"x\\\"y\"", TokenKind::kString));
}

TEST(SourceTokensTest, OffsetsCountUtf16CodeUnits) {
  // "µ" is 2 UTF-8 bytes and 1 UTF-16 unit; the emoji 4 bytes and 2 units (a surrogate pair);
  // a stray byte is 1 unit (it shows as U+FFFD).
  std::string src = "; \xc2\xb5 \xf0\x9f\x99\x82 \xff\n%x";
  std::vector<Token> t = TokenizeSource(src, SourceLanguage::kLlvmIr);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].kind, TokenKind::kComment);
  EXPECT_EQ(t[0].start, 0);
  EXPECT_EQ(t[0].length, 8);  // ';' ' ' 'µ' ' ' two units ' ' U+FFFD
  EXPECT_EQ(t[1].kind, TokenKind::kLocal);
  EXPECT_EQ(t[1].start, 9);
  EXPECT_EQ(t[1].length, 2);
}

}  // namespace
}  // namespace coil::inspector
