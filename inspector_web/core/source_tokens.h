// TokenizeSource: syntax highlighting for generated kernel source (LLVM IR from codegen_cpu,
// CUDA C++ from codegen_cuda), as token spans the page wraps in coloured <span>s.
//
//   std::vector<Token> t = TokenizeSource("define void @k(ptr %a) {", SourceLanguage::kLlvmIr);
//   // {0,6,kKeyword} {7,4,kType} {12,2,kGlobal} {15,3,kType} {19,2,kLocal}
//
// Spans are in UTF-16 code units (JavaScript string indices), sorted and non-overlapping;
// text between spans is plain. A simple tokenizer, not a parser: unknown words stay plain.
#ifndef COIL_INSPECTOR_WEB_CORE_SOURCE_TOKENS_H_
#define COIL_INSPECTOR_WEB_CORE_SOURCE_TOKENS_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace coil::inspector {

enum class SourceLanguage { kLlvmIr, kC };

enum class TokenKind : int {
  kComment = 1,
  kString = 2,
  kKeyword = 3,
  kType = 4,
  kLocal = 5,   // LLVM %x
  kGlobal = 6,  // LLVM @x
  kNumber = 7,
  kMetadata = 8,   // LLVM !x
  kAttribute = 9,  // LLVM #0; C preprocessor lines
  kLabel = 10,     // LLVM "entry:"
};

struct Token {
  int64_t start = 0;   // UTF-16 code units
  int64_t length = 0;  // UTF-16 code units
  TokenKind kind = TokenKind::kKeyword;
};

std::vector<Token> TokenizeSource(std::string_view source, SourceLanguage language);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_SOURCE_TOKENS_H_
