// CheckWire (wire_check.h): a recursive walk over the bytes, schema-driven.
#include "inspector_web/core/wire_check.h"

#include <utility>
#include <vector>

#include "inspector_web/core/check.h"
#include "inspector_web/core/utf8.h"

namespace coil::inspector {
namespace {

class Checker {
 public:
  WireCheck Run(const MessageSchema& message, std::string_view bytes) {
    root_ = &message;
    Walk(message, bytes, 0, 1);
    return std::move(result_);
  }

 private:
  bool Fail(size_t offset, std::string problem, std::string detail = "") {
    result_.ok = false;
    result_.problem = std::move(problem);
    result_.detail = std::move(detail);
    result_.offset = offset;
    // The path is only spelled out on failure; walking keeps (field, index) pairs.
    result_.path = root_->name;
    for (const auto& [field, index] : path_) {
      result_.path += "." + field->name;
      if (field->repeated) result_.path += "[" + std::to_string(index) + "]";
    }
    return false;
  }
  bool FailReader(const WireReader& r) {
    return Fail(r.error().offset, r.error().what, r.error().detail);
  }

  bool Walk(const MessageSchema& message, std::string_view bytes, size_t base, int depth) {
    if (depth > kMaxMessageDepth) {
      return Fail(base, "messages nested deeper than " + std::to_string(kMaxMessageDepth));
    }
    WireReader r(bytes, base);
    std::vector<int> counts;  // per field number seen so far, for the [i] in paths
    while (!r.done()) {
      size_t tag_at = r.offset();
      uint32_t number = 0;
      WireType wire;
      if (!r.ReadTag(&number, &wire)) return FailReader(r);
      const FieldSchema* field = message.Field(static_cast<int>(number));
      if (field == nullptr) {
        ++result_.unknown_fields;
        if (!SkipUnknown(r, wire, number, depth)) return false;
        continue;
      }
      ++result_.known_fields;
      int index = 0;
      if (field->repeated) {
        if (counts.size() <= number) counts.resize(number + 1, 0);
        index = counts[number]++;
      }
      path_.emplace_back(field, index);
      bool ok = CheckValue(*field, wire, r, tag_at, depth);
      path_.pop_back();
      if (!ok) return false;
    }
    return true;
  }

  bool CheckValue(const FieldSchema& field, WireType wire, WireReader& r, size_t tag_at,
                  int depth) {
    WireType want = field.wire_type();
    if (wire == WireType::kLengthDelimited && field.packable()) {
      std::string_view run;
      size_t at;
      if (!r.ReadLengthDelimited(&run, &at)) return FailReader(r);
      WireReader packed(run, at);
      while (!packed.done()) {
        if (!ReadScalar(packed, want)) return FailReader(packed);
      }
      return true;
    }
    if (wire != want) {
      return Fail(
          tag_at, "wrong wire type",
          std::string(WireTypeName(wire)) + " value for a " + WireTypeName(want) + " field");
    }
    if (want != WireType::kLengthDelimited) {
      if (want == WireType::kStartGroup) return Fail(tag_at, "groups are not supported");
      return ReadScalar(r, want) || FailReader(r);
    }
    std::string_view payload;
    size_t at;
    if (!r.ReadLengthDelimited(&payload, &at)) return FailReader(r);
    if (field.type == FieldType::kString) {
      if (!IsValidUtf8(payload)) return Fail(at, "invalid UTF-8 in a string field");
      return true;
    }
    if (field.type == FieldType::kBytes) return true;
    const MessageSchema* sub = field.message;
    INSPECTOR_CHECK(sub != nullptr, "the schema lacks a message type it refers to");
    return Walk(*sub, payload, at, depth + 1);
  }

  static bool ReadScalar(WireReader& r, WireType type) {
    uint64_t u64;
    uint32_t u32;
    switch (type) {
      case WireType::kVarint: return r.ReadVarint(&u64);
      case WireType::kFixed64: return r.ReadFixed64(&u64);
      case WireType::kFixed32: return r.ReadFixed32(&u32);
      default: return false;
    }
  }

  // Skips an unknown field's value; groups are skipped up to their matching end tag.
  bool SkipUnknown(WireReader& r, WireType wire, uint32_t number, int depth) {
    switch (wire) {
      case WireType::kVarint:
      case WireType::kFixed64:
      case WireType::kFixed32: return ReadScalar(r, wire) || FailReader(r);
      case WireType::kLengthDelimited: {
        std::string_view payload;
        size_t at;
        return r.ReadLengthDelimited(&payload, &at) || FailReader(r);
      }
      case WireType::kStartGroup: {
        if (depth >= kMaxMessageDepth) {
          return Fail(r.offset(), "groups nested deeper than " + std::to_string(kMaxMessageDepth));
        }
        while (true) {
          if (r.done()) return Fail(r.offset(), "truncated", "a group without its end tag");
          uint32_t n = 0;
          WireType w;
          size_t at = r.offset();
          if (!r.ReadTag(&n, &w)) return FailReader(r);
          if (w == WireType::kEndGroup) {
            if (n != number) return Fail(at, "end-group tag does not match its start");
            return true;
          }
          if (!SkipUnknown(r, w, n, depth + 1)) return false;
        }
      }
      case WireType::kEndGroup: return Fail(r.offset(), "end-group tag without a start");
    }
    return false;
  }

  const MessageSchema* root_ = nullptr;
  std::vector<std::pair<const FieldSchema*, int>> path_;
  WireCheck result_;
};

}  // namespace

WireCheck CheckWire(const MessageSchema& message, std::string_view bytes) {
  return Checker().Run(message, bytes);
}

}  // namespace coil::inspector
