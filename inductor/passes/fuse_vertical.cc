// FuseVertical: pointwise producers inlined into their consumers (fusion.h).
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "inductor/passes/fusion.h"
#include "inductor/passes/fusion_index.h"
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
  KernelAccess access;  // of `fused`
  int sites = 0;
  int64_t bytes_saved = 0;
};

// Why `consumer` (at index j) cannot take producer p's body, or "" when it can; fills `out`.
std::string TryConsumer(const Program& program, const KernelIndex& index, int p, int j,
                        int buffer, Candidate& out) {
  const Kernel& producer = program.kernels[p];
  const Kernel& consumer = program.kernels[j];
  const std::string& bname = program.buffer(buffer).name;
  if (ExternReads(consumer, buffer)) {
    return absl::StrCat("consumer is an extern (", consumer.extern_op,
                        ") reading the materialized buffer ", bname);
  }
  if (!KeepsDataIndexChecks(program, producer, consumer, buffer)) {
    return absl::StrCat("consumer indexes ", bname,
                        " with data, which inlining would leave unchecked");
  }
  const std::vector<int>& reads = index.access(p).reads;
  absl::flat_hash_set<int> inputs(reads.begin(), reads.end());
  // The first kernel between them writing one of the producer's inputs, through the writers of
  // each input (not a walk over every kernel between them).
  int overwriter = j;
  for (int r : reads) {
    const KernelSet& writers = index.Writers(r);
    auto it = writers.upper_bound(p);
    if (it != writers.end() && *it < overwriter) overwriter = *it;
  }
  if (overwriter < j) {
    for (int w : index.access(overwriter).writes) {
      if (inputs.contains(w)) {
        return absl::StrCat("kernel ", program.kernels[overwriter].name, " overwrites ",
                            program.buffer(w).name, " (read by the producer) between them");
      }
    }
  }
  const int size = CountExprs(producer) + CountExprs(consumer);
  if (size > kMaxKernelExprs) {
    return absl::StrCat("the fused kernel would have about ", size, " expressions (limit ",
                        kMaxKernelExprs, ")");
  }
  Kernel fused = consumer;
  // Loads of the buffer that Cse would merge are one inlining site (x * x inlines x once);
  // anything else it would merge, the Cse after inlining does.
  std::vector<std::pair<int, int>> loads = LoadsOf(fused, buffer);
  if (loads.size() > 1) {
    Cse(fused);
    loads = LoadsOf(fused, buffer);
  }
  int sites = 0;
  for (const auto& [loop, id] : loads) {
    InlineBody(producer, fused, loop, id);
    ++sites;
  }
  Cse(fused);
  KernelAccess access = KernelAccess::Of(fused);
  // A consumer that overwrites what the producer reads must read it only where it writes it.
  for (int w : access.writes) {
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
  out.bytes_saved = BytesHint(program, index.access(j)) - BytesHint(program, access);
  out.access = std::move(access);
  out.fused = std::move(fused);
  return "";
}

// Tries to inline kernel p everywhere; returns whether it was removed. `accesses` (one per
// kernel) is kept in step with the program.
bool InlineProducer(Program& program, KernelIndex& index, int p, bool& changed) {
  const Kernel& producer = program.kernels[p];
  std::optional<int> out = PointwiseOutput(producer);
  if (!out.has_value()) return false;
  const int buffer = *out;
  const Buffer& buf = program.buffer(buffer);
  const KernelSet& all_readers = index.Readers(buffer);
  std::vector<int> readers(all_readers.upper_bound(p), all_readers.end());
  if (readers.empty()) return false;
  auto names = [&] {
    std::vector<std::string> n = {producer.name};
    for (int j : readers) n.push_back(program.kernels[j].name);
    return n;
  };
  if (buf.kind != proto::Buffer::INTERMEDIATE) {
    RecordDecision(program, kPass, "vertical", names(), false,
                   absl::StrCat("producer's buffer ", buf.name, " is ",
                                buf.kind == proto::Buffer::OUTPUT ? "a graph output"
                                                                  : "not an intermediate",
                                " (recomputing it in consumers would duplicate work)"),
                   0);
    return false;
  }
  for (int j : index.Writers(buffer)) {
    if (j == p) continue;
    RecordDecision(program, kPass, "vertical", names(), false,
                   absl::StrCat("buffer ", buf.name, " is also written by ",
                                program.kernels[j].name),
                   0);
    return false;
  }

  std::vector<Candidate> candidates;
  std::vector<std::pair<int, std::string>> blocked;
  int sites = 0;
  for (int j : readers) {
    Candidate c;
    std::string why = TryConsumer(program, index, p, j, buffer, c);
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
  const int64_t producer_bytes = removable ? BytesHint(program, index.access(p)) : 0;
  int64_t saved = producer_bytes;
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
    int64_t bytes = c.bytes_saved + (i == 0 ? producer_bytes : 0);
    RecordDecision(program, kPass, KindFor(program.kernels[c.index]),
                   {producer.name, program.kernels[c.index].name}, true, reason, bytes);
    program.kernels[c.index] = std::move(c.fused);
    index.Update(c.index, std::move(c.access));
  }
  changed = true;
  if (removable) index.Remove(program, p);
  return removable;
}

}  // namespace

absl::StatusOr<bool> FuseVertical(Program& program) {
  bool changed = false;
  KernelIndex index(program);
  // Each kernel in program order, once: a consumer that took a producer's body is tried as a
  // producer when its turn comes (a removed producer leaves an empty slot: fusion_index.h).
  for (int p = 0; p < index.size(); ++p) {
    if (!index.removed(p)) InlineProducer(program, index, p, changed);
  }
  index.DropRemoved(program);
  return changed;
}

}  // namespace coil::inductor
