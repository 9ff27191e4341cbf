// Rendering of the WAL dump (tally/dump.h decodes it): one batch as text
// lines or as one JSON object, and a gap between batches. Text and JSON
// carry the same facts in the same order.
//
// Thread safety: plain functions over values; no shared state.

#ifndef TALLY_TOOLS_COUNTERCTL_WAL_RENDER_H_
#define TALLY_TOOLS_COUNTERCTL_WAL_RENDER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "json_output.h"
#include "tally/dump.h"

namespace counterctl {

// One op's text line (without the leading two spaces), and its JSON object.
std::string WalOpText(const tally::DumpOp& op);
Json WalOpJson(const tally::DumpOp& op);

// "batch seq=S ops=N" followed by one "  <op>" line per entry, each line
// ending in '\n'.
std::string WalBatchText(const tally::DumpBatch& batch);

// {"seq":S,"count":N,"ops":[...]}: one line of `wal dump --json`.
Json WalBatchJson(const tally::DumpBatch& batch);

// "gap from=A to=B\n" and {"gap_from":A,"gap_to":B}.
std::string WalGapText(uint64_t from, uint64_t to);
Json WalGapJson(uint64_t from, uint64_t to);

// Lower-case hex of `bytes`, no separators.
std::string Hex(std::string_view bytes);

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_WAL_RENDER_H_
