// CompareJson (compare.h): two compiles side by side, stage by stage.
#include "inspector_web/core/compare.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "inspector_web/core/graph_index.h"
#include "inspector_web/core/json_writer.h"
#include "inspector_web/core/provenance.h"
#include "inspector_web/core/summary.h"

namespace coil::inspector {
namespace {

void WriteOptions(const proto::CompileReport& a, const proto::CompileReport& b, JsonWriter& w) {
  std::map<std::string, std::pair<std::string, std::string>> rows;
  std::set<std::string> in_a, in_b;
  for (const auto& [k, v] : a.options()) {
    rows[k].first = v;
    in_a.insert(k);
  }
  for (const auto& [k, v] : b.options()) {
    rows[k].second = v;
    in_b.insert(k);
  }
  w.Key("options");
  w.BeginArray();
  for (const auto& [k, v] : rows) {
    if (v.first == v.second && in_a.count(k) == in_b.count(k)) continue;
    w.BeginArray();
    w.String(k);
    w.String(in_a.count(k) != 0 ? v.first : "(not set)");
    w.String(in_b.count(k) != 0 ? v.second : "(not set)");
    w.EndArray();
  }
  w.EndArray();
}

// Name path (provenance key) -> node count.
std::map<std::string, int> NameCounts(const proto::Graph& g) {
  std::map<std::string, int> m;
  for (const proto::Node& n : g.nodes()) {
    std::string k = ProvenanceKey(n);
    if (!k.empty()) ++m[k];
  }
  return m;
}

void WriteNames(const char* key, const std::vector<std::string>& names, JsonWriter& w) {
  w.Key(key);
  w.BeginArray();
  for (size_t i = 0; i < names.size() && i < static_cast<size_t>(kCompareListed); ++i) {
    w.String(names[i]);
  }
  w.EndArray();
}

void WriteStageRow(const std::string& key, const Stage* sa, const Stage* sb, JsonWriter& w) {
  w.BeginObject();
  w.Field("key", key);
  w.Field("a_nodes", sa != nullptr ? sa->graph->nodes_size() : -1);
  w.Field("b_nodes", sb != nullptr ? sb->graph->nodes_size() : -1);
  w.Key("ops");
  w.BeginArray();
  std::vector<std::string> only_a, only_b;
  if (sa != nullptr && sb != nullptr) {
    for (const OpDiffRow& r : DiffOps(CountOps(*sa->graph), CountOps(*sb->graph)).rows) {
      if (r.before == r.after) continue;
      w.BeginArray();
      w.String(r.op);
      w.Int(r.before);
      w.Int(r.after);
      w.EndArray();
    }
    std::map<std::string, int> na = NameCounts(*sa->graph), nb = NameCounts(*sb->graph);
    for (const auto& [k, c] : na) {
      if (nb.count(k) == 0) only_a.push_back(k);
    }
    for (const auto& [k, c] : nb) {
      if (na.count(k) == 0) only_b.push_back(k);
    }
  }
  w.EndArray();
  w.Field("only_a", static_cast<int64_t>(only_a.size()));
  w.Field("only_b", static_cast<int64_t>(only_b.size()));
  WriteNames("only_a_names", only_a, w);
  WriteNames("only_b_names", only_b, w);
  w.EndObject();
}

void WriteStages(const std::vector<Stage>& sa, const std::vector<Stage>& sb, JsonWriter& w) {
  std::map<std::string, const Stage*> by_key_b;
  for (const Stage& s : sb) by_key_b[s.key] = &s;
  std::set<std::string> keys_a;
  w.Key("stages");
  w.BeginArray();
  for (const Stage& s : sa) {
    keys_a.insert(s.key);
    auto it = by_key_b.find(s.key);
    WriteStageRow(s.key, &s, it == by_key_b.end() ? nullptr : it->second, w);
  }
  for (const Stage& s : sb) {
    if (keys_a.count(s.key) == 0) WriteStageRow(s.key, nullptr, &s, w);
  }
  w.EndArray();
}

// Rows keyed by (name, occurrence of that name), in first-seen order (a's rows, then b's
// rows a lacks).
struct TimedRow {
  std::string pipeline;  // empty for stage timings
  std::string name;
  int occurrence = 0;
  double a = -1;
  double b = -1;
};

void AddTimed(std::vector<TimedRow>& rows, std::map<std::pair<std::string, int>, int>& where,
              const std::string& pipeline, const std::string& name, double seconds, bool side_b,
              std::map<std::string, int>& seen) {
  const std::string full = pipeline + "\n" + name;
  int occurrence = seen[full]++;
  auto key = std::make_pair(full, occurrence);
  auto it = where.find(key);
  if (it == where.end()) {
    it = where.emplace(key, static_cast<int>(rows.size())).first;
    rows.push_back(TimedRow{pipeline, name, occurrence});
  }
  (side_b ? rows[it->second].b : rows[it->second].a) = seconds;
}

void WriteSeconds(const char* key, double s, JsonWriter& w) {
  w.Key(key);
  if (s < 0) {
    w.Null();
  } else {
    w.Double(s);
  }
}

void WriteTimings(const proto::CompileReport& a, const proto::CompileReport& b, JsonWriter& w) {
  std::vector<TimedRow> stages, passes;
  std::map<std::pair<std::string, int>, int> stage_at, pass_at;
  for (int side = 0; side < 2; ++side) {
    const proto::CompileReport& r = side == 0 ? a : b;
    std::map<std::string, int> seen_stage, seen_pass;
    for (const proto::StageTiming& t : r.timings()) {
      AddTimed(stages, stage_at, "", t.stage(), t.seconds(), side == 1, seen_stage);
    }
    for (const proto::PassRun& p : r.passes()) {
      AddTimed(passes, pass_at, p.pipeline(), p.pass(), p.seconds(), side == 1, seen_pass);
    }
  }
  w.Key("timings");
  w.BeginArray();
  for (const TimedRow& t : stages) {
    w.BeginObject();
    w.Field("stage", t.name);
    WriteSeconds("a", t.a, w);
    WriteSeconds("b", t.b, w);
    w.EndObject();
  }
  w.EndArray();
  w.Key("passes");
  w.BeginArray();
  for (const TimedRow& t : passes) {
    w.BeginObject();
    w.Field("pipeline", t.pipeline);
    w.Field("pass", t.name);
    WriteSeconds("a", t.a, w);
    WriteSeconds("b", t.b, w);
    w.EndObject();
  }
  w.EndArray();
}

// One schedule's kernels as sets of node names ("op@key#occurrence", see compare.h).
struct KernelSets {
  const Stage* stage = nullptr;
  std::vector<std::vector<std::string>> nodes;  // per kernel, sorted
  std::vector<std::set<std::string>> names;     // per kernel: provenance keys
};

KernelSets KernelNodeSets(const Stage* stage) {
  KernelSets out;
  out.stage = stage;
  if (stage == nullptr) return out;
  const proto::Schedule& s = *stage->schedule;
  const proto::Graph& g = s.graph();
  GraphIndex index(g);
  std::vector<std::string> node_name(g.nodes_size());
  std::map<std::string, int> occurrences;
  for (int i = 0; i < g.nodes_size(); ++i) {
    std::string base = g.nodes(i).op() + "@" + ProvenanceKey(g.nodes(i));
    node_name[i] = base + "#" + std::to_string(occurrences[base]++);
  }
  for (const proto::Kernel& k : s.kernels()) {
    std::vector<std::string> nodes;
    std::set<std::string> names;
    for (int64_t value : k.source_values()) {
      const ValueDef* def = index.Find(value);
      if (def == nullptr || def->kind != ValueDef::kNode) continue;
      nodes.push_back(node_name[def->index]);
      std::string key = ProvenanceKey(g.nodes(def->index));
      if (!key.empty()) names.insert(key);
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    out.nodes.push_back(std::move(nodes));
    out.names.push_back(std::move(names));
  }
  return out;
}

const Stage* FirstSchedule(const std::vector<Stage>& stages) {
  for (const Stage& s : stages) {
    if (s.kind == StageKind::kSchedule) return &s;
  }
  for (const Stage& s : stages) {
    if (s.schedule != nullptr) return &s;
  }
  return nullptr;
}

// Kernels of `mine` whose node set `theirs` lacks, with the kernels of `theirs` sharing nodes.
void WriteOnly(const char* key, const KernelSets& mine, const KernelSets& theirs,
               const std::multiset<std::vector<std::string>>& their_sets, JsonWriter& w) {
  std::map<std::string, std::vector<int>> their_kernels_of_node;
  for (size_t k = 0; k < theirs.nodes.size(); ++k) {
    for (const std::string& n : theirs.nodes[k]) their_kernels_of_node[n].push_back(k);
  }
  std::multiset<std::vector<std::string>> unmatched = their_sets;
  w.Key(key);
  w.BeginArray();
  int listed = 0;
  for (size_t k = 0; k < mine.nodes.size(); ++k) {
    auto it = unmatched.find(mine.nodes[k]);
    if (it != unmatched.end()) {
      unmatched.erase(it);
      continue;
    }
    if (listed++ >= kCompareListed) continue;
    const proto::Kernel& kernel = mine.stage->schedule->kernels(k);
    w.BeginObject();
    w.Field("index", static_cast<int64_t>(k));
    w.Field("name", kernel.name());
    w.Field("nodes", static_cast<int64_t>(mine.nodes[k].size()));
    w.Key("ops");
    w.BeginArray();
    for (const std::string& op : kernel.source_ops()) w.String(op);
    w.EndArray();
    w.Key("names");
    w.BeginArray();
    for (const std::string& n : mine.names[k]) w.String(n);
    w.EndArray();
    std::set<int> other;
    for (const std::string& n : mine.nodes[k]) {
      auto o = their_kernels_of_node.find(n);
      if (o != their_kernels_of_node.end()) other.insert(o->second.begin(), o->second.end());
    }
    w.Key("other");
    w.BeginArray();
    for (int o : other) w.Int(o);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
}

void WriteKernels(const std::vector<Stage>& sa, const std::vector<Stage>& sb, JsonWriter& w) {
  KernelSets ka = KernelNodeSets(FirstSchedule(sa)), kb = KernelNodeSets(FirstSchedule(sb));
  std::multiset<std::vector<std::string>> set_a(ka.nodes.begin(), ka.nodes.end());
  std::multiset<std::vector<std::string>> set_b(kb.nodes.begin(), kb.nodes.end());
  int same = 0;
  std::multiset<std::vector<std::string>> left = set_b;
  for (const auto& n : ka.nodes) {
    auto it = left.find(n);
    if (it != left.end()) {
      left.erase(it);
      ++same;
    }
  }
  w.Key("kernels");
  w.BeginObject();
  w.Field("a_stage", ka.stage != nullptr ? ka.stage->key : std::string());
  w.Field("b_stage", kb.stage != nullptr ? kb.stage->key : std::string());
  w.Field("a_count", static_cast<int64_t>(ka.nodes.size()));
  w.Field("b_count", static_cast<int64_t>(kb.nodes.size()));
  w.Field("same", same);
  WriteOnly("only_a", ka, kb, set_b, w);
  WriteOnly("only_b", kb, ka, set_a, w);
  w.EndObject();
}

std::string DecisionKey(const proto::FusionDecision& d) {
  std::string key = d.pass() + "\n" + d.kind() + "\n" + (d.accepted() ? "1" : "0") + "\n" +
                    d.reason();
  for (const std::string& k : d.kernels()) key += "\n" + k;
  return key;
}

void WriteOnlyDecisions(const char* key, const proto::Schedule* mine,
                        const std::multiset<std::string>& theirs, JsonWriter& w) {
  std::multiset<std::string> unmatched = theirs;
  w.Key(key);
  w.BeginArray();
  int listed = 0;
  if (mine != nullptr) {
    for (const proto::FusionDecision& d : mine->decisions()) {
      auto it = unmatched.find(DecisionKey(d));
      if (it != unmatched.end()) {
        unmatched.erase(it);
        continue;
      }
      if (listed++ >= kCompareListed) continue;
      w.BeginObject();
      w.Field("pass", d.pass());
      w.Field("kind", d.kind());
      w.Key("kernels");
      w.BeginArray();
      for (const std::string& k : d.kernels()) w.String(k);
      w.EndArray();
      w.Field("accepted", d.accepted());
      w.Field("reason", d.reason());
      w.EndObject();
    }
  }
  w.EndArray();
}

void WriteDecisions(const std::vector<Stage>& sa, const std::vector<Stage>& sb, JsonWriter& w) {
  const Stage* a = FirstSchedule(sa);
  const Stage* b = FirstSchedule(sb);
  const proto::Schedule* da = a != nullptr ? a->schedule : nullptr;
  const proto::Schedule* db = b != nullptr ? b->schedule : nullptr;
  std::multiset<std::string> keys_a, keys_b;
  int counts[2][2] = {{0, 0}, {0, 0}};  // [side][accepted]
  for (int side = 0; side < 2; ++side) {
    const proto::Schedule* s = side == 0 ? da : db;
    if (s == nullptr) continue;
    for (const proto::FusionDecision& d : s->decisions()) {
      (side == 0 ? keys_a : keys_b).insert(DecisionKey(d));
      ++counts[side][d.accepted() ? 1 : 0];
    }
  }
  w.Key("decisions");
  w.BeginObject();
  w.Field("a_accepted", counts[0][1]);
  w.Field("a_rejected", counts[0][0]);
  w.Field("b_accepted", counts[1][1]);
  w.Field("b_rejected", counts[1][0]);
  WriteOnlyDecisions("only_a", da, keys_b, w);
  WriteOnlyDecisions("only_b", db, keys_a, w);
  w.EndObject();
}

}  // namespace

std::string CompareJson(const proto::CompileReport& a, const std::vector<Stage>& stages_a,
                        std::string_view name_a, const proto::CompileReport& b,
                        const std::vector<Stage>& stages_b, std::string_view name_b) {
  JsonWriter w;
  w.BeginObject();
  w.Field("ok", true);
  w.Field("a", name_a);
  w.Field("b", name_b);
  w.Field("a_model", a.model());
  w.Field("b_model", b.model());
  WriteOptions(a, b, w);
  WriteStages(stages_a, stages_b, w);
  WriteTimings(a, b, w);
  WriteKernels(stages_a, stages_b, w);
  WriteDecisions(stages_a, stages_b, w);
  w.EndObject();
  return w.Take();
}

}  // namespace coil::inspector
