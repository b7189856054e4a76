// KernelIndex, Dependents / Feeders and PairDeps (fusion_index.h).
#include "inductor/passes/fusion_index.h"

#include <algorithm>
#include <utility>

#include "ir/check.h"

namespace coil::inductor {

namespace {

const KernelSet& Empty() {
  static const KernelSet* empty = new KernelSet();
  return *empty;
}

bool Contains(const std::vector<int>& sorted, int x) {
  return std::binary_search(sorted.begin(), sorted.end(), x);
}

}  // namespace

KernelIndex::KernelIndex(const Program& program)
    : accesses_(ComputeAccesses(program)), removed_(program.kernels.size(), false) {
  for (int k = 0; k < size(); ++k) Link(k);
}

const KernelSet& KernelIndex::Readers(int buffer) const {
  auto it = readers_.find(buffer);
  return it == readers_.end() ? Empty() : it->second;
}

const KernelSet& KernelIndex::Writers(int buffer) const {
  auto it = writers_.find(buffer);
  return it == writers_.end() ? Empty() : it->second;
}

std::vector<int> KernelIndex::ReadersAfter(const std::vector<int>& buffers, int k) const {
  std::vector<int> out;
  for (int b : buffers) {
    const KernelSet& r = Readers(b);
    out.insert(out.end(), r.upper_bound(k), r.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void KernelIndex::Unlink(int k) {
  for (int b : accesses_[k].reads) readers_[b].erase(k);
  for (int b : accesses_[k].writes) writers_[b].erase(k);
}

void KernelIndex::Link(int k) {
  for (int b : accesses_[k].reads) readers_[b].insert(k);
  for (int b : accesses_[k].writes) writers_[b].insert(k);
}

void KernelIndex::Update(const Program& program, int k) {
  Update(k, KernelAccess::Of(program.kernels[k]));
}

void KernelIndex::Update(int k, KernelAccess access) {
  COIL_CHECK(!removed_[k]) << "kernel " << k << " was removed";
  Unlink(k);
  accesses_[k] = std::move(access);
  Link(k);
}

void KernelIndex::Remove(Program& program, int k) {
  COIL_CHECK(!removed_[k]) << "kernel " << k << " removed twice";
  Unlink(k);
  accesses_[k] = {};
  removed_[k] = true;
  program.kernels[k] = Kernel{};
  program.kernels[k].kind = proto::Kernel::KIND_UNSPECIFIED;
}

int KernelIndex::MergePair(Program& program, const PairDeps& deps, Kernel merged) {
  const int a = deps.a(), b = deps.b();
  COIL_CHECK(deps.CanMerge()) << "kernels " << a << " and " << b << " cannot merge";
  std::vector<int> order;  // old positions in their new order; b last (it becomes empty)
  std::vector<int> after;
  for (int m = a + 1; m < b; ++m) (deps.RunsAfter(m) ? after : order).push_back(m);
  const int position = a + static_cast<int>(order.size());
  order.push_back(a);
  order.insert(order.end(), after.begin(), after.end());
  order.push_back(b);
  for (int m = a; m <= b; ++m) Unlink(m);
  std::vector<Kernel> kernels;
  std::vector<KernelAccess> accesses;
  std::vector<bool> removed;
  for (int m : order) {
    kernels.push_back(m == a ? std::move(merged) : std::move(program.kernels[m]));
    accesses.push_back(m == a ? KernelAccess::Of(kernels.back()) : std::move(accesses_[m]));
    removed.push_back(m == b || removed_[m]);
  }
  for (int i = 0; i <= b - a; ++i) {
    program.kernels[a + i] = std::move(kernels[i]);
    accesses_[a + i] = std::move(accesses[i]);
    removed_[a + i] = removed[i];
  }
  program.kernels[b] = Kernel{};
  program.kernels[b].kind = proto::Kernel::KIND_UNSPECIFIED;
  accesses_[b] = {};
  for (int m = a; m < b; ++m) Link(m);
  return position;
}

void KernelIndex::DropRemoved(Program& program) {
  COIL_CHECK(program.kernels.size() == removed_.size())
      << program.kernels.size() << " kernels, index of " << removed_.size();
  std::vector<Kernel> kernels;
  kernels.reserve(program.kernels.size());
  for (int k = 0; k < size(); ++k) {
    if (!removed_[k]) kernels.push_back(std::move(program.kernels[k]));
  }
  program.kernels = std::move(kernels);
  accesses_.clear();
  removed_.clear();
  readers_.clear();
  writers_.clear();
}

ForwardDeps::ForwardDeps(const KernelIndex& index, int first, Scratch* scratch)
    : index_(index), first_(first), scratch_(scratch) {
  COIL_CHECK(0 <= first && first < index.size()) << first << " of " << index.size();
  if (scratch_ != nullptr) {
    COIL_CHECK(!scratch_->in_use) << "two ForwardDeps scans share one Scratch";
    scratch_->in_use = true;
  }
}

ForwardDeps::~ForwardDeps() {
  if (scratch_ == nullptr) return;
  for (int b : scratch_->touched) scratch_->bits[b] = 0;
  scratch_->touched.clear();
  scratch_->in_use = false;
}

uint8_t ForwardDeps::Get(int buffer) const {
  if (scratch_ != nullptr) {
    return buffer < static_cast<int>(scratch_->bits.size()) ? scratch_->bits[buffer] : 0;
  }
  auto it = state_.find(buffer);
  return it == state_.end() ? 0 : it->second;
}

void ForwardDeps::Set(int buffer, uint8_t bits) {
  if (scratch_ == nullptr) {
    state_[buffer] = bits;
    return;
  }
  std::vector<uint8_t>& all = scratch_->bits;
  if (buffer >= static_cast<int>(all.size())) {
    all.resize(std::max<size_t>(buffer + 1, 2 * all.size()), 0);
  }
  if (all[buffer] == 0 && bits != 0) scratch_->touched.push_back(buffer);
  all[buffer] = bits;
}

// A kernel depends on `first` when one of its direct predecessors does. A kernel that does
// not leaves the state as it was: what it writes had no dependent writer or reader (else it
// would depend on them), and its reads add nothing.
bool ForwardDeps::DependsOnFirst(int m) {
  COIL_CHECK(first_ <= m && m < index_.size()) << m << " outside " << first_ << ".."
                                                << index_.size() - 1;
  while (first_ + static_cast<int>(dep_.size()) <= m) {
    const int next = first_ + static_cast<int>(dep_.size());
    const KernelAccess& k = index_.access(next);
    bool dep = next == first_;
    for (size_t i = 0; !dep && i < k.reads.size(); ++i) dep = (Get(k.reads[i]) & kWriter) != 0;
    for (size_t i = 0; !dep && i < k.writes.size(); ++i) dep = Get(k.writes[i]) != 0;
    dep_.push_back(dep);
    if (!dep) continue;
    for (int b : k.reads) Set(b, Get(b) | kReader);
    for (int b : k.writes) Set(b, kWriter);
  }
  return dep_[m - first_];
}

std::vector<bool> Dependents(const KernelIndex& index, int first, int last) {
  COIL_CHECK(0 <= first && first <= last && last < index.size()) << first << ".." << last;
  ForwardDeps scan(index, first);
  std::vector<bool> out(last - first + 1, false);
  for (int m = first; m <= last; ++m) out[m - first] = scan.DependsOnFirst(m);
  return out;
}

// Backward from `last`: m feeds it when m is a direct predecessor of a kernel that does. Per
// buffer, over the kernels after m: whether the next writer feeds `last` (m writing or reading
// the buffer is its predecessor), and whether a kernel reading it before any later write does
// (m writing the buffer is that reader's last writer).
std::vector<bool> Feeders(const KernelIndex& index, int first, int last) {
  COIL_CHECK(0 <= first && first <= last && last < index.size()) << first << ".." << last;
  std::vector<bool> out(last - first + 1, false);
  struct State {
    bool next_writer = false, reader = false;
  };
  absl::flat_hash_map<int, State> state;
  for (int m = last; m >= first; --m) {
    const KernelAccess& k = index.access(m);
    bool feeds = m == last;
    for (int b : k.reads) {
      auto it = state.find(b);
      feeds = feeds || (it != state.end() && it->second.next_writer);
    }
    for (int b : k.writes) {
      auto it = state.find(b);
      feeds = feeds || (it != state.end() && (it->second.next_writer || it->second.reader));
    }
    out[m - first] = feeds;
    for (int b : k.writes) state[b] = {.next_writer = feeds, .reader = Contains(k.reads, b) && feeds};
    for (int b : k.reads) {
      if (!Contains(k.writes, b)) state[b].reader |= feeds;
    }
  }
  return out;
}

PairDeps PairDeps::Compute(const KernelIndex& index, int a, int b) {
  COIL_CHECK(a < b) << a << " >= " << b;
  PairDeps d;
  d.a_ = a;
  d.b_ = b;
  d.from_a_ = Dependents(index, a, b);
  d.to_b_ = Feeders(index, a, b);
  return d;
}

bool PairDeps::CanMerge() const {
  for (int m = a_ + 1; m < b_; ++m) {
    if (from_a_[m - a_] && to_b_[m - a_]) return false;
  }
  return true;
}

}  // namespace coil::inductor
