// The lexer of the graph text IR (ir/parser.cc): tokens with line and column, string
// unescaping, value references (%N). Internal to the parser; grammar in ir/printer.h.
#ifndef COIL_IR_INTERNAL_TEXT_LEXER_H_
#define COIL_IR_INTERNAL_TEXT_LEXER_H_

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

// Returns the status of `expr` from the enclosing function when it is not ok.
#define COIL_PARSE_TRY(expr)                 \
  do {                                       \
    absl::Status _status = (expr);           \
    if (!_status.ok()) return _status;       \
  } while (false)

namespace coil::text_internal {

enum class Tok { kEnd, kIdent, kInt, kFloat, kString, kValue, kPunct };

struct Token {
  Tok kind = Tok::kEnd;
  absl::string_view text;  // the source text (strings: with quotes and escapes)
  std::string str;         // kString: the unescaped contents
  int64_t id = 0;          // kValue: the value id
  int line = 1;
  int col = 1;
};

inline std::string Where(int line, int col) { return absl::StrCat(line, ":", col, ": "); }

// `t` for an error message: its text, quoted and escaped (at most 40 characters), or "the end
// of the input".
inline std::string DescribeToken(const Token& t) {
  if (t.kind == Tok::kEnd) return "the end of the input";
  absl::string_view text = t.text.substr(0, 40);
  return absl::StrCat("'", absl::CHexEscape(text), t.text.size() > 40 ? "...'" : "'");
}

inline bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c) || c == '.'; }

class Lexer {
 public:
  explicit Lexer(absl::string_view src) : src_(src) {}

  absl::Status Run(std::vector<Token>& out) {
    while (true) {
      SkipSpaceAndComments();
      Token t;
      t.line = line_;
      t.col = col_;
      if (pos_ >= src_.size()) {
        out.push_back(std::move(t));
        return absl::OkStatus();
      }
      size_t start = pos_;
      char c = src_[pos_];
      if (IsIdentStart(c)) {
        t.kind = Tok::kIdent;
        while (pos_ < src_.size() && IsIdentChar(src_[pos_])) Advance();
      } else if (IsDigit(c)) {
        t.kind = LexNumber();
      } else if (c == '"') {
        COIL_PARSE_TRY(LexString(t));
      } else if (c == '%') {
        Advance();
        if (pos_ >= src_.size() || !IsDigit(src_[pos_])) {
          return absl::InvalidArgumentError(
              absl::StrCat(Where(t.line, t.col), "expected a value id (digits) after '%'"));
        }
        while (pos_ < src_.size() && IsDigit(src_[pos_])) Advance();
        t.kind = Tok::kValue;
        if (!absl::SimpleAtoi(src_.substr(start + 1, pos_ - start - 1), &t.id)) {
          return absl::InvalidArgumentError(
              absl::StrCat(Where(t.line, t.col), "value id out of the int64 range"));
        }
      } else {
        t.kind = Tok::kPunct;
        bool two = pos_ + 1 < src_.size() && src_[pos_ + 1] == '=' &&
                   (c == '=' || c == '!' || c == '<');
        if (two) {
          Advance();
          Advance();
        } else if (absl::string_view("()[]{},:=@+-*<").find(c) != absl::string_view::npos) {
          Advance();
        } else {
          return absl::InvalidArgumentError(absl::StrCat(
              Where(t.line, t.col), "unexpected character '",
              absl::CHexEscape(absl::string_view(&src_[pos_], 1)), "'"));
        }
      }
      t.text = src_.substr(start, pos_ - start);
      out.push_back(std::move(t));
    }
  }

 private:
  void Advance() {
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  void SkipSpaceAndComments() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        Advance();
      } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') Advance();
      } else {
        return;
      }
    }
  }

  // digits ['.' digits] [('e' | 'E') ['+' | '-'] digits]
  Tok LexNumber() {
    Tok kind = Tok::kInt;
    while (pos_ < src_.size() && IsDigit(src_[pos_])) Advance();
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && IsDigit(src_[pos_ + 1])) {
      kind = Tok::kFloat;
      Advance();
      while (pos_ < src_.size() && IsDigit(src_[pos_])) Advance();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t k = pos_ + 1;
      if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
      if (k < src_.size() && IsDigit(src_[k])) {
        kind = Tok::kFloat;
        while (pos_ < k) Advance();
        while (pos_ < src_.size() && IsDigit(src_[pos_])) Advance();
      }
    }
    return kind;
  }

  absl::Status LexString(Token& t) {
    size_t start = pos_;
    Advance();  // the opening quote
    while (pos_ < src_.size() && src_[pos_] != '"') {
      if (src_[pos_] == '\\' && pos_ + 1 < src_.size()) Advance();
      Advance();
    }
    if (pos_ >= src_.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(t.line, t.col), "unterminated string"));
    }
    Advance();  // the closing quote
    t.kind = Tok::kString;
    std::string error;
    if (!absl::CUnescape(src_.substr(start + 1, pos_ - start - 2), &t.str, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(t.line, t.col), "invalid escape in string: ", error));
    }
    return absl::OkStatus();
  }

  absl::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace coil::text_internal

#endif  // COIL_IR_INTERNAL_TEXT_LEXER_H_
