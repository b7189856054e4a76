// CheckWire: walks protobuf bytes against a message schema and reports the first place where
// they cannot be that message, with the absolute byte offset and the field path.
//
//   WireCheck c = CheckWire(*CoilSchema().Find("coil.proto.CompileReport"), bytes);
//   if (!c.ok) ... c.problem  // "truncated"
//                 c.detail   // "a 52311-byte field with 1000 bytes left"
//                 c.offset   // 1234
//                 c.path     // "CompileReport.stages[3].kernel_module"
//
// What it checks: the wire format itself (varints, lengths, tags), that every known field has
// the wire type its declaration implies (packed repeated scalars allowed), that message fields
// hold valid messages of their type (recursively, at most 100 deep as protobuf's parser),
// and that string fields are valid UTF-8 (proto3 requires it). Unknown field numbers are
// counted, not rejected (a newer writer may add fields); detect.h uses the counts to tell
// message types apart.
#ifndef COIL_INSPECTOR_WEB_CORE_WIRE_CHECK_H_
#define COIL_INSPECTOR_WEB_CORE_WIRE_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "inspector_web/core/schema.h"

namespace coil::inspector {

struct WireCheck {
  bool ok = true;
  std::string problem;       // what broke (empty when ok): "truncated", "invalid wire type 7", ...
  std::string detail;        // optional specifics: "a 52311-byte field with 1000 bytes left"
  size_t offset = 0;         // where: absolute byte offset in the checked bytes
  std::string path;          // where: the field path, e.g. "CompileReport.stages[3].schedule"
  int64_t known_fields = 0;  // field values whose number the schema knows (all depths)
  int64_t unknown_fields = 0;  // field values with numbers the schema does not know
};

// Protobuf's own default recursion limit.
inline constexpr int kMaxMessageDepth = 100;

// `message` comes from a Schema (its message fields point at their types).
WireCheck CheckWire(const MessageSchema& message, std::string_view bytes);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_WIRE_CHECK_H_
