// JsonValue: a small strict JSON parser for tests (testonly), so they can assert on the
// structure of what the inspector core writes instead of matching substrings.
//
//   JsonValue v = ParseJson(text);          // CHECK-fails (with the position) on bad JSON
//   v["stages"][0]["key"].str()             // "capture.0"
//   v["graph"]["node_count"].num()          // 21
//   v.has("diff"), v["nodes"].size()
#ifndef COIL_INSPECTOR_WEB_TESTING_JSON_VALUE_H_
#define COIL_INSPECTOR_WEB_TESTING_JSON_VALUE_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace coil::inspector::testing {

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  // Accessors CHECK the kind.
  bool boolean() const;
  double num() const;
  int64_t integer() const;  // num() that must be integral
  const std::string& str() const;
  size_t size() const;  // array or object
  const JsonValue& operator[](size_t i) const;
  const JsonValue& operator[](const std::string& key) const;  // CHECKs the key exists
  bool has(const std::string& key) const;
  const std::vector<JsonValue>& array() const;
  const std::map<std::string, JsonValue>& object() const;

 private:
  friend class JsonParser;
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> array_;
  std::map<std::string, JsonValue> object_;
};

// Parses RFC 8259 JSON (whole input, one value). On malformed input, CHECK-fails naming the
// byte position, so a test shows where the writer went wrong.
JsonValue ParseJson(std::string_view text);

// True when `text` is valid JSON; *error gets what and where otherwise.
bool IsValidJson(std::string_view text, std::string* error);

}  // namespace coil::inspector::testing

#endif  // COIL_INSPECTOR_WEB_TESTING_JSON_VALUE_H_
