// The wasm module's C API: what the page's JavaScript calls (through emscripten's ccall).
// Each function returns a JSON document (core/inspector.h) as a NUL-terminated UTF-8 string
// owned by the module, valid until the next call; coil_result_size() is its length in bytes.
//
//   JS:  const ptr = Module._malloc(bytes.length); Module.HEAPU8.set(bytes, ptr);
//        const json = Module.ccall('coil_open', 'string', ['number', 'number', 'string'],
//                                  [ptr, bytes.length, 'report.pb']);
//        Module._free(ptr);
//        Module.ccall('coil_stage', 'string', ['number'], [0]);
#include <emscripten/emscripten.h>

#include <cstdint>
#include <string>

#include "inspector_web/core/inspector.h"

namespace {

coil::inspector::Inspector& Session() {
  static auto* inspector = new coil::inspector::Inspector;
  return *inspector;
}

std::string& Held() {
  static auto* held = new std::string;
  return *held;
}

const char* Hold(std::string json) {
  Held() = std::move(json);
  return Held().c_str();
}

}  // namespace

extern "C" {

// Opens a file's bytes (copied; the caller frees its buffer). Returns the overview.
EMSCRIPTEN_KEEPALIVE const char* coil_open(const uint8_t* data, int size, const char* name) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size < 0 ? 0 : size);
  return Hold(Session().Open(bytes, name == nullptr ? "" : name));
}

// One stage of the open file: graph, layout, summary and the stage's own parts.
EMSCRIPTEN_KEEPALIVE const char* coil_stage(int index) { return Hold(Session().StageJson(index)); }

// The details of one node of a stage.
EMSCRIPTEN_KEEPALIVE const char* coil_node(int stage, int node) {
  return Hold(Session().NodeJson(stage, node));
}

// Ops removed and added between two stages.
EMSCRIPTEN_KEEPALIVE const char* coil_diff(int before, int after) {
  return Hold(Session().DiffJson(before, after));
}

// A schedule stage's memory plan at symbol values: `typed` is "name=N,..." (may be empty).
EMSCRIPTEN_KEEPALIVE const char* coil_memory(int stage, const char* typed) {
  return Hold(Session().MemoryJson(stage, typed == nullptr ? "" : typed));
}

// A stage's layout with the name path groups `collapsed` ("3,5" or "auto") drawn collapsed.
EMSCRIPTEN_KEEPALIVE const char* coil_view(int stage, const char* collapsed) {
  return Hold(Session().ViewJson(stage, collapsed == nullptr ? "" : collapsed));
}

// Loads a second file (copied) to compare the open one with; {"ok": ...}.
EMSCRIPTEN_KEEPALIVE const char* coil_open_compare(const uint8_t* data, int size,
                                                   const char* name) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size < 0 ? 0 : size);
  return Hold(Session().OpenCompare(bytes, name == nullptr ? "" : name));
}

// The open file against the compare file (core/compare.h).
EMSCRIPTEN_KEEPALIVE const char* coil_compare() { return Hold(Session().CompareJson()); }

// Byte length of the last returned document (so JS can decode it without scanning for the
// terminating NUL).
EMSCRIPTEN_KEEPALIVE int coil_result_size() { return static_cast<int>(Held().size()); }

}  // extern "C"
