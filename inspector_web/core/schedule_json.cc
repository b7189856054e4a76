// WriteScheduleJson (schedule_json.h).
#include "inspector_web/core/schedule_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <unordered_map>

#include "inspector_web/core/format.h"
#include "inspector_web/core/sym_eval.h"

namespace coil::inspector {
namespace {

const char* BufferKindName(int kind) {
  switch (kind) {
    case proto::Buffer::INPUT: return "input";
    case proto::Buffer::CONSTANT: return "constant";
    case proto::Buffer::INTERMEDIATE: return "intermediate";
    case proto::Buffer::OUTPUT: return "output";
    default: return "unspecified";
  }
}

std::string ExprList(const google::protobuf::RepeatedPtrField<proto::SymExpr>& list) {
  return "[" + FormatSymExprList(list) + "]";
}

// "key": value at the hints, or null.
void HintField(JsonWriter& w, const char* key, const proto::SymExpr& e, bool present,
               const SymbolValues& env) {
  w.Key(key);
  int64_t v;
  if (present && EvalSymExpr(e, env, &v)) {
    w.Int(v);
  } else {
    w.Null();
  }
}

void IntArray(JsonWriter& w, const char* key, const google::protobuf::RepeatedField<int32_t>& v) {
  w.Key(key);
  w.BeginArray();
  for (int32_t x : v) w.Int(x);
  w.EndArray();
}

}  // namespace

const char* KernelKindName(int kind) {
  switch (kind) {
    case proto::Kernel::POINTWISE: return "pointwise";
    case proto::Kernel::REDUCTION: return "reduction";
    case proto::Kernel::EXTERN: return "extern";
    default: return "unspecified";
  }
}

namespace {

struct Rgb {
  double r, g, b;
};

Rgb Hsl(double h, double s, double l) {  // h in [0, 1)
  double h6 = h * 6, c = (1 - std::fabs(2 * l - 1)) * s;
  double x = c * (1 - std::fabs(std::fmod(h6, 2.0) - 1)), m = l - c / 2;
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(h6)) {
    case 0: r = c, g = x; break;
    case 1: r = x, g = c; break;
    case 2: g = c, b = x; break;
    case 3: g = x, b = c; break;
    case 4: r = x, b = c; break;
    default: r = c, b = x; break;
  }
  return {(r + m) * 255, (g + m) * 255, (b + m) * 255};
}

double Distance(const Rgb& a, const Rgb& b) {
  return std::sqrt((a.r - b.r) * (a.r - b.r) + (a.g - b.g) * (a.g - b.g) +
                   (a.b - b.b) * (a.b - b.b));
}

}  // namespace

std::string KernelColour(int index) {
  // Kernels near each other in program order are usually near each other in the graph, so
  // each kernel takes the colour of a 72-colour palette (24 hues x 3 lightnesses) farthest
  // from the colours of the kKernelColourWindow kernels before it (the first farthest, so the
  // sequence is fixed). Golden-angle hues at one lightness gave pairs 13 or 21 apart nearly
  // the same colour (RGB distance 14); this keeps any two within the window >= 55 apart
  // (schedule_json_test checks it).
  static const std::vector<Rgb>* palette = [] {
    auto* p = new std::vector<Rgb>;
    const double lightness[] = {0.40, 0.55, 0.70};
    for (int li = 0; li < 3; ++li) {
      for (int h = 0; h < 24; ++h) {
        p->push_back(Hsl(std::fmod(h / 24.0 + li / 72.0, 1.0), li == 2 ? 0.8 : 0.75,
                         lightness[li]));
      }
    }
    return p;
  }();
  static std::vector<int>* chosen = new std::vector<int>;
  if (index < 0) index = 0;
  while (static_cast<int>(chosen->size()) <= index) {
    int k = static_cast<int>(chosen->size()), best = 0;
    double best_distance = -1;
    for (int c = 0; c < static_cast<int>(palette->size()); ++c) {
      double d = 1e9;
      for (int j = std::max(0, k - kKernelColourWindow); j < k; ++j) {
        d = std::min(d, Distance((*palette)[c], (*palette)[(*chosen)[j]]));
      }
      if (d > best_distance + 1e-9) best_distance = d, best = c;
    }
    chosen->push_back(best);
  }
  const Rgb& c = (*palette)[(*chosen)[index]];
  auto byte = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 255.0))); };
  char buf[8];
  std::snprintf(buf, sizeof(buf), "#%02x%02x%02x", byte(c.r), byte(c.g), byte(c.b));
  return buf;
}

std::vector<LiveRange> BufferLiveRanges(const proto::Schedule& schedule) {
  std::unordered_map<int32_t, int> position;  // buffer id -> index in buffers
  for (int i = 0; i < schedule.buffers_size(); ++i) position[schedule.buffers(i).id()] = i;
  std::vector<LiveRange> live(schedule.buffers_size());
  auto touch = [&](int32_t id, int k) {
    auto it = position.find(id);
    if (it == position.end()) return;
    LiveRange& r = live[it->second];
    if (r.first < 0) r.first = k;
    r.last = k;
  };
  for (int k = 0; k < schedule.kernels_size(); ++k) {
    const proto::Kernel& kernel = schedule.kernels(k);
    for (int32_t id : kernel.reads()) touch(id, k);
    for (int32_t id : kernel.writes()) touch(id, k);
    for (int32_t id : kernel.extern_inputs()) touch(id, k);
    if (kernel.extern_output() != 0) touch(kernel.extern_output(), k);
  }
  return live;
}

void WriteScheduleJson(const proto::Schedule& schedule, const GraphIndex& index, JsonWriter& w) {
  SymbolValues env = HintValues(schedule.graph());
  w.BeginObject();

  const proto::ScheduleStats& st = schedule.stats();
  w.Key("stats");
  w.BeginObject();
  w.Field("kernels_unfused", st.kernels_unfused());
  w.Field("kernels", st.kernels());
  w.Field("externs", st.externs());
  w.Field("bytes_moved_unfused_hint", st.bytes_moved_unfused_hint());
  w.Field("bytes_moved_hint", st.bytes_moved_hint());
  w.EndObject();

  const proto::MemoryPlan& mp = schedule.memory_plan();
  w.Key("memory_plan");
  w.BeginObject();
  w.Field("arena_bytes", mp.has_arena_bytes() ? FormatSymExpr(mp.arena_bytes()) : "");
  w.Field("arena_bytes_hint", mp.arena_bytes_hint());
  w.Field("peak_live_bytes_hint", mp.peak_live_bytes_hint());
  w.Field("unplanned_bytes_hint", mp.unplanned_bytes_hint());
  w.EndObject();

  std::vector<int> node_kernel(schedule.graph().nodes_size(), -1);
  w.Key("kernels");
  w.BeginArray();
  for (int k = 0; k < schedule.kernels_size(); ++k) {
    const proto::Kernel& kernel = schedule.kernels(k);
    w.BeginObject();
    w.Field("id", kernel.id());
    w.Field("name", kernel.name());
    w.Field("kind", KernelKindName(kernel.kind()));
    w.Field("colour", KernelColour(k));
    w.Key("nodes");
    w.BeginArray();
    for (int64_t value : kernel.source_values()) {
      const ValueDef* def = index.Find(value);
      if (def == nullptr || def->kind != ValueDef::kNode) continue;
      w.Int(def->index);
      if (node_kernel[def->index] < 0) node_kernel[def->index] = k;
    }
    w.EndArray();
    w.Key("ops");
    w.BeginArray();
    for (const std::string& op : kernel.source_ops()) w.String(op);
    w.EndArray();
    w.Field("extern_op", kernel.extern_op());
    w.Field("ranges", ExprList(kernel.ranges()));
    w.Field("loops", kernel.loops_size());
    IntArray(w, "reads", kernel.reads());
    IntArray(w, "writes", kernel.writes());
    w.Field("bytes_moved", kernel.has_bytes_moved() ? FormatSymExpr(kernel.bytes_moved()) : "");
    w.Field("bytes_moved_hint", kernel.bytes_moved_hint());
    w.EndObject();
  }
  w.EndArray();
  w.Key("node_kernel");
  w.BeginArray();
  for (int k : node_kernel) w.Int(k);
  w.EndArray();

  std::vector<LiveRange> live = BufferLiveRanges(schedule);
  w.Key("buffers");
  w.BeginArray();
  for (int i = 0; i < schedule.buffers_size(); ++i) {
    const proto::Buffer& b = schedule.buffers(i);
    w.BeginObject();
    w.Field("id", b.id());
    w.Field("name", b.name());
    w.Field("kind", BufferKindName(b.kind()));
    w.Field("dtype", DTypeName(b.dtype()));
    w.Field("shape", ExprList(b.shape()));
    w.Field("size", b.has_size_bytes() ? FormatSymExpr(b.size_bytes()) : "");
    HintField(w, "size_hint", b.size_bytes(), b.has_size_bytes(), env);
    bool planned = b.kind() == proto::Buffer::INTERMEDIATE && b.has_arena_offset();
    w.Field("offset", planned ? FormatSymExpr(b.arena_offset()) : "");
    HintField(w, "offset_hint", b.arena_offset(), planned, env);
    w.Field("first", live[i].first);
    w.Field("last", live[i].last);
    w.Field("reuses", b.reuses());
    w.Field("in_place", b.in_place());
    w.EndObject();
  }
  w.EndArray();
  IntArray(w, "outputs", schedule.outputs());

  std::vector<std::vector<int>> finals = DecisionKernels(schedule);
  w.Key("decisions");
  w.BeginArray();
  for (int i = 0; i < schedule.decisions_size(); ++i) {
    const proto::FusionDecision& d = schedule.decisions(i);
    w.BeginObject();
    w.Field("pass", d.pass());
    w.Field("kind", d.kind());
    w.Key("kernels");
    w.BeginArray();
    for (const std::string& k : d.kernels()) w.String(k);
    w.EndArray();
    w.Field("accepted", d.accepted());
    w.Field("reason", d.reason());
    w.Field("bytes_saved_hint", d.bytes_saved_hint());
    w.Key("final_kernels");
    w.BeginArray();
    for (int k : finals[i]) w.Int(k);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

std::vector<std::vector<int>> DecisionKernels(const proto::Schedule& schedule) {
  std::unordered_map<std::string, int> final_index;
  for (int k = 0; k < schedule.kernels_size(); ++k) final_index[schedule.kernels(k).name()] = k;
  // Accepted decisions by the kernel names they join.
  std::unordered_map<std::string, std::vector<int>> joined;
  for (int i = 0; i < schedule.decisions_size(); ++i) {
    const proto::FusionDecision& d = schedule.decisions(i);
    if (!d.accepted()) continue;
    for (const std::string& k : d.kernels()) joined[k].push_back(i);
  }
  // A name's final kernels: itself if it is one, else (depth first, each name once) those of
  // the kernels an accepted decision joined it with.
  auto resolve = [&](const std::string& start, std::set<int>& out) {
    std::set<std::string> seen = {start};
    std::vector<std::string> todo = {start};
    while (!todo.empty()) {
      std::string name = std::move(todo.back());
      todo.pop_back();
      if (auto f = final_index.find(name); f != final_index.end()) {
        out.insert(f->second);
        continue;
      }
      auto j = joined.find(name);
      if (j == joined.end()) continue;
      for (int i : j->second) {
        for (const std::string& other : schedule.decisions(i).kernels()) {
          if (seen.insert(other).second) todo.push_back(other);
        }
      }
    }
  };
  std::vector<std::vector<int>> out(schedule.decisions_size());
  for (int i = 0; i < schedule.decisions_size(); ++i) {
    std::set<int> finals;
    for (const std::string& k : schedule.decisions(i).kernels()) resolve(k, finals);
    out[i].assign(finals.begin(), finals.end());
  }
  return out;
}

}  // namespace coil::inspector
