#include "wal_render.h"

#include "common.h"

namespace counterctl {
namespace {

using Kind = tally::DumpField::Kind;

// Printable() without a length cut: names and event ids are short, and a
// debugging dump should show them whole.
std::string Text(std::string_view s) { return Printable(s, s.size() * 4 + 4); }

std::string Signed(int64_t v) {
  return (v >= 0 ? "+" : "") + std::to_string(v);
}

// One field, appended to the op's text line and JSON object.
void Render(const tally::DumpField& f, std::string* text, Json* json) {
  const std::string& key = f.json_key.empty() ? f.key : f.json_key;
  switch (f.kind) {
    case Kind::kWord:
      *text += " " + f.text;
      (*json)[f.key] = f.text;
      return;
    case Kind::kText:
      *text += " " + f.key + "=" + Text(f.text);
      (*json)[key] = f.text;
      return;
    case Kind::kQuoted:
      *text += " " + f.key + "=\"" + Text(f.text) + "\"";
      (*json)[key] = f.text;
      return;
    case Kind::kInt:
      *text += " " + f.key + "=" + std::to_string(f.i);
      (*json)[key] = f.i;
      return;
    case Kind::kUint:
      *text += " " + f.key + "=" + std::to_string(f.u);
      (*json)[key] = f.u;
      return;
    case Kind::kDelta:
      *text += " " + f.key + "=" + Signed(f.i);
      (*json)[key] = f.i;
      return;
    case Kind::kTime:
      *text += " " + f.key + "=" + FormatUtcMillis(f.i);
      SetTime(json, key, f.i);
      return;
    case Kind::kBytes:
      *text += " " + f.key + "=" + Hex(f.text);
      (*json)[key + "_hex"] = Hex(f.text);
      return;
    case Kind::kCounter:
      // "counter=NAME", or "id=N" when the catalog no longer (or never)
      // had it; JSON has both, counter null then.
      if (f.named) {
        *text += " counter=" + Text(f.text);
        (*json)["counter"] = f.text;
      } else {
        *text += " id=" + std::to_string(f.u);
        (*json)["counter"] = nullptr;
      }
      (*json)["counter_id"] = f.u;
      return;
  }
}

}  // namespace

std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

std::string WalOpText(const tally::DumpOp& op) {
  std::string text = op.op;
  Json json = Json::object();
  for (const tally::DumpField& f : op.fields) Render(f, &text, &json);
  return text;
}

Json WalOpJson(const tally::DumpOp& op) {
  std::string text;
  Json json = Json::object();
  json["op"] = op.op;
  for (const tally::DumpField& f : op.fields) Render(f, &text, &json);
  return json;
}

std::string WalBatchText(const tally::DumpBatch& batch) {
  std::string out = "batch seq=" + std::to_string(batch.seq) +
                    " ops=" + std::to_string(batch.count) + "\n";
  for (const tally::DumpOp& op : batch.ops) out += "  " + WalOpText(op) + "\n";
  return out;
}

Json WalBatchJson(const tally::DumpBatch& batch) {
  Json ops = Json::array();
  for (const tally::DumpOp& op : batch.ops) ops.push_back(WalOpJson(op));
  return Json{{"seq", batch.seq}, {"count", batch.count}, {"ops", ops}};
}

std::string WalGapText(uint64_t from, uint64_t to) {
  return "gap from=" + std::to_string(from) + " to=" + std::to_string(to) +
         "\n";
}

Json WalGapJson(uint64_t from, uint64_t to) {
  return Json{{"gap_from", from}, {"gap_to", to}};
}

}  // namespace counterctl
