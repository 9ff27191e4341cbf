// The input side of `counterctl apply`: lines read in chunks, with memory
// bounded whatever the input's size.
//
// Memory bound. apply never holds its input: a reader keeps at most one
// read's worth of bytes plus one partial line (kApplyReadBytes +
// kMaxApplyLineBytes), and each worker holds one chunk, a copy of at most
// --batch lines and at most kApplyChunkBytes + kMaxApplyLineBytes bytes.
// So apply's own memory is about
//   threads x (kApplyChunkBytes + batch x ~1 KiB for the parsed operations)
// plus the rejections of the few chunks waiting for an earlier one (see
// apply_runner.h), on top of the database's (RocksDB's memtables and block
// cache), and does not grow with the input: a 20 GB replay needs no more
// than a 20 MB one.
//
// Why these limits: kApplyChunkBytes (4 MiB) is 65536 (the largest --batch)
// lines of 64 bytes, so a chunk of ordinary lines is cut by --batch, never
// by size; the cap only matters for long lines, where it keeps one chunk's
// copy from being --batch x the longest line. kMaxApplyLineBytes (64 KiB)
// is far past any valid line (the longest fields, escaped \uXXXX byte by
// byte, come to under 4 KiB) and leaves room for generous whitespace; a
// longer line is rejected without being held ("line is longer than 65536
// bytes"), so a file without line ends cannot take the memory either.

#ifndef TALLY_TOOLS_COUNTERCTL_APPLY_INPUT_H_
#define TALLY_TOOLS_COUNTERCTL_APPLY_INPUT_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tally/status.h"

namespace counterctl {

inline constexpr size_t kMaxApplyLineBytes = size_t{64} << 10;
inline constexpr size_t kApplyChunkBytes = size_t{4} << 20;
inline constexpr size_t kApplyReadBytes = size_t{1} << 20;

// Consecutive input lines, owned: what one worker applies as one batch.
struct Chunk {
  struct Line {
    size_t offset = 0;  // in text
    size_t size = 0;
    bool too_long = false;  // longer than kMaxApplyLineBytes: not kept
  };
  size_t first_line = 0;  // the input line number of lines[0]
  // Input bytes up to the end of the chunk, from where the source started
  // (after --skip): the progress line's figure.
  uint64_t end_offset = 0;
  std::string text;
  std::vector<Line> lines;

  std::string_view Text(size_t i) const {
    return std::string_view(text).substr(lines[i].offset, lines[i].size);
  }
  size_t last_line() const { return first_line + lines.size() - 1; }
  void Clear() {
    text.clear();
    lines.clear();
  }
  // Whether another line may join (below max_lines and kApplyChunkBytes).
  bool HasRoom(size_t max_lines) const {
    return lines.size() < max_lines && text.size() < kApplyChunkBytes;
  }
};

// Splits the bytes of a file descriptor into lines ('\n' ends; a last line
// without one counts at end of input), holding at most kApplyReadBytes +
// kMaxApplyLineBytes of them.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}

  enum class Got {
    kLine,     // *line is the next line (valid until the next call)
    kTooLong,  // the next line was longer than kMaxApplyLineBytes
    kNone,     // no whole line is buffered: Fill() first
    kEnd,      // end of input, every line returned
  };
  Got Next(std::string_view* line);
  // Reads once (blocking). Returns false on a read error (errno is set);
  // true otherwise, also at end of input.
  bool Fill();
  bool eof() const { return eof_; }
  // Whether bytes read are waiting to be returned as lines.
  bool HasBuffered() const { return pos_ < buf_.size() || skipping_; }
  // Bytes of input returned as lines (or skipped as too long).
  uint64_t consumed() const { return bytes_read_ - (buf_.size() - pos_); }
  // When the oldest buffered byte was read (the feed's --max-delay).
  std::chrono::steady_clock::time_point oldest() const { return oldest_; }

 private:
  const int fd_;
  std::string buf_;
  size_t pos_ = 0;    // first byte of buf_ not returned yet
  size_t scan_ = 0;   // bytes from pos_ known to hold no '\n'
  bool skipping_ = false;  // inside a line too long to keep
  bool eof_ = false;
  uint64_t bytes_read_ = 0;
  std::chrono::steady_clock::time_point oldest_{};
};

// Where ApplyLines takes its chunks. Called by one thread at a time.
class ApplySource {
 public:
  virtual ~ApplySource() = default;
  // Fills *chunk (cleared first; chunk->first_line set) with the next
  // lines while chunk->HasRoom(max_lines). Returns false when no line is
  // left to apply: at the end of the input, when status() is not OK, or
  // when the source stopped (a feed after SIGINT).
  virtual bool Next(size_t max_lines, Chunk* chunk) = 0;
  // Not OK after a read failure.
  virtual tally::Status status() const = 0;
  // Whether the whole input was returned.
  virtual bool exhausted() const = 0;
  // The input's size in bytes from where the source started (after
  // --skip), for the progress line; 0 when unknown.
  virtual uint64_t total_bytes() const = 0;
  // The input line number the next chunk starts at.
  size_t next_line() const { return next_line_; }

 protected:
  size_t next_line_ = 1;
};

// A file, read once from start to end (any readable path: a pipe works).
class FileSource : public ApplySource {
 public:
  ~FileSource() override;
  // Opens `path` and skips its first `skip` lines. On failure returns
  // null with *error set: the path and the system's reason, or, when the
  // file has fewer lines, *lines_in_file set and *error empty.
  static std::unique_ptr<FileSource> Open(const std::string& path,
                                          uint64_t skip, std::string* error,
                                          uint64_t* lines_in_file);

  bool Next(size_t max_lines, Chunk* chunk) override;
  tally::Status status() const override { return status_; }
  bool exhausted() const override { return exhausted_; }
  uint64_t total_bytes() const override {
    return size_ > start_ ? size_ - start_ : 0;
  }

 private:
  FileSource(int fd, std::string path, uint64_t size)
      : fd_(fd), path_(std::move(path)), size_(size), reader_(fd) {}
  bool Fill();

  const int fd_;
  const std::string path_;
  const uint64_t size_;
  uint64_t start_ = 0;  // bytes skipped by --skip
  LineReader reader_;
  tally::Status status_;
  bool exhausted_ = false;
};

// Stdin as a live feed: Next() returns once the chunk holds max_lines,
// once its first line has waited max_delay_ms, or at the end of input; after
// `stop` is set it returns the whole lines already read, reads no more, and
// then returns false.
class FeedSource : public ApplySource {
 public:
  FeedSource(int fd, int64_t max_delay_ms, const std::atomic<bool>* stop)
      : fd_(fd), max_delay_ms_(max_delay_ms), stop_(stop), reader_(fd) {}

  bool Next(size_t max_lines, Chunk* chunk) override;
  tally::Status status() const override { return status_; }
  bool exhausted() const override { return exhausted_; }
  uint64_t total_bytes() const override { return 0; }

 private:
  const int fd_;
  const int64_t max_delay_ms_;
  const std::atomic<bool>* const stop_;
  LineReader reader_;
  tally::Status status_;
  bool exhausted_ = false;
};

}  // namespace counterctl

#endif  // TALLY_TOOLS_COUNTERCTL_APPLY_INPUT_H_
