// WireReader: the protobuf wire format read by hand, so that malformed bytes are reported with
// the byte offset where they break (protobuf's own parser only says "failed").
//
//   WireReader r(bytes, /*base_offset=*/0);
//   while (!r.done()) {
//     uint32_t field; WireType type;
//     if (!r.ReadTag(&field, &type)) return r.error();   // "truncated varint at byte 17"
//     ...
//   }
//
// Offsets are absolute: a reader over a nested message's bytes carries the offset of its
// first byte in the file, so errors deep inside a report still name the file position.
#ifndef COIL_INSPECTOR_WEB_CORE_WIRE_READER_H_
#define COIL_INSPECTOR_WEB_CORE_WIRE_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace coil::inspector {

enum class WireType : int {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

// "varint", "64-bit", "length-delimited", ... for messages.
const char* WireTypeName(WireType type);

// What broke and where (absolute byte offset in the file).
struct WireError {
  std::string what;  // "truncated", "truncated varint", "invalid wire type 7", ...
  size_t offset = 0;
  std::string detail;  // optional specifics: "a 52311-byte field with 1000 bytes left"
};

class WireReader {
 public:
  WireReader(std::string_view data, size_t base_offset) : data_(data), base_(base_offset) {}

  bool done() const { return pos_ >= data_.size(); }
  // Absolute offset of the next unread byte.
  size_t offset() const { return base_ + pos_; }
  const WireError& error() const { return error_; }

  // Each Read* returns false on malformed or truncated input and sets error().
  // ReadTag also rejects field number 0, field numbers above 2^29-1 and wire types 6 and 7.
  bool ReadTag(uint32_t* field, WireType* type);
  bool ReadVarint(uint64_t* value);
  bool ReadFixed32(uint32_t* value);
  bool ReadFixed64(uint64_t* value);
  // A length-delimited payload: its bytes and the absolute offset of their first byte.
  bool ReadLengthDelimited(std::string_view* bytes, size_t* payload_offset);

 private:
  bool Fail(size_t at, std::string what, std::string detail = "");

  std::string_view data_;
  size_t base_;
  size_t pos_ = 0;
  WireError error_;
};

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_WIRE_READER_H_
