// UTF-8 validation shared by the wire checker (proto3 strings must be UTF-8) and the JSON
// writer (which must never emit invalid UTF-8).
#ifndef COIL_INSPECTOR_WEB_CORE_UTF8_H_
#define COIL_INSPECTOR_WEB_CORE_UTF8_H_

#include <cstddef>
#include <string_view>

namespace coil::inspector {

// Length (1-4) of the valid UTF-8 sequence starting at s[i], or 0 if none starts there
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t Utf8SequenceLength(std::string_view s, size_t i);

// True if all of `s` is valid UTF-8.
bool IsValidUtf8(std::string_view s);

}  // namespace coil::inspector

#endif  // COIL_INSPECTOR_WEB_CORE_UTF8_H_
