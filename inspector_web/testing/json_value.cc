// The test JSON parser (json_value.h): recursive descent, strict (no trailing commas, no
// leading zeros, escapes checked, UTF-16 surrogate pairs combined).
#include "inspector_web/testing/json_value.h"

#include <cmath>
#include <cstdlib>

#include "inspector_web/core/check.h"

namespace coil::inspector::testing {

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  bool Parse(JsonValue* out, std::string* error) {
    bool ok = Value(out, 0) && (SkipSpace(), pos_ == text_.size() || Fail("trailing characters"));
    if (!ok) *error = error_;
    return ok;
  }

 private:
  bool Fail(const std::string& what) {
    if (error_.empty()) error_ = what + " at byte " + std::to_string(pos_);
    return false;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return Fail("bad literal");
    pos_ += word.size();
    return true;
  }
  bool Value(JsonValue* v, int depth) {
    if (depth > 200) return Fail("nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("unexpected end");
    char c = text_[pos_];
    if (c == '{') return Object(v, depth);
    if (c == '[') return Array(v, depth);
    if (c == '"') {
      v->kind_ = JsonValue::Kind::kString;
      return String(&v->string_);
    }
    if (c == 't' || c == 'f') {
      v->kind_ = JsonValue::Kind::kBool;
      v->bool_ = c == 't';
      return Literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      v->kind_ = JsonValue::Kind::kNull;
      return Literal("null");
    }
    return Number(v);
  }
  bool Number(JsonValue* v) {
    size_t start = pos_;
    auto digit = [&] { return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; };
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    if (!digit()) return Fail("expected a value");
    if (text_[pos_] == '0') {
      ++pos_;
      if (digit()) return Fail("leading zero");
    } else {
      while (digit()) ++pos_;
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!digit()) return Fail("digits expected after '.'");
      while (digit()) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!digit()) return Fail("digits expected in exponent");
      while (digit()) ++pos_;
    }
    v->kind_ = JsonValue::Kind::kNumber;
    v->number_ = std::strtod(std::string(text_.substr(start, pos_ - start)).c_str(), nullptr);
    return true;
  }
  static void AppendUtf8(std::string* s, uint32_t cp) {
    if (cp < 0x80) {
      *s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *s += static_cast<char>(0xC0 | (cp >> 6));
      *s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *s += static_cast<char>(0xE0 | (cp >> 12));
      *s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *s += static_cast<char>(0xF0 | (cp >> 18));
      *s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  bool Hex4(uint32_t* out) {
    if (pos_ + 4 > text_.size()) return Fail("short \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v |= c - 'A' + 10;
      else
        return Fail("bad hex digit in \\u escape");
    }
    *out = v;
    return true;
  }
  bool String(std::string* s) {
    ++pos_;  // opening quote
    while (true) {
      if (pos_ >= text_.size()) return Fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return Fail("control character in string");
      if (c != '\\') {
        *s += static_cast<char>(c);
        ++pos_;
        continue;
      }
      if (++pos_ >= text_.size()) return Fail("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
        case '"': *s += '"'; break;
        case '\\': *s += '\\'; break;
        case '/': *s += '/'; break;
        case 'b': *s += '\b'; break;
        case 'f': *s += '\f'; break;
        case 'n': *s += '\n'; break;
        case 'r': *s += '\r'; break;
        case 't': *s += '\t'; break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo;
            if (text_.substr(pos_, 2) != "\\u") return Fail("lone high surrogate");
            pos_ += 2;
            if (!Hex4(&lo) || lo < 0xDC00 || lo > 0xDFFF) return Fail("bad low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return Fail("lone low surrogate");
          }
          AppendUtf8(s, cp);
          break;
        }
        default: return Fail("bad escape");
      }
    }
  }
  bool Array(JsonValue* v, int depth) {
    ++pos_;
    v->kind_ = JsonValue::Kind::kArray;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      v->array_.emplace_back();
      if (!Value(&v->array_.back(), depth + 1)) return false;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return Fail("expected ',' or ']'");
    }
  }
  bool Object(JsonValue* v, int depth) {
    ++pos_;
    v->kind_ = JsonValue::Kind::kObject;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Fail("expected a key");
      std::string key;
      if (!String(&key)) return false;
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':') return Fail("expected ':'");
      ++pos_;
      if (v->object_.count(key) != 0) return Fail("duplicate key \"" + key + "\"");
      if (!Value(&v->object_[key], depth + 1)) return false;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return Fail("expected ',' or '}'");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

bool JsonValue::boolean() const {
  INSPECTOR_CHECK(kind_ == Kind::kBool, "not a JSON bool");
  return bool_;
}
double JsonValue::num() const {
  INSPECTOR_CHECK(kind_ == Kind::kNumber, "not a JSON number");
  return number_;
}
int64_t JsonValue::integer() const {
  INSPECTOR_CHECK(kind_ == Kind::kNumber && std::floor(number_) == number_,
                  "not an integral JSON number");
  return static_cast<int64_t>(number_);
}
const std::string& JsonValue::str() const {
  INSPECTOR_CHECK(kind_ == Kind::kString, "not a JSON string");
  return string_;
}
size_t JsonValue::size() const {
  INSPECTOR_CHECK(kind_ == Kind::kArray || kind_ == Kind::kObject, "not a JSON array or object");
  return kind_ == Kind::kArray ? array_.size() : object_.size();
}
const JsonValue& JsonValue::operator[](size_t i) const {
  INSPECTOR_CHECK(kind_ == Kind::kArray && i < array_.size(), "JSON array index out of range");
  return array_[i];
}
const JsonValue& JsonValue::operator[](const std::string& key) const {
  INSPECTOR_CHECK(kind_ == Kind::kObject, "not a JSON object");
  auto it = object_.find(key);
  if (it == object_.end()) {
    std::fprintf(stderr, "JSON object has no key \"%s\"\n", key.c_str());
    std::abort();
  }
  return it->second;
}
bool JsonValue::has(const std::string& key) const {
  return kind_ == Kind::kObject && object_.count(key) != 0;
}
const std::vector<JsonValue>& JsonValue::array() const {
  INSPECTOR_CHECK(kind_ == Kind::kArray, "not a JSON array");
  return array_;
}
const std::map<std::string, JsonValue>& JsonValue::object() const {
  INSPECTOR_CHECK(kind_ == Kind::kObject, "not a JSON object");
  return object_;
}

bool IsValidJson(std::string_view text, std::string* error) {
  JsonValue v;
  return JsonParser(text).Parse(&v, error);
}

JsonValue ParseJson(std::string_view text) {
  JsonValue v;
  std::string error;
  if (!JsonParser(text).Parse(&v, &error)) {
    std::fprintf(stderr, "invalid JSON: %s\n", error.c_str());
    std::abort();
  }
  return v;
}

}  // namespace coil::inspector::testing
