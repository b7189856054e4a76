// JsonWriter (json_writer.h): comma bookkeeping, string escaping, number formatting.
#include "inspector_web/core/json_writer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "inspector_web/core/check.h"
#include "inspector_web/core/utf8.h"

namespace coil::inspector {

void JsonWriter::PutString(std::string_view s) {
  Put('"');
  size_t i = 0;
  while (i < s.size()) {
    // Fast path: a run of printable ASCII other than '"' and '\\' is copied as is.
    size_t run = i;
    while (run < s.size()) {
      unsigned char r = static_cast<unsigned char>(s[run]);
      if (r < 0x20 || r >= 0x80 || r == '"' || r == '\\') break;
      ++run;
    }
    if (run > i) {
      Put(s.substr(i, run - i));
      i = run;
      continue;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    const char* escape = c == '"'    ? "\\\""
                         : c == '\\' ? "\\\\"
                         : c == '\n' ? "\\n"
                         : c == '\r' ? "\\r"
                         : c == '\t' ? "\\t"
                                     : nullptr;
    if (escape != nullptr) {
      Put(escape);
      ++i;
      continue;
    }
    if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      Put(buf);
      ++i;
      continue;
    }
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      Put("\xEF\xBF\xBD");  // U+FFFD for a byte that starts no valid sequence
      ++i;
      continue;
    }
    Put(s.substr(i, n));
    i += n;
  }
  Put('"');
}

void JsonWriter::PutInt(int64_t v) {
  char buf[24];
  char* end = buf + sizeof(buf);
  char* p = end;
  // Negate through uint64_t so INT64_MIN works.
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) *--p = '-';
  Put(std::string_view(p, end - p));
}

std::string JsonString(std::string_view s) {
  JsonWriter w;
  w.String(s);
  return w.Take();
}

void JsonWriter::BeforeValue() {
  if (!scopes_.empty() && scopes_.back() == Scope::kObject) {
    INSPECTOR_CHECK(key_pending_, "a value inside an object needs a Key first");
    key_pending_ = false;
    return;
  }
  INSPECTOR_CHECK(!scopes_.empty() || out_.empty(), "more than one top-level value");
  if (need_comma_) Put(',');
  need_comma_ = true;
}

void JsonWriter::BeginObject() {
  BeforeValue();
  Put('{');
  scopes_.push_back(Scope::kObject);
  need_comma_ = false;
}

void JsonWriter::EndObject() {
  INSPECTOR_CHECK(!scopes_.empty() && scopes_.back() == Scope::kObject && !key_pending_,
                  "EndObject without a matching BeginObject (or after a dangling Key)");
  scopes_.pop_back();
  Put('}');
  need_comma_ = true;
}

void JsonWriter::BeginArray() {
  BeforeValue();
  Put('[');
  scopes_.push_back(Scope::kArray);
  need_comma_ = false;
}

void JsonWriter::EndArray() {
  INSPECTOR_CHECK(!scopes_.empty() && scopes_.back() == Scope::kArray,
                  "EndArray without a matching BeginArray");
  scopes_.pop_back();
  Put(']');
  need_comma_ = true;
}

void JsonWriter::Key(std::string_view key) {
  INSPECTOR_CHECK(!scopes_.empty() && scopes_.back() == Scope::kObject && !key_pending_,
                  "Key outside an object or twice in a row");
  if (need_comma_) Put(',');
  need_comma_ = true;
  PutString(key);
  Put(':');
  key_pending_ = true;
}

void JsonWriter::String(std::string_view s) {
  BeforeValue();
  PutString(s);
}

void JsonWriter::Int(int64_t v) {
  BeforeValue();
  PutInt(v);
}

void JsonWriter::Double(double v) {
  BeforeValue();
  if (!std::isfinite(v)) {
    Put("null");
    return;
  }
  char buf[32];
  // Shortest of %.6g .. %.17g that reads back exactly.
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  Put(buf);
}

void JsonWriter::Decimal1(double v) {
  if (!std::isfinite(v) || std::fabs(v) > 1e15) {
    Double(v);
    return;
  }
  BeforeValue();
  int64_t tenths = static_cast<int64_t>(std::llround(v * 10));
  if (tenths < 0) {
    Put('-');
    tenths = -tenths;
  }
  PutInt(tenths / 10);
  if (tenths % 10 != 0) {
    Put('.');
    Put(static_cast<char>('0' + tenths % 10));
  }
}

void JsonWriter::Bool(bool v) {
  BeforeValue();
  Put(v ? "true" : "false");
}

void JsonWriter::Null() {
  BeforeValue();
  Put("null");
}

void JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  Put(json);
}

std::string JsonWriter::Take() {
  INSPECTOR_CHECK(scopes_.empty() && !key_pending_, "Take on an unbalanced document");
  std::string out(out_.data(), out_.size());
  out_.clear();
  need_comma_ = false;
  return out;
}

}  // namespace coil::inspector
