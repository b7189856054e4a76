// WriteMemoryJson (memory_json.h).
#include "inspector_web/core/memory_json.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "inspector_web/core/schedule_json.h"

namespace coil::inspector {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool ParseInt(std::string_view s, int64_t *v) {
  if (s.empty() || s.size() > 18) return false;
  int64_t x = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    x = x * 10 + (c - '0');
  }
  *v = x;
  return true;
}

}  // namespace

void ParseSymbolValues(std::string_view text, std::string_view what, SymbolValues *out,
                       std::vector<std::string> *errors) {
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    int64_t v = 0;
    std::string_view name = eq == std::string_view::npos ? item : Trim(item.substr(0, eq));
    if (eq == std::string_view::npos || name.empty() || !ParseInt(Trim(item.substr(eq + 1)), &v)) {
      errors->push_back(std::string(what) + ": '" + std::string(item) +
                        "' is not NAME=INTEGER (a non-negative integer)");
      continue;
    }
    (*out)[std::string(name)] = v;
  }
}

void WriteMemoryJson(const proto::Schedule &schedule, std::string_view dim_option,
                     std::string_view typed, JsonWriter &w) {
  std::vector<std::string> errors;
  SymbolValues typed_values, dim_values;
  ParseSymbolValues(typed, "typed values", &typed_values, &errors);
  ParseSymbolValues(dim_option, "the compile's --dim", &dim_values, &errors);
  SymbolValues env;
  w.BeginObject();
  w.Key("symbols");
  w.BeginArray();
  for (const proto::Symbol &s : schedule.graph().symbols()) {
    int64_t v;
    const char *from;
    if (auto it = typed_values.find(s.name()); it != typed_values.end()) {
      v = it->second, from = "typed";
    } else if (auto it = dim_values.find(s.name()); it != dim_values.end()) {
      v = it->second, from = "dim";
    } else if (s.hint() != 0) {
      v = s.hint(), from = "hint";
    } else {
      v = std::max<int64_t>(1, s.min()), from = "minimum";
    }
    env[s.name()] = v;
    w.BeginObject();
    w.Field("name", s.name());
    w.Field("value", v);
    w.Field("from", from);
    w.EndObject();
  }
  w.EndArray();
  for (const auto &[name, v] : typed_values) {
    if (env.find(name) == env.end()) {
      errors.push_back("typed values: the graph has no symbol '" + name + "'");
    }
  }

  std::vector<LiveRange> live = BufferLiveRanges(schedule);
  std::vector<int64_t> delta(schedule.kernels_size() + 1, 0);
  bool all = true;
  int64_t arena = 0;
  w.Key("buffers");
  w.BeginArray();
  for (int i = 0; i < schedule.buffers_size(); ++i) {
    const proto::Buffer &b = schedule.buffers(i);
    int64_t size = 0, offset = 0;
    bool has_size = b.has_size_bytes() && EvalSymExpr(b.size_bytes(), env, &size);
    bool planned = b.kind() == proto::Buffer::INTERMEDIATE && b.has_arena_offset();
    bool has_offset = planned && EvalSymExpr(b.arena_offset(), env, &offset);
    w.BeginObject();
    w.Field("id", b.id());
    w.Key("size");
    has_size ? w.Int(size) : w.Null();
    w.Key("offset");
    has_offset ? w.Int(offset) : w.Null();
    w.EndObject();
    if (b.kind() != proto::Buffer::INTERMEDIATE) continue;
    if (!has_size || (planned && !has_offset)) {
      all = false;
      continue;
    }
    if (has_offset) arena = std::max(arena, offset + size);
    if (live[i].first >= 0) {
      delta[live[i].first] += size;
      delta[live[i].last + 1] -= size;
    }
  }
  w.EndArray();
  int64_t peak = 0, cur = 0;
  for (int64_t d : delta) peak = std::max(peak, cur += d);
  int64_t planned_arena = 0;
  bool has_arena = schedule.memory_plan().has_arena_bytes() &&
                   EvalSymExpr(schedule.memory_plan().arena_bytes(), env, &planned_arena);
  w.Key("arena_bytes");
  if (has_arena) {
    w.Int(std::max(planned_arena, arena));
  } else if (all) {
    w.Int(arena);
  } else {
    w.Null();
  }
  w.Key("peak_live_bytes");
  all ? w.Int(peak) : w.Null();
  w.Key("errors");
  w.BeginArray();
  for (const std::string &e : errors) w.String(e);
  w.EndArray();
  w.EndObject();
}

}  // namespace coil::inspector
