// Schema: the field tables of coil's protobuf messages, read from a FileDescriptorSet.
//
// protoc writes the descriptor set of ir/proto/*.proto at build time
// (//inspector_web/core:descriptor_set); CoilSchema() parses the embedded copy once. The
// wire checker (wire_check.h) walks file bytes against these tables to find the message type
// of a file and the exact byte where a malformed one breaks. One source of truth: the tables
// come from the same .proto files as the generated code.
//
//   const MessageSchema* graph = CoilSchema().Find("coil.proto.Graph");
//   const FieldSchema* nodes = graph->Field(4);   // "nodes", repeated message coil.proto.Node
#ifndef COIL_INSPECTOR_WEB_CORE_SCHEMA_H_
#define COIL_INSPECTOR_WEB_CORE_SCHEMA_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "inspector_web/core/wire_reader.h"

namespace coil::inspector {

// google.protobuf.FieldDescriptorProto.Type, the subset that matters for the wire.
enum class FieldType {
  kDouble = 1,
  kFloat = 2,
  kInt64 = 3,
  kUint64 = 4,
  kInt32 = 5,
  kFixed64 = 6,
  kFixed32 = 7,
  kBool = 8,
  kString = 9,
  kGroup = 10,
  kMessage = 11,
  kBytes = 12,
  kUint32 = 13,
  kEnum = 14,
  kSfixed32 = 15,
  kSfixed64 = 16,
  kSint32 = 17,
  kSint64 = 18,
};

struct MessageSchema;

struct FieldSchema {
  int number = 0;
  std::string name;
  FieldType type = FieldType::kInt32;
  bool repeated = false;
  // kMessage / kEnum: the full type name without the leading dot ("coil.proto.SymExpr").
  std::string type_name;
  // kMessage: the message type, resolved when the schema is parsed (null if the set lacks it).
  const MessageSchema* message = nullptr;

  // The wire type a non-packed value of this field has.
  WireType wire_type() const;
  // Repeated scalars may also come packed (one length-delimited run).
  bool packable() const;
};

struct MessageSchema {
  std::string full_name;  // "coil.proto.Graph"
  std::string name;       // "Graph"
  std::map<int, FieldSchema> fields;

  // The field with this number, or null (an unknown field).
  const FieldSchema* Field(int number) const;
};

class Schema {
 public:
  // Parses a serialized google.protobuf.FileDescriptorSet. On malformed input returns false
  // and sets *error (what and the byte offset).
  bool Parse(std::string_view descriptor_set, std::string* error);

  // The message named `full_name` ("coil.proto.Graph"), or null.
  const MessageSchema* Find(std::string_view full_name) const;

 private:
  std::map<std::string, MessageSchema, std::less<>> messages_;
};

// coil's schema, from the descriptor set embedded at build time (parsed on first use).
const Schema& CoilSchema();

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_SCHEMA_H_
