// BufferAliasClasses (codegen_cpu/internal/alias_classes.h) on hand-built schedules: inputs
// grouped, outputs and constants apart, arena slot chains and in-place outputs together with
// the buffer they overwrite, overlapping constant arena ranges merged, malformed plans
// collapsed into one class.
#include "codegen_cpu/internal/alias_classes.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/sym_expr.h"

namespace coil::codegen_cpu_internal {
namespace {

using ::testing::ElementsAre;

class AliasClassesTest : public ::testing::Test {
 protected:
  // A buffer of 256 bytes (a symbolic size when `symbolic`), at arena offset `offset`.
  proto::Buffer* AddBuffer(int id, proto::Buffer::Kind kind, int64_t offset = 0,
                           int reuses = 0, bool in_place = false, bool symbolic = false) {
    proto::Buffer* b = schedule_.add_buffers();
    b->set_id(id);
    b->set_kind(kind);
    b->set_dtype(proto::FLOAT32);
    const SymExpr n = symbolic ? SymExpr::Symbol("n") * 64 : SymExpr(64);
    *b->add_shape() = n.ToProto();
    *b->mutable_size_bytes() = (n * 4).ToProto();
    *b->mutable_arena_offset() =
        (symbolic ? SymExpr::Symbol("n") * offset : SymExpr(offset)).ToProto();
    b->set_reuses(reuses);
    b->set_in_place(in_place);
    return b;
  }

  // A pointwise kernel loading `loads` and storing `stores` at index _i0.
  proto::Kernel Kernel(const std::vector<int>& loads, const std::vector<int>& stores) {
    proto::Kernel k;
    k.set_id(1);
    k.set_kind(proto::Kernel::POINTWISE);
    proto::Loop* l = k.add_loops();
    int id = 1;
    for (int b : loads) {
      proto::Expr* e = l->add_body();
      e->set_id(id++);
      e->set_kind(proto::Expr::LOAD);
      e->set_buffer(b);
    }
    for (int b : stores) {
      proto::Expr* e = l->add_body();
      e->set_id(id++);
      e->set_kind(proto::Expr::STORE);
      e->set_buffer(b);
      e->add_args(1);
    }
    return k;
  }

  std::vector<std::vector<int>> Classes(const proto::Kernel& k) {
    BufferMap map;
    for (const proto::Buffer& b : schedule_.buffers()) map[b.id()] = &b;
    return BufferAliasClasses(k, map);
  }

  proto::Schedule schedule_;
};

TEST_F(AliasClassesTest, InputsShareOneClassOutputsAndConstantsAreApart) {
  AddBuffer(1, proto::Buffer::INPUT);
  AddBuffer(2, proto::Buffer::INPUT);
  AddBuffer(3, proto::Buffer::CONSTANT);
  AddBuffer(4, proto::Buffer::CONSTANT);
  AddBuffer(5, proto::Buffer::OUTPUT);
  AddBuffer(6, proto::Buffer::OUTPUT);
  AddBuffer(7, proto::Buffer::INPUT);  // not touched by the kernel
  EXPECT_THAT(Classes(Kernel({1, 2, 3, 4}, {5, 6})),
              ElementsAre(ElementsAre(1, 2), ElementsAre(3), ElementsAre(4), ElementsAre(5),
                          ElementsAre(6)));
  // An input written (prims.copy_to) stays with the other inputs.
  EXPECT_THAT(Classes(Kernel({2, 3}, {1})), ElementsAre(ElementsAre(1, 2), ElementsAre(3)));
}

TEST_F(AliasClassesTest, InPlaceOutputSharesTheClassOfTheBufferItOverwrites) {
  AddBuffer(1, proto::Buffer::INPUT);
  AddBuffer(2, proto::Buffer::INTERMEDIATE, 0);
  AddBuffer(3, proto::Buffer::INTERMEDIATE, 256);
  AddBuffer(4, proto::Buffer::INTERMEDIATE, 0, /*reuses=*/2, /*in_place=*/true);
  AddBuffer(5, proto::Buffer::OUTPUT);
  EXPECT_THAT(Classes(Kernel({1, 2, 3}, {4, 5})),
              ElementsAre(ElementsAre(1), ElementsAre(2, 4), ElementsAre(3), ElementsAre(5)));
}

TEST_F(AliasClassesTest, SlotChainsAreOneClassEvenWithSymbolicOffsets) {
  // 2 -> 4 -> 6 share a slot (symbolic offsets: only the reuses links tell); 3 is elsewhere.
  AddBuffer(2, proto::Buffer::INTERMEDIATE, 0, 0, false, /*symbolic=*/true);
  AddBuffer(3, proto::Buffer::INTERMEDIATE, 256, 0, false, true);
  AddBuffer(4, proto::Buffer::INTERMEDIATE, 0, /*reuses=*/2, false, true);
  AddBuffer(6, proto::Buffer::INTERMEDIATE, 0, /*reuses=*/4, false, true);
  EXPECT_THAT(Classes(Kernel({2, 3}, {6})),
              ElementsAre(ElementsAre(2, 6), ElementsAre(3)));
  EXPECT_THAT(Classes(Kernel({3}, {4})), ElementsAre(ElementsAre(3), ElementsAre(4)));
}

TEST_F(AliasClassesTest, OverlappingConstantArenaRangesAreMerged) {
  // No reuses link, but [100, 356) overlaps [0, 256): a plan that broke its rule.
  AddBuffer(2, proto::Buffer::INTERMEDIATE, 0);
  AddBuffer(3, proto::Buffer::INTERMEDIATE, 100);
  AddBuffer(4, proto::Buffer::INTERMEDIATE, 356);  // [356, 612): next to 3, no overlap
  EXPECT_THAT(Classes(Kernel({2}, {3, 4})),
              ElementsAre(ElementsAre(2, 3), ElementsAre(4)));
}

TEST_F(AliasClassesTest, MalformedPlansAndKindsCollapseToOneClass) {
  AddBuffer(1, proto::Buffer::INPUT);
  AddBuffer(2, proto::Buffer::INTERMEDIATE, 0, /*reuses=*/3);
  AddBuffer(3, proto::Buffer::INTERMEDIATE, 256, /*reuses=*/2);  // a cycle
  AddBuffer(5, proto::Buffer::OUTPUT);
  EXPECT_THAT(Classes(Kernel({1, 2}, {5})), ElementsAre(ElementsAre(1, 2, 5)));
  schedule_.Clear();
  AddBuffer(1, proto::Buffer::INPUT);
  AddBuffer(2, proto::Buffer::KIND_UNSPECIFIED);
  AddBuffer(5, proto::Buffer::OUTPUT);
  EXPECT_THAT(Classes(Kernel({1, 2}, {5})), ElementsAre(ElementsAre(1, 2, 5)));
  // A reuses link to a non-intermediate buffer.
  schedule_.Clear();
  AddBuffer(1, proto::Buffer::INPUT);
  AddBuffer(2, proto::Buffer::INTERMEDIATE, 0, /*reuses=*/1);
  AddBuffer(5, proto::Buffer::OUTPUT);
  EXPECT_THAT(Classes(Kernel({1, 2}, {5})), ElementsAre(ElementsAre(1, 2, 5)));
}

TEST_F(AliasClassesTest, OnlyTouchedKnownBuffersAreClassified) {
  AddBuffer(1, proto::Buffer::INPUT);
  AddBuffer(5, proto::Buffer::OUTPUT);
  // Buffer 9 does not exist (the kernel emitter reports it); 1 is read twice.
  EXPECT_THAT(Classes(Kernel({1, 1, 9}, {5})), ElementsAre(ElementsAre(1), ElementsAre(5)));
  EXPECT_THAT(Classes(Kernel({}, {})), ElementsAre());
}

}  // namespace
}  // namespace coil::codegen_cpu_internal
