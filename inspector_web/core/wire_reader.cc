// WireReader (wire_reader.h): varints, fixed-width values, tags and length prefixes.
#include "inspector_web/core/wire_reader.h"

#include <utility>

namespace coil::inspector {

const char* WireTypeName(WireType type) {
  switch (type) {
    case WireType::kVarint: return "varint";
    case WireType::kFixed64: return "64-bit";
    case WireType::kLengthDelimited: return "length-delimited";
    case WireType::kStartGroup: return "start-group";
    case WireType::kEndGroup: return "end-group";
    case WireType::kFixed32: return "32-bit";
  }
  return "invalid";
}

bool WireReader::Fail(size_t at, std::string what, std::string detail) {
  error_.what = std::move(what);
  error_.detail = std::move(detail);
  error_.offset = base_ + at;
  return false;
}

bool WireReader::ReadVarint(uint64_t* value) {
  size_t start = pos_;
  uint64_t result = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos_ >= data_.size()) return Fail(start, "truncated varint");
    uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && byte > 1) return Fail(start, "varint longer than 64 bits");
    result |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return Fail(start, "varint longer than 10 bytes");
}

bool WireReader::ReadFixed32(uint32_t* value) {
  if (data_.size() - pos_ < 4) return Fail(pos_, "truncated 32-bit value");
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(data_[pos_ + i]);
  pos_ += 4;
  *value = v;
  return true;
}

bool WireReader::ReadFixed64(uint64_t* value) {
  if (data_.size() - pos_ < 8) return Fail(pos_, "truncated 64-bit value");
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(data_[pos_ + i]);
  pos_ += 8;
  *value = v;
  return true;
}

bool WireReader::ReadTag(uint32_t* field, WireType* type) {
  size_t start = pos_;
  uint64_t tag = 0;
  if (!ReadVarint(&tag)) return false;
  uint64_t number = tag >> 3;
  int wire = static_cast<int>(tag & 7);
  if (wire == 6 || wire == 7) {
    return Fail(start, "invalid wire type " + std::to_string(wire));
  }
  if (number == 0) return Fail(start, "field number 0");
  if (number > (1u << 29) - 1)
    return Fail(start, "field number " + std::to_string(number) + " beyond the protobuf maximum");
  *field = static_cast<uint32_t>(number);
  *type = static_cast<WireType>(wire);
  return true;
}

bool WireReader::ReadLengthDelimited(std::string_view* bytes, size_t* payload_offset) {
  size_t start = pos_;
  uint64_t length = 0;
  if (!ReadVarint(&length)) return false;
  if (length > data_.size() - pos_) {
    return Fail(start, "truncated",
                "a " + std::to_string(length) + "-byte field with " +
                    std::to_string(data_.size() - pos_) + " bytes left");
  }
  *payload_offset = base_ + pos_;
  *bytes = data_.substr(pos_, static_cast<size_t>(length));
  pos_ += static_cast<size_t>(length);
  return true;
}

}  // namespace coil::inspector
