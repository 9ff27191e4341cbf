#include "engine/family_record.h"

#include <utility>

namespace tally::engine {

DumpField WordField(std::string key, std::string word) {
  DumpField f;
  f.kind = DumpField::Kind::kWord;
  f.key = std::move(key);
  f.text = std::move(word);
  return f;
}

DumpField TextField(std::string key, std::string text, std::string json_key) {
  DumpField f;
  f.kind = DumpField::Kind::kText;
  f.key = std::move(key);
  f.json_key = std::move(json_key);
  f.text = std::move(text);
  return f;
}

DumpField IntField(std::string key, int64_t v) {
  DumpField f;
  f.kind = DumpField::Kind::kInt;
  f.key = std::move(key);
  f.i = v;
  return f;
}

DumpField UintField(std::string key, uint64_t v) {
  DumpField f;
  f.kind = DumpField::Kind::kUint;
  f.key = std::move(key);
  f.u = v;
  return f;
}

DumpField DeltaField(int64_t v) {
  DumpField f;
  f.kind = DumpField::Kind::kDelta;
  f.key = "delta";
  f.i = v;
  return f;
}

DumpField TimeField(std::string key, int64_t ms) {
  DumpField f;
  f.kind = DumpField::Kind::kTime;
  f.key = std::move(key);
  f.i = ms;
  return f;
}

DumpField CounterField(uint64_t id) {
  DumpField f;
  f.kind = DumpField::Kind::kCounter;
  f.key = "counter";
  f.u = id;
  return f;
}

}  // namespace tally::engine
