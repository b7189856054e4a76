// JsonWriter: exact output for each value kind, escaping and UTF-8 repair, number formats
// (checked by reading them back), and misuse caught by CHECKs.
#include "inspector_web/core/json_writer.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "inspector_web/core/utf8.h"

namespace coil::inspector {
namespace {

TEST(JsonWriterTest, NestedDocument) {
  JsonWriter w;
  w.BeginObject();
  w.Field("name", "graph");
  w.Field("count", 3);
  w.Key("items");
  w.BeginArray();
  w.Int(1);
  w.Bool(false);
  w.Null();
  w.BeginObject();
  w.EndObject();
  w.BeginArray();
  w.EndArray();
  w.EndArray();
  w.Key("raw");
  w.Raw("[1,2]");
  w.EndObject();
  EXPECT_EQ(w.Take(), R"({"name":"graph","count":3,"items":[1,false,null,{},[]],"raw":[1,2]})");
}

TEST(JsonWriterTest, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonString("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(JsonString("line\nnext\ttab\rret"), R"("line\nnext\ttab\rret")");
  EXPECT_EQ(JsonString(std::string("\x01\x1f", 2)), R"("\u0001\u001f")");
  EXPECT_EQ(JsonString(std::string("nul\0byte", 8)), R"("nul\u0000byte")");
}

TEST(JsonWriterTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(JsonString("\xc2\xb5s \xe2\x86\x92 \xf0\x9f\x99\x82"),
            "\"\xc2\xb5s \xe2\x86\x92 \xf0\x9f\x99\x82\"");
  // A lone continuation byte, a truncated sequence, an overlong '/' and a surrogate.
  std::string out = JsonString(
      "a\x80"
      "b\xe2\x86"
      "c\xc0\xaf"
      "d\xed\xa0\x80");
  EXPECT_TRUE(IsValidUtf8(out));
  EXPECT_EQ(out,
            "\"a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD"
            "d\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

TEST(JsonWriterTest, IntegersIncludingExtremes) {
  for (int64_t v : {int64_t{0}, int64_t{-7}, int64_t{1234567890123}, INT64_MAX, INT64_MIN}) {
    JsonWriter w;
    w.Int(v);
    EXPECT_EQ(w.Take(), std::to_string(v));
  }
}

TEST(JsonWriterTest, DoublesReadBackExactlyAndNonFiniteIsNull) {
  for (double v : {0.0, 1.5, -2.25, 0.1, 1e-05, 1.0 / 3.0, 6.02214076e23, 5e-324}) {
    JsonWriter w;
    w.Double(v);
    std::string s = w.Take();
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
  }
  for (double v : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    JsonWriter w;
    w.Double(v);
    EXPECT_EQ(w.Take(), "null");
  }
}

TEST(JsonWriterTest, Decimal1RoundsToOneDecimal) {
  struct Case {
    double v;
    const char* text;
  };
  for (const Case& c : {Case{0, "0"}, Case{12, "12"}, Case{12.5, "12.5"}, Case{12.34, "12.3"},
                        Case{12.36, "12.4"}, Case{-0.3, "-0.3"}, Case{-17.96, "-18"},
                        Case{99.96, "100"}, Case{1234567.8, "1234567.8"}}) {
    JsonWriter w;
    w.Decimal1(c.v);
    EXPECT_EQ(w.Take(), c.text) << c.v;
  }
}

TEST(JsonWriterDeathTest, MisuseIsAnInternalError) {
  EXPECT_DEATH(
      {
        JsonWriter w;
        w.BeginObject();
        w.Int(1);  // a value without a key
      },
      "needs a Key");
  EXPECT_DEATH(
      {
        JsonWriter w;
        w.BeginArray();
        w.Take();
      },
      "unbalanced");
  EXPECT_DEATH(
      {
        JsonWriter w;
        w.EndObject();
      },
      "without a matching");
}

}  // namespace
}  // namespace coil::inspector
