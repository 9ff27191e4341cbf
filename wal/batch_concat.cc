#include "wal/batch_concat.h"

#include <cassert>
#include <utility>

namespace tally::wal {
namespace {

constexpr size_t kCountOffset = 8;  // after the fixed64 sequence

void PutFixed32At(std::string* rep, size_t offset, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) {
    (*rep)[offset + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  }
}

uint32_t Fixed32At(const std::string& rep, size_t offset) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) {
    v |= static_cast<uint32_t>(static_cast<unsigned char>(rep[offset + i]))
         << (8 * i);
  }
  return v;
}

}  // namespace

BatchConcat::BatchConcat(size_t reserve_bytes) {
  rep_.reserve(reserve_bytes < kBatchHeaderBytes ? kBatchHeaderBytes
                                                 : reserve_bytes);
  rep_.assign(kBatchHeaderBytes, '\0');
}

void BatchConcat::Append(const rocksdb::WriteBatch& batch) {
  const std::string& rep = batch.Data();
  // Every WriteBatch, even an empty one, holds a whole header, and its
  // header count is what Count() reports.
  assert(rep.size() >= kBatchHeaderBytes);
  assert(Fixed32At(rep, kCountOffset) == batch.Count());
  rep_.append(rep, kBatchHeaderBytes, std::string::npos);
  count_ += Fixed32At(rep, kCountOffset);
}

rocksdb::WriteBatch BatchConcat::Finish() {
  PutFixed32At(&rep_, kCountOffset, count_);
  rocksdb::WriteBatch out(std::move(rep_));
  rep_.assign(kBatchHeaderBytes, '\0');
  count_ = 0;
  return out;
}

}  // namespace tally::wal
