// FuseVertical: pointwise producers inlined into their consumers (fusion.h).
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "inductor/passes/fusion.h"
#include "inductor/passes/fusion_util.h"

namespace coil::inductor {

namespace {

constexpr char kPass[] = "fuse_vertical";
// Recomputation (a producer inlined at more than one place, or kept and inlined too) is
// accepted while the loads and expressions it duplicates stay below these.
constexpr int kMaxRecomputeLoads = 16;
constexpr int kMaxRecomputeExprs = 256;

std::string KindFor(const Kernel& consumer) {
  switch (consumer.kind) {
    case proto::Kernel::REDUCTION:
      return "reduction_prologue";
    case proto::Kernel::EXTERN:
      return "epilogue";
    default:
      return "vertical";
  }
}

// A consumer the producer can be inlined into, with the result.
struct Candidate {
  int index = 0;
  Kernel fused;
  int sites = 0;
  int64_t bytes_saved = 0;
};

// Why `consumer` (at index j) cannot take producer p's body, or "" when it can; fills `out`.
std::string TryConsumer(const Program& program, const std::vector<KernelAccess>& accesses, int p,
                        int j, int buffer, Candidate& out) {
  const Kernel& producer = program.kernels[p];
  const Kernel& consumer = program.kernels[j];
  const std::string& bname = program.buffer(buffer).name;
  if (ExternReads(consumer, buffer)) {
    return absl::StrCat("consumer is an extern (", consumer.extern_op,
                        ") reading the materialized buffer ", bname);
  }
  const std::vector<int>& reads = accesses[p].reads;
  absl::flat_hash_set<int> inputs(reads.begin(), reads.end());
  for (int m = p + 1; m < j; ++m) {
    for (int w : accesses[m].writes) {
      if (inputs.contains(w)) {
        return absl::StrCat("kernel ", program.kernels[m].name, " overwrites ",
                            program.buffer(w).name, " (read by the producer) between them");
      }
    }
  }
  Kernel fused = consumer;
  Cse(fused);
  int sites = 0;
  for (const auto& [loop, id] : LoadsOf(fused, buffer)) {
    InlineBody(producer, fused, loop, id);
    ++sites;
  }
  Cse(fused);
  // A consumer that overwrites what the producer reads must read it only where it writes it.
  for (int w : fused.Writes()) {
    if (!inputs.contains(w)) continue;
    bool same_place = fused.kind == proto::Kernel::POINTWISE;
    std::vector<std::vector<SymExpr>> stores;
    for (const Expr& e : fused.loops.empty() ? std::vector<Expr>{} : fused.loops[0].body) {
      if (e.kind == proto::Expr::STORE && e.buffer == w) stores.push_back(e.index);
    }
    for (const auto& [loop, id] : LoadsOf(fused, w)) {
      for (const auto& s : stores) same_place = same_place && fused.Find(id).index == s;
    }
    if (!same_place) {
      return absl::StrCat("consumer overwrites ", program.buffer(w).name,
                          ", which the producer reads, at other positions");
    }
  }
  out.index = j;
  out.sites = sites;
  out.bytes_saved = BytesHint(program, consumer) - BytesHint(program, fused);
  out.fused = std::move(fused);
  return "";
}

// Tries to inline kernel p everywhere; returns whether it was removed. `accesses` (one per
// kernel) is kept in step with the program.
bool InlineProducer(Program& program, std::vector<KernelAccess>& accesses, int p,
                    bool& changed) {
  const Kernel& producer = program.kernels[p];
  std::optional<int> out = PointwiseOutput(producer);
  if (!out.has_value()) return false;
  const int buffer = *out;
  const Buffer& buf = program.buffer(buffer);
  std::vector<int> readers;
  for (int j = p + 1; j < static_cast<int>(program.kernels.size()); ++j) {
    if (accesses[j].Reads(buffer)) readers.push_back(j);
  }
  if (readers.empty()) return false;
  std::vector<std::string> names = {producer.name};
  for (int j : readers) names.push_back(program.kernels[j].name);
  if (buf.kind != proto::Buffer::INTERMEDIATE) {
    RecordDecision(program, kPass, "vertical", names, false,
                   absl::StrCat("producer's buffer ", buf.name, " is ",
                                buf.kind == proto::Buffer::OUTPUT ? "a graph output"
                                                                  : "not an intermediate",
                                " (recomputing it in consumers would duplicate work)"),
                   0);
    return false;
  }
  for (size_t j = 0; j < program.kernels.size(); ++j) {
    if (static_cast<int>(j) == p) continue;
    if (accesses[j].Writes(buffer)) {
      RecordDecision(program, kPass, "vertical", names, false,
                     absl::StrCat("buffer ", buf.name, " is also written by ",
                                  program.kernels[j].name),
                     0);
      return false;
    }
  }

  std::vector<Candidate> candidates;
  std::vector<std::pair<int, std::string>> blocked;
  int sites = 0;
  for (int j : readers) {
    Candidate c;
    std::string why = TryConsumer(program, accesses, p, j, buffer, c);
    if (why.empty()) {
      sites += c.sites;
      candidates.push_back(std::move(c));
    } else {
      blocked.emplace_back(j, std::move(why));
    }
  }
  for (const auto& [j, why] : blocked) {
    RecordDecision(program, kPass, KindFor(program.kernels[j]),
                   {producer.name, program.kernels[j].name}, false, why, 0);
  }
  if (candidates.empty()) return false;

  const bool removable = blocked.empty();
  const int copies = sites + (removable ? 0 : 1);  // places the producer's work is done
  int64_t saved = removable ? BytesHint(program, producer) : 0;
  for (const Candidate& c : candidates) saved += c.bytes_saved;
  std::vector<std::string> fused_names = {producer.name};
  for (const Candidate& c : candidates) fused_names.push_back(program.kernels[c.index].name);
  if (copies > 1) {
    const int loads = CountLoads(producer) * copies;
    const int exprs = CountExprs(producer) * copies;
    std::string why;
    if (loads > kMaxRecomputeLoads || exprs > kMaxRecomputeExprs) {
      why = absl::StrCat("producer has ", candidates.size(), " consumers and ", loads,
                         " loads (recompute too costly)");
    } else if (saved < 0) {
      why = absl::StrCat("recomputing the producer at ", copies, " places moves ", -saved,
                         " more bytes than it saves");
    }
    if (!why.empty()) {
      RecordDecision(program, kPass, "vertical", fused_names, false, why, saved);
      return false;
    }
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    Candidate& c = candidates[i];
    std::string reason =
        c.sites == 1 ? absl::StrCat("inlined at its load of ", buf.name)
                     : absl::StrCat("inlined at ", c.sites, " loads of ", buf.name);
    if (copies > 1) absl::StrAppend(&reason, " (recomputed at ", copies, " places)");
    if (removable && i + 1 == candidates.size()) {
      absl::StrAppend(&reason, "; producer removed");
    }
    int64_t bytes = c.bytes_saved + (removable && i == 0 ? BytesHint(program, producer) : 0);
    RecordDecision(program, kPass, KindFor(program.kernels[c.index]),
                   {producer.name, program.kernels[c.index].name}, true, reason, bytes);
    program.kernels[c.index] = std::move(c.fused);
    accesses[c.index] = KernelAccess::Of(program.kernels[c.index]);
  }
  changed = true;
  if (removable) {
    program.kernels.erase(program.kernels.begin() + p);
    accesses.erase(accesses.begin() + p);
  }
  return removable;
}

}  // namespace

absl::StatusOr<bool> FuseVertical(Program& program) {
  bool changed = false;
  std::vector<KernelAccess> accesses = ComputeAccesses(program);
  for (int p = 0; p < static_cast<int>(program.kernels.size());) {
    if (!InlineProducer(program, accesses, p, changed)) ++p;
  }
  return changed;
}

}  // namespace coil::inductor
