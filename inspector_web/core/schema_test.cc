// The embedded schema against protobuf's own descriptors (the full runtime's generated pool,
// an independent reader of the same .proto files): every message, field number, name, type,
// label and message type must agree.
#include "inspector_web/core/schema.h"

#include <string>

#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "ir/proto/report.pb.h"

namespace coil::inspector {
namespace {

void ExpectSameMessage(const google::protobuf::Descriptor* d) {
  SCOPED_TRACE(d->full_name());
  const MessageSchema* m = CoilSchema().Find(d->full_name());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name, d->name());
  EXPECT_EQ(m->fields.size(), static_cast<size_t>(d->field_count()));
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    const FieldSchema* mine = m->Field(f->number());
    ASSERT_NE(mine, nullptr) << f->name();
    EXPECT_EQ(mine->name, f->name());
    EXPECT_EQ(static_cast<int>(mine->type), static_cast<int>(f->type())) << f->name();
    EXPECT_EQ(mine->repeated, f->is_repeated()) << f->name();
    if (f->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
      ASSERT_NE(mine->message, nullptr) << f->name();
      EXPECT_EQ(mine->message->full_name, f->message_type()->full_name());
    }
    if (f->type() == google::protobuf::FieldDescriptor::TYPE_ENUM) {
      EXPECT_EQ(mine->type_name, f->enum_type()->full_name());
    }
  }
  for (int i = 0; i < d->nested_type_count(); ++i) ExpectSameMessage(d->nested_type(i));
}

TEST(SchemaTest, MatchesProtobufDescriptorsForEveryCoilMessage) {
  int messages = 0;
  for (const google::protobuf::FileDescriptor* file :
       {proto::Graph::descriptor()->file(), proto::Schedule::descriptor()->file(),
        proto::KernelModule::descriptor()->file(), proto::CompileReport::descriptor()->file()}) {
    for (int i = 0; i < file->message_type_count(); ++i) {
      ExpectSameMessage(file->message_type(i));
      ++messages;
    }
  }
  EXPECT_GT(messages, 30);
}

TEST(SchemaTest, WireTypesFollowFieldTypes) {
  const MessageSchema* graph = CoilSchema().Find("coil.proto.Graph");
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(graph->Field(1)->wire_type(), WireType::kLengthDelimited);  // name
  EXPECT_EQ(graph->Field(5)->wire_type(), WireType::kVarint);           // outputs
  EXPECT_TRUE(graph->Field(5)->packable());
  EXPECT_FALSE(graph->Field(4)->packable());  // nodes: messages never pack
  const MessageSchema* artifact = CoilSchema().Find("coil.proto.StageArtifact");
  EXPECT_EQ(artifact->Field(2)->wire_type(), WireType::kFixed64);  // seconds
  EXPECT_FALSE(artifact->Field(2)->packable());                    // not repeated
  EXPECT_EQ(graph->Field(99), nullptr);
}

TEST(SchemaTest, RejectsMalformedDescriptorSets) {
  Schema s;
  std::string error;
  EXPECT_FALSE(s.Parse(std::string("\x0a\x05\x01", 3), &error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_NE(error.find("at byte 1"), std::string::npos) << error;  // the length prefix
  EXPECT_TRUE(s.Parse("", &error));  // an empty set is valid and has no messages
  EXPECT_EQ(s.Find("coil.proto.Graph"), nullptr);
}

}  // namespace
}  // namespace coil::inspector
