// JsonWriter: a small streaming JSON writer for the inspector's wasm API (no dependency).
//
// Example:
//   JsonWriter w;
//   w.BeginObject();
//   w.Key("nodes"); w.Int(12);
//   w.Key("ops"); w.BeginArray(); w.String("aten.add"); w.EndArray();
//   w.EndObject();
//   std::string json = w.Take();   // {"nodes":12,"ops":["aten.add"]}
//
// Commas are inserted automatically. Strings are escaped per RFC 8259 (bytes that are not
// valid UTF-8 become U+FFFD, so the output always parses). Non-finite doubles become null
// (JSON has no NaN or infinity). Misuse (a value where a key is due, unbalanced End*) is a
// programming error and CHECK-fails.
#ifndef COIL_INSPECTOR_WEB_CORE_JSON_WRITER_H_
#define COIL_INSPECTOR_WEB_CORE_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace coil::inspector {

class JsonWriter {
 public:
  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  // The next value's key; only inside an object.
  void Key(std::string_view key);

  void String(std::string_view s);
  void Int(int64_t v);
  void Double(double v);
  // `v` rounded to one decimal ("12", "12.5", "-0.3"): pixel coordinates. Much faster than
  // Double (no printf), which matters for layouts with 100,000 numbers in wasm.
  void Decimal1(double v);
  void Bool(bool v);
  void Null();
  // Splices already-serialized JSON (one complete value) as the next value.
  void Raw(std::string_view json);

  // Shorthands for Key(k) followed by the value.
  void Field(std::string_view key, std::string_view s) {
    Key(key);
    String(s);
  }
  void Field(std::string_view key, const char* s) {
    Key(key);
    String(s);
  }
  void Field(std::string_view key, int64_t v) {
    Key(key);
    Int(v);
  }
  void Field(std::string_view key, int v) {
    Key(key);
    Int(v);
  }
  void Field(std::string_view key, double v) {
    Key(key);
    Double(v);
  }
  void Field(std::string_view key, bool v) {
    Key(key);
    Bool(v);
  }

  // Expected output size, to grow the buffer once instead of doubling.
  void Reserve(size_t bytes) { out_.reserve(bytes); }

  // The document; the writer must be balanced (every Begin has its End).
  std::string Take();

 private:
  enum class Scope { kObject, kArray };
  void BeforeValue();

  void Put(char c) { out_.push_back(c); }
  void Put(std::string_view s) { out_.insert(out_.end(), s.begin(), s.end()); }
  void PutInt(int64_t v);
  void PutString(std::string_view s);

  // A vector rather than a std::string: its members inline, while libc++'s std::string
  // members are out-of-line calls (extern templates), which dominated in wasm profiles.
  std::vector<char> out_;
  std::vector<Scope> scopes_;
  bool need_comma_ = false;
  bool key_pending_ = false;
};

// `s` as a JSON string literal (quotes included).
std::string JsonString(std::string_view s);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_JSON_WRITER_H_
