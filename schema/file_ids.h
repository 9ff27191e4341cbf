// The 4-byte FlatBuffers file identifier of each stored record
// (docs/format.md), in one place: records.cc verifies and writes them,
// marker_writer.cc writes the marker's.

#ifndef TALLY_SCHEMA_FILE_IDS_H_
#define TALLY_SCHEMA_FILE_IDS_H_

namespace tally::schema {

inline constexpr char kHeaderId[] = "TLHD";
inline constexpr char kCounterId[] = "TLCM";
inline constexpr char kMarkerId[] = "TLEM";
inline constexpr char kHoldId[] = "TLHO";
inline constexpr char kOutboxId[] = "TLOB";
inline constexpr char kClaimId[] = "TLCL";

}  // namespace tally::schema

#endif  // TALLY_SCHEMA_FILE_IDS_H_
