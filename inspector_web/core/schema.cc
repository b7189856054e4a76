// Schema (schema.h): a FileDescriptorSet parsed with WireReader, keeping only what the wire
// checker needs (field numbers, names, types, labels, message type names).
#include "inspector_web/core/schema.h"

#include <utility>

#include "inspector_web/core/check.h"
#include "inspector_web/core/descriptor_set.h"

namespace coil::inspector {
namespace {

// Field numbers in google/protobuf/descriptor.proto.
constexpr uint32_t kSetFile = 1;            // FileDescriptorSet.file
constexpr uint32_t kFilePackage = 2;        // FileDescriptorProto.package
constexpr uint32_t kFileMessageType = 4;    // FileDescriptorProto.message_type
constexpr uint32_t kMessageName = 1;        // DescriptorProto.name
constexpr uint32_t kMessageField = 2;       // DescriptorProto.field
constexpr uint32_t kMessageNestedType = 3;  // DescriptorProto.nested_type
constexpr uint32_t kFieldName = 1;          // FieldDescriptorProto.name
constexpr uint32_t kFieldNumber = 3;        // FieldDescriptorProto.number
constexpr uint32_t kFieldLabel = 4;         // FieldDescriptorProto.label
constexpr uint32_t kFieldType = 5;          // FieldDescriptorProto.type
constexpr uint32_t kFieldTypeName = 6;      // FieldDescriptorProto.type_name
constexpr uint64_t kLabelRepeated = 3;

// Calls on_field(number, wire type, reader) for each field of `bytes`; on_field consumes
// the value. Stops at the first error.
template <typename F>
bool ForEachField(std::string_view bytes, size_t offset, std::string* error, F on_field) {
  WireReader r(bytes, offset);
  while (!r.done()) {
    uint32_t number = 0;
    WireType type;
    if (!r.ReadTag(&number, &type)) {
      *error = r.error().what + " at byte " + std::to_string(r.error().offset);
      return false;
    }
    if (!on_field(number, type, r)) {
      if (error->empty()) *error = r.error().what + " at byte " + std::to_string(r.error().offset);
      return false;
    }
  }
  return true;
}

// Skips a value of wire type `type`.
bool Skip(WireReader& r, WireType type) {
  uint64_t u64;
  uint32_t u32;
  std::string_view bytes;
  size_t at;
  switch (type) {
    case WireType::kVarint: return r.ReadVarint(&u64);
    case WireType::kFixed64: return r.ReadFixed64(&u64);
    case WireType::kFixed32: return r.ReadFixed32(&u32);
    case WireType::kLengthDelimited: return r.ReadLengthDelimited(&bytes, &at);
    default: return false;  // groups do not occur in descriptors
  }
}

bool ParseField(std::string_view bytes, size_t offset, FieldSchema* f, std::string* error) {
  return ForEachField(bytes, offset, error, [&](uint32_t n, WireType t, WireReader& r) {
    uint64_t v = 0;
    std::string_view s;
    size_t at;
    if (n == kFieldName && t == WireType::kLengthDelimited) {
      if (!r.ReadLengthDelimited(&s, &at)) return false;
      f->name = std::string(s);
    } else if (n == kFieldTypeName && t == WireType::kLengthDelimited) {
      if (!r.ReadLengthDelimited(&s, &at)) return false;
      f->type_name = std::string(!s.empty() && s[0] == '.' ? s.substr(1) : s);
    } else if (n == kFieldNumber && t == WireType::kVarint) {
      if (!r.ReadVarint(&v)) return false;
      f->number = static_cast<int>(v);
    } else if (n == kFieldLabel && t == WireType::kVarint) {
      if (!r.ReadVarint(&v)) return false;
      f->repeated = v == kLabelRepeated;
    } else if (n == kFieldType && t == WireType::kVarint) {
      if (!r.ReadVarint(&v)) return false;
      if (v < 1 || v > 18) {
        *error = "field type " + std::to_string(v) + " out of range";
        return false;
      }
      f->type = static_cast<FieldType>(v);
    } else {
      return Skip(r, t);
    }
    return true;
  });
}

bool ParseMessage(std::string_view bytes, size_t offset, const std::string& scope,
                  std::map<std::string, MessageSchema, std::less<>>* out, std::string* error) {
  MessageSchema m;
  std::vector<std::pair<std::string_view, size_t>> nested;
  bool ok = ForEachField(bytes, offset, error, [&](uint32_t n, WireType t, WireReader& r) {
    if (t != WireType::kLengthDelimited ||
        (n != kMessageName && n != kMessageField && n != kMessageNestedType)) {
      return Skip(r, t);
    }
    std::string_view s;
    size_t at;
    if (!r.ReadLengthDelimited(&s, &at)) return false;
    if (n == kMessageName) {
      m.name = std::string(s);
    } else if (n == kMessageField) {
      FieldSchema f;
      if (!ParseField(s, at, &f, error)) return false;
      m.fields[f.number] = std::move(f);
    } else {
      nested.emplace_back(s, at);  // parsed once this message's name is known
    }
    return true;
  });
  if (!ok) return false;
  m.full_name = scope.empty() ? m.name : scope + "." + m.name;
  for (const auto& [b, at] : nested) {
    if (!ParseMessage(b, at, m.full_name, out, error)) return false;
  }
  std::string key = m.full_name;
  (*out)[key] = std::move(m);
  return true;
}

}  // namespace

WireType FieldSchema::wire_type() const {
  switch (type) {
    case FieldType::kDouble:
    case FieldType::kFixed64:
    case FieldType::kSfixed64: return WireType::kFixed64;
    case FieldType::kFloat:
    case FieldType::kFixed32:
    case FieldType::kSfixed32: return WireType::kFixed32;
    case FieldType::kString:
    case FieldType::kBytes:
    case FieldType::kMessage: return WireType::kLengthDelimited;
    case FieldType::kGroup: return WireType::kStartGroup;
    default: return WireType::kVarint;
  }
}

bool FieldSchema::packable() const {
  WireType w = wire_type();
  return repeated && (w == WireType::kVarint || w == WireType::kFixed32 || w == WireType::kFixed64);
}

const FieldSchema* MessageSchema::Field(int number) const {
  auto it = fields.find(number);
  return it == fields.end() ? nullptr : &it->second;
}

bool Schema::Parse(std::string_view descriptor_set, std::string* error) {
  error->clear();
  messages_.clear();
  bool ok = ForEachField(descriptor_set, 0, error, [&](uint32_t n, WireType t, WireReader& r) {
    if (n != kSetFile || t != WireType::kLengthDelimited) return Skip(r, t);
    std::string_view file;
    size_t file_at;
    if (!r.ReadLengthDelimited(&file, &file_at)) return false;
    // The package comes before the messages in protoc's output, but do not rely on it.
    std::string package;
    std::vector<std::pair<std::string_view, size_t>> messages;
    bool ok = ForEachField(file, file_at, error, [&](uint32_t fn, WireType ft, WireReader& fr) {
      if (ft != WireType::kLengthDelimited || (fn != kFilePackage && fn != kFileMessageType)) {
        return Skip(fr, ft);
      }
      std::string_view s;
      size_t at;
      if (!fr.ReadLengthDelimited(&s, &at)) return false;
      if (fn == kFilePackage) {
        package = std::string(s);
      } else {
        messages.emplace_back(s, at);
      }
      return true;
    });
    if (!ok) return false;
    for (const auto& [m, at] : messages) {
      if (!ParseMessage(m, at, package, &messages_, error)) return false;
    }
    return true;
  });
  if (!ok) return false;
  // Message fields point at their types (std::map nodes do not move).
  for (auto& [name, message] : messages_) {
    for (auto& [number, field] : message.fields) {
      if (field.type == FieldType::kMessage) field.message = Find(field.type_name);
    }
  }
  return true;
}

const MessageSchema* Schema::Find(std::string_view full_name) const {
  auto it = messages_.find(full_name);
  return it == messages_.end() ? nullptr : &it->second;
}

const Schema& CoilSchema() {
  static const Schema* schema = [] {
    auto* s = new Schema;
    std::string error;
    bool ok = s->Parse(DescriptorSetBytes(), &error);
    INSPECTOR_CHECK(ok, error.c_str());
    return s;
  }();
  return *schema;
}

}  // namespace coil::inspector
