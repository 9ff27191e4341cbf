#include "json_output.h"

#include <iostream>

#include "common.h"

namespace counterctl {

void PrintJson(const Json& doc) {
  std::cout << doc.dump(-1, ' ', /*ensure_ascii=*/false,
                        Json::error_handler_t::replace)
            << "\n";
}

std::optional<Format> ChooseFormat(bool json, const std::string& format) {
  if (format != "text" && format != "tsv") {
    UsageError("--format " + format + ": expected text or tsv");
    return std::nullopt;
  }
  if (json && format == "tsv") {
    UsageError("--json and --format tsv both choose the output: give one");
    return std::nullopt;
  }
  if (json) return Format::kJson;
  return format == "tsv" ? Format::kTsv : Format::kText;
}

std::string TsvField(const Json& value) {
  if (value.is_null()) return "";
  if (!value.is_string()) return value.dump();
  std::string out;
  for (const char c : value.get_ref<const std::string&>()) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out;
}

void PrintTsv(const std::vector<std::string>& columns, const Json& rows) {
  std::string text;
  for (size_t i = 0; i < columns.size(); ++i) {
    text += (i == 0 ? "" : "\t") + columns[i];
  }
  text += "\n";
  for (const Json& row : rows) {
    for (size_t i = 0; i < columns.size(); ++i) {
      if (i != 0) text += '\t';
      const auto field = row.find(columns[i]);
      if (field != row.end()) text += TsvField(*field);
    }
    text += '\n';
  }
  std::cout << text;
}

void SetTime(Json* obj, const std::string& name, int64_t ms) {
  (*obj)[name + "_ms"] = ms;
  (*obj)[name] = FormatUtcMillis(ms);
}

void SetTimeOrNull(Json* obj, const std::string& name, bool given, int64_t ms) {
  if (given) {
    SetTime(obj, name, ms);
  } else {
    (*obj)[name + "_ms"] = nullptr;
    (*obj)[name] = nullptr;
  }
}

Json CounterJson(const tally::CounterInfo& info) {
  Json j = Json::object();
  j["name"] = info.name;
  j["id"] = info.id;
  j["shards"] = info.shards;
  j["policy"] = tally::ShardPolicyName(info.policy);
  j["schema_version"] = info.schema_version;
  SetTime(&j, "created_at", info.created_at_ms);
  j["flags"] = info.flags;
  j["plain_increments"] = (info.flags & kFlagPlainIncrements) != 0;
  j["dedupe_window_ms"] = info.dedupe_window_ms;
  j["bucket"] = tally::BucketWidthName(info.bucket);
  j["retention_ms"] = info.retention_ms;
  j["keyed"] = info.keyed;
  // A strict counter's bounds: null when not set.
  j["min"] = info.bounds.has_min ? Json(info.bounds.min) : Json(nullptr);
  j["max"] = info.bounds.has_max ? Json(info.bounds.max) : Json(nullptr);
  j["sliding"] = info.sliding;  // a sliding-window quota
  return j;
}

Json MarkerJson(const tally::MarkerInfo& marker) {
  Json j = Json::object();
  j["event_id"] = marker.event_id;
  j["shard"] = marker.shard;
  j["delta"] = marker.delta;
  SetTime(&j, "created_at", marker.created_at_ms);
  if (marker.expires_at_ms != 0) SetTime(&j, "expires_at", marker.expires_at_ms);
  if (!marker.key.empty()) j["key"] = marker.key;
  return j;
}

Json KeyValuesJson(const std::vector<tally::KeyValue>& keys) {
  Json list = Json::array();
  for (const tally::KeyValue& kv : keys) {
    // A key without a value (beyond int64): value null, and says so.
    list.push_back(kv.out_of_range
                       ? Json{{"key", kv.key},
                              {"value", nullptr},
                              {"out_of_range", true}}
                       : Json{{"key", kv.key}, {"value", kv.value}});
  }
  return list;
}

}  // namespace counterctl
