// CRC16 and the hash slot of a key, exactly as Redis Cluster computes them
// (cluster specification, "Keys distribution model"; src/crc16.c and
// keyHashSlot in src/cluster.c of Redis).
//
// Thread safety: pure functions over a constant table; safe from any
// thread.

#ifndef TALLY_CLUSTER_CLIENT_CRC16_H_
#define TALLY_CLUSTER_CLIENT_CRC16_H_

#include <cstdint>
#include <string_view>

namespace tally::cluster {

// CRC16-XMODEM (CCITT polynomial 0x1021, initial value 0, no reflection, no
// final xor): Crc16("123456789") == 0x31C3.
uint16_t Crc16(std::string_view bytes);

// The hash slot of `key`: Crc16 of the key, or of its hash tag, modulo
// 16384. The hash tag is the bytes between the first '{' and the first '}'
// after it, when there is such a '}' and the bytes between are not empty;
// otherwise the whole key is hashed ("{}x" hashes "{}x", "{a{b}c}" hashes
// "a{b").
int KeyHashSlot(std::string_view key);

}  // namespace tally::cluster

#endif  // TALLY_CLUSTER_CLIENT_CRC16_H_
