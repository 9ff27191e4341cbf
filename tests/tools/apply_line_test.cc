// The apply line reader (tools/counterctl/apply_line.h) is a hand-written
// one-pass scanner; these tests hold it to the strict JSON parse that
// `import` still uses (json_line.h, nlohmann::json): the same lines are JSON,
// the same ones repeat a key, and an accepted line carries the values the
// parsed document holds.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apply_line.h"
#include "json_line.h"

namespace tally::test {
namespace {

// Corners of JSON's grammar, each beside a valid twin where there is one.
const std::vector<std::string>& GrammarCorners() {
  static const std::vector<std::string> lines = {
      R"({"counter":"c"})",
      R"(  {"counter" : "c" , "delta" : 2 }  )",
      "\xEF\xBB\xBF{\"counter\":\"c\"}",  // a byte order mark
      "\xEF\xBB{\"counter\":\"c\"}",      // half of one
      "{\"counter\":\"c\"}\r",
      "{\"counter\":\"c\"} x",
      R"({"counter":"c",})",
      R"({"counter":"c" "delta":1})",
      R"({"counter":'c'})",
      R"({counter:"c"})",
      R"({"counter":"c"}})",
      R"({"counter":"c")",
      R"({"counter":"\u0063"})",
      R"({"counter":"\u00e9\ud83d\ude00"})",
      R"({"counter":"\ud83d"})",        // a lone high surrogate
      R"({"counter":"\ude00"})",        // a lone low surrogate
      R"({"counter":"\ud83d\u0041"})",  // a high one before no low one
      R"({"counter":"\u00G1"})",
      R"({"counter":"\x41"})",
      R"({"counter":"\/\b\f\n\r\t\\\""})",
      "{\"counter\":\"a\tb\"}",              // a raw control character
      "{\"counter\":\"\xc3\xa9\"}",          // UTF-8
      "{\"counter\":\"\xc3\"}",              // a cut sequence
      "{\"counter\":\"\xc0\xaf\"}",          // an overlong one
      "{\"counter\":\"\xed\xa0\x80\"}",      // a surrogate in UTF-8
      "{\"counter\":\"\xf4\x90\x80\x80\"}",  // past U+10FFFF
      "{\"counter\":\"\xf0\x9f\x98\x80\"}",
      "{\"counter\":\"a\x7f\"}",
      R"({"counter":"c","delta":-0})",
      R"({"counter":"c","delta":01})",
      R"({"counter":"c","delta":-})",
      R"({"counter":"c","delta":+1})",
      R"({"counter":"c","delta":1.})",
      R"({"counter":"c","delta":.5})",
      R"({"counter":"c","delta":1e})",
      R"({"counter":"c","delta":1E+2})",
      R"({"counter":"c","delta":1e400})",  // beyond a double
      R"({"counter":"c","delta":1e-400})",
      R"({"counter":"c","delta":18446744073709551616})",
      R"({"counter":"c","delta":-9223372036854775809})",
      R"({"counter":"c","delta":9223372036854775807})",
      R"({"counter":"c","delta":-9223372036854775807})",
      R"({"counter":"c","delta":true})",
      R"({"counter":"c","delta":tru})",
      R"({"counter":"c","delta":nul})",
      R"({"counter":"c","delta":[1,[2,{"a":[]}],{}]})",
      R"({"counter":"c","delta":[1,]})",
      R"({"counter":"c","delta":{"a":1,}})",
      R"({"counter":"c","delta":{"a" 1}})",
      R"({"counter":"c","delta":{1:1}})",
      R"([{"counter":"c"}])",
      R"("c")",
      R"(7)",
      R"(null)",
      R"({})",
      R"({"":1})",
  };
  return lines;
}

// Proves the scanner takes as JSON exactly what the strict parse takes,
// and, for an accepted line, the values that parse finds.
TEST(ApplyLine, AgreesWithTheStrictJsonParse) {
  for (const std::string& line : GrammarCorners()) {
    SCOPED_TRACE(nlohmann::json(line).dump(
        -1, ' ', true, nlohmann::json::error_handler_t::replace));
    nlohmann::json doc;
    std::string json_reason;
    const bool json_ok = counterctl::ParseJsonLine(line, &doc, &json_reason);
    counterctl::ApplyEvent event;
    std::string reason;
    const bool ok = counterctl::ParseApplyLine(line, &event, &reason);
    EXPECT_EQ(!ok && reason == "not valid JSON", !json_ok) << reason;
    if (!ok) continue;
    ASSERT_TRUE(doc.is_object());
    EXPECT_EQ(event.counter, doc.at("counter").get<std::string>());
    EXPECT_EQ(event.delta, doc.value("delta", int64_t{1}));
  }
}

// Proves a NUL byte outside a string makes a line not JSON. nlohmann::json
// takes a NUL as the end of its input and so accepts `{"counter":"c"}` NUL
// `x`; the scanner reads the whole line, as JSON's grammar does.
TEST(ApplyLine, ANulByteIsNotTheEndOfTheLine) {
  for (const std::string& line : {std::string("{\"counter\":\"c\"}\0 x", 18),
                                  std::string("{\"counter\":\"c\"}\0", 16)}) {
    counterctl::ApplyEvent event;
    std::string reason;
    EXPECT_FALSE(counterctl::ParseApplyLine(line, &event, &reason));
    EXPECT_EQ(reason, "not valid JSON");
  }
}

// Proves a repeated key is found at any depth, first one first, only after
// the whole line is known to be JSON, and with the decoded name.
TEST(ApplyLine, RepeatedKeysAsTheStrictParseFindsThem) {
  for (const char* line :
       {R"({"counter":"c","\u0063ounter":"d"})",
        R"({"counter":"c","x":[{"b":1,"a":2,"b":3}],"x":1})",
        R"({"counter":"c","x":1,"delta":{"a":{"b":1,"b":2}},"x":2})"}) {
    SCOPED_TRACE(line);
    nlohmann::json doc;
    std::string json_reason;
    EXPECT_FALSE(counterctl::ParseJsonLine(line, &doc, &json_reason));
    counterctl::ApplyEvent event;
    std::string reason;
    EXPECT_FALSE(counterctl::ParseApplyLine(line, &event, &reason));
    EXPECT_EQ(reason, json_reason);
  }
  counterctl::ApplyEvent event;
  std::string reason;
  EXPECT_FALSE(counterctl::ParseApplyLine(R"({"counter":"c","counter":"d",)",
                                          &event, &reason));
  EXPECT_EQ(reason, "not valid JSON");
}

// Proves each reason names the field and shows the bad value: a number,
// array or object as the line wrote it, a string decoded and written back
// as JSON; of several unknown fields the first in byte order is named.
TEST(ApplyLine, ReasonsShowTheBadValue) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"counter":"c","delta":1e19})",
       "\"delta\" must be an integer in "
       "-9223372036854775807..9223372036854775807, got 1e19"},
      {R"({"counter":"c","delta":1.0})",
       "\"delta\" must be an integer, got 1.0"},
      {R"({"counter":"c","time_ms":"5"})",
       "\"time_ms\" must be an integer, got \"5\""},
      {R"({"counter":"c","delta":123456789012345678901234})",
       "\"delta\" must be an integer in "
       "-9223372036854775807..9223372036854775807, got "
       "123456789012345678901234"},
      {R"({"counter":"c","event_id":"a\u0001b"})",
       "\"event_id\" contains a control character, got \"a\\u0001b\""},
      {R"({"counter":"c","time_ms":"\u0035"})",
       "\"time_ms\" must be an integer, got \"5\""},
      {R"({"counter":"c","key":"a\u0009\/b"})",
       "\"key\" contains a control character, got \"a\\t/b\""},
      {R"({"counter":["c"]})", "\"counter\" must be a string, got [\"c\"]"},
      {R"({"counter":"c","zz":1,"key":"k","b":2})", "unknown field \"b\""},
      {R"({"delta":1})", "missing field \"counter\""},
      {R"([1, 2])", "expected a JSON object, got [1, 2]"},
      {R"({"counter":"c","key":""})", "\"key\" must be 1..128 bytes, got 0"},
  };
  for (const auto& [line, want] : cases) {
    SCOPED_TRACE(line);
    counterctl::ApplyEvent event;
    std::string reason;
    EXPECT_FALSE(counterctl::ParseApplyLine(line, &event, &reason));
    EXPECT_EQ(reason, want);
  }
}

// Proves fields a line leaves out take their defaults, also after a line
// that gave them (the event is reused line after line).
TEST(ApplyLine, AbsentFieldsTakeTheirDefaults) {
  counterctl::ApplyEvent event;
  std::string reason;
  ASSERT_TRUE(counterctl::ParseApplyLine(
      R"({"counter":"c","key":"k","event_id":"e","delta":-3,"time_ms":7})",
      &event, &reason))
      << reason;
  EXPECT_EQ(event.key, "k");
  EXPECT_TRUE(event.once);
  EXPECT_EQ(event.event_id, "e");
  EXPECT_EQ(event.delta, -3);
  EXPECT_EQ(event.event_time_ms, 7);
  ASSERT_TRUE(counterctl::ParseApplyLine(R"({"counter":"d"})", &event, &reason))
      << reason;
  EXPECT_EQ(event.counter, "d");
  EXPECT_EQ(event.key, "");
  EXPECT_FALSE(event.once);
  EXPECT_EQ(event.event_id, "");
  EXPECT_EQ(event.delta, 1);
  EXPECT_EQ(event.event_time_ms, kEventTimeNow);
}

}  // namespace
}  // namespace tally::test
