// TokenizeSource (source_tokens.h): byte-level scanners for LLVM IR and C-like code, then
// byte offsets converted to UTF-16 offsets.
#include "inspector_web/core/source_tokens.h"

#include <algorithm>
#include <string>

#include "inspector_web/core/utf8.h"

namespace coil::inspector {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.' || c == '$';
}
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c) || c == '-'; }
bool IsCIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsCIdentChar(char c) { return IsCIdentStart(c) || IsDigit(c); }

bool InList(std::string_view word, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

bool IsLlvmType(std::string_view w) {
  if (w.size() >= 2 && w[0] == 'i' && std::all_of(w.begin() + 1, w.end(), IsDigit)) return true;
  return InList(w, {"void", "half", "bfloat", "float", "double", "fp128", "x86_fp80", "ptr",
                    "label", "metadata", "token", "opaque"});
}

bool IsLlvmKeyword(std::string_view w) {
  return InList(w, {"define",
                    "declare",
                    "ret",
                    "br",
                    "switch",
                    "call",
                    "tail",
                    "musttail",
                    "notail",
                    "fadd",
                    "fsub",
                    "fmul",
                    "fdiv",
                    "frem",
                    "fneg",
                    "add",
                    "sub",
                    "mul",
                    "udiv",
                    "sdiv",
                    "urem",
                    "srem",
                    "shl",
                    "lshr",
                    "ashr",
                    "and",
                    "or",
                    "xor",
                    "alloca",
                    "load",
                    "store",
                    "getelementptr",
                    "inbounds",
                    "fence",
                    "cmpxchg",
                    "atomicrmw",
                    "trunc",
                    "zext",
                    "sext",
                    "fptrunc",
                    "fpext",
                    "fptoui",
                    "fptosi",
                    "uitofp",
                    "sitofp",
                    "ptrtoint",
                    "inttoptr",
                    "bitcast",
                    "addrspacecast",
                    "icmp",
                    "fcmp",
                    "phi",
                    "select",
                    "extractelement",
                    "insertelement",
                    "shufflevector",
                    "extractvalue",
                    "insertvalue",
                    "unreachable",
                    "global",
                    "constant",
                    "private",
                    "internal",
                    "external",
                    "dso_local",
                    "align",
                    "nsw",
                    "nuw",
                    "exact",
                    "fast",
                    "nnan",
                    "ninf",
                    "nsz",
                    "arcp",
                    "contract",
                    "afn",
                    "reassoc",
                    "eq",
                    "ne",
                    "ugt",
                    "uge",
                    "ult",
                    "ule",
                    "sgt",
                    "sge",
                    "slt",
                    "sle",
                    "oeq",
                    "ogt",
                    "oge",
                    "olt",
                    "ole",
                    "one",
                    "ord",
                    "uno",
                    "ueq",
                    "une",
                    "true",
                    "false",
                    "null",
                    "undef",
                    "poison",
                    "zeroinitializer",
                    "to",
                    "target",
                    "datalayout",
                    "triple",
                    "source_filename",
                    "attributes",
                    "noalias",
                    "nocapture",
                    "readonly",
                    "writeonly",
                    "nounwind"});
}

bool IsCType(std::string_view w) {
  return InList(
      w, {"void",    "bool",    "char",          "short",    "int",      "long",    "float",
          "double",  "half",    "unsigned",      "signed",   "int8_t",   "int16_t", "int32_t",
          "int64_t", "uint8_t", "uint16_t",      "uint32_t", "uint64_t", "size_t",  "float2",
          "float4",  "__half",  "__nv_bfloat16", "auto"});
}

bool IsCKeyword(std::string_view w) {
  return InList(w, {"if",
                    "else",
                    "for",
                    "while",
                    "do",
                    "return",
                    "break",
                    "continue",
                    "switch",
                    "case",
                    "default",
                    "const",
                    "constexpr",
                    "static",
                    "inline",
                    "extern",
                    "struct",
                    "class",
                    "template",
                    "typename",
                    "namespace",
                    "using",
                    "sizeof",
                    "true",
                    "false",
                    "nullptr",
                    "__global__",
                    "__device__",
                    "__host__",
                    "__shared__",
                    "__restrict__",
                    "__syncthreads",
                    "__forceinline__",
                    "volatile",
                    "unsigned"});
}

// Scans `s`, calling emit(begin, end, kind) for each token, in byte offsets.
template <typename Emit>
void ScanLlvm(std::string_view s, Emit emit) {
  size_t i = 0, n = s.size();
  bool line_start = true;
  auto quoted_end = [&](size_t q) {  // q at the opening quote; returns one past the closing
    size_t j = q + 1;
    while (j < n && s[j] != '"' && s[j] != '\n') ++j;
    return j < n && s[j] == '"' ? j + 1 : j;
  };
  while (i < n) {
    char c = s[i];
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    bool at_line_start = line_start;
    line_start = false;
    if (c == ';') {
      size_t j = s.find('\n', i);
      if (j == std::string_view::npos) j = n;
      emit(i, j, TokenKind::kComment);
      i = j;
    } else if (c == '"') {
      size_t j = quoted_end(i);
      emit(i, j, TokenKind::kString);
      i = j;
    } else if (c == '%' || c == '@' || c == '!' || c == '#') {
      size_t j = i + 1;
      if (j < n && s[j] == '"') {
        j = quoted_end(j);
      } else {
        while (j < n && IsIdentChar(s[j])) ++j;
      }
      if (j == i + 1) {  // a lone '!' (as in "!{") or '#'
        ++i;
        continue;
      }
      TokenKind kind = c == '%'   ? TokenKind::kLocal
                       : c == '@' ? TokenKind::kGlobal
                       : c == '!' ? TokenKind::kMetadata
                                  : TokenKind::kAttribute;
      emit(i, j, kind);
      i = j;
    } else if (IsDigit(c) || (c == '-' && i + 1 < n && IsDigit(s[i + 1]))) {
      size_t j = i + 1;
      while (j < n && (IsDigit(s[j]) || s[j] == '.' || s[j] == 'x' || s[j] == 'X' ||
                       (s[j] >= 'a' && s[j] <= 'f') || (s[j] >= 'A' && s[j] <= 'F') ||
                       ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E')))) {
        ++j;
      }
      emit(i, j, TokenKind::kNumber);
      i = j;
    } else if (IsIdentStart(c)) {
      size_t j = i + 1;
      while (j < n && IsIdentChar(s[j])) ++j;
      std::string_view w = s.substr(i, j - i);
      if (at_line_start && j < n && s[j] == ':') {
        emit(i, j + 1, TokenKind::kLabel);
        j = j + 1;
      } else if (c == 'c' && j == i + 1 && j < n && s[j] == '"') {  // c"..." constants
        j = quoted_end(j);
        emit(i, j, TokenKind::kString);
      } else if (IsLlvmType(w)) {
        emit(i, j, TokenKind::kType);
      } else if (IsLlvmKeyword(w)) {
        emit(i, j, TokenKind::kKeyword);
      }
      i = j;
    } else {
      ++i;
    }
  }
}

template <typename Emit>
void ScanC(std::string_view s, Emit emit) {
  size_t i = 0, n = s.size();
  bool line_start = true;
  while (i < n) {
    char c = s[i];
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    bool at_line_start = line_start;
    line_start = false;
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      size_t j = s.find('\n', i);
      if (j == std::string_view::npos) j = n;
      emit(i, j, TokenKind::kComment);
      i = j;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      size_t j = s.find("*/", i + 2);
      j = j == std::string_view::npos ? n : j + 2;
      emit(i, j, TokenKind::kComment);
      i = j;
    } else if (c == '#' && at_line_start) {
      size_t j = s.find('\n', i);
      if (j == std::string_view::npos) j = n;
      emit(i, j, TokenKind::kAttribute);
      i = j;
    } else if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < n && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      j = std::min(n, j + 1);
      emit(i, j, TokenKind::kString);
      i = j;
    } else if (IsDigit(c) || (c == '.' && i + 1 < n && IsDigit(s[i + 1]))) {
      size_t j = i + 1;
      while (j < n && (IsCIdentChar(s[j]) || s[j] == '.' ||
                       ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E')))) {
        ++j;
      }
      emit(i, j, TokenKind::kNumber);
      i = j;
    } else if (IsCIdentStart(c)) {
      size_t j = i + 1;
      while (j < n && IsCIdentChar(s[j])) ++j;
      std::string_view w = s.substr(i, j - i);
      if (IsCType(w)) {
        emit(i, j, TokenKind::kType);
      } else if (IsCKeyword(w)) {
        emit(i, j, TokenKind::kKeyword);
      }
      i = j;
    } else {
      ++i;
    }
  }
}

}  // namespace

std::vector<Token> TokenizeSource(std::string_view source, SourceLanguage language) {
  std::vector<std::pair<size_t, size_t>> spans;  // byte [begin, end)
  std::vector<TokenKind> kinds;
  auto emit = [&](size_t b, size_t e, TokenKind k) {
    if (e <= b) return;
    spans.emplace_back(b, e);
    kinds.push_back(k);
  };
  if (language == SourceLanguage::kLlvmIr) {
    ScanLlvm(source, emit);
  } else {
    ScanC(source, emit);
  }
  // Byte offsets -> UTF-16 offsets in one pass over the source (tokens are sorted).
  std::vector<Token> tokens(spans.size());
  size_t byte = 0;
  int64_t unit = 0;
  auto advance_to = [&](size_t target) {
    while (byte < target) {
      size_t len = Utf8SequenceLength(source, byte);
      if (len == 0) len = 1;  // an invalid byte shows as one U+FFFD
      unit += len == 4 ? 2 : 1;
      byte += len;
    }
    return unit;
  };
  for (size_t t = 0; t < spans.size(); ++t) {
    int64_t begin = advance_to(spans[t].first);
    int64_t end = advance_to(spans[t].second);
    tokens[t] = {begin, end - begin, kinds[t]};
  }
  return tokens;
}

}  // namespace coil::inspector
