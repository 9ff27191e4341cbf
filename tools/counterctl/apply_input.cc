#include "apply_input.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace counterctl {
namespace {

// How often a feed with nothing pending looks at the stop flag (a poll
// timeout; a signal interrupts the poll anyway).
constexpr int kIdlePollMs = 500;

void AddLine(std::string_view text, bool too_long, Chunk* chunk) {
  chunk->lines.push_back(Chunk::Line{chunk->text.size(), text.size(), too_long});
  chunk->text.append(text);
}

}  // namespace

LineReader::Got LineReader::Next(std::string_view* line) {
  const size_t end = buf_.size();
  if (skipping_) {
    // Drop the rest of a long line up to its '\n'.
    const void* nl = pos_ < end ? std::memchr(buf_.data() + pos_, '\n', end - pos_)
                                : nullptr;
    if (nl == nullptr) {
      pos_ = end;
      scan_ = 0;
      if (!eof_) return Got::kNone;
    } else {
      pos_ = static_cast<size_t>(static_cast<const char*>(nl) - buf_.data()) + 1;
      scan_ = 0;
    }
    skipping_ = false;
    return Got::kTooLong;
  }
  if (pos_ < end) {
    const void* nl =
        std::memchr(buf_.data() + pos_ + scan_, '\n', end - pos_ - scan_);
    if (nl != nullptr) {
      const size_t at =
          static_cast<size_t>(static_cast<const char*>(nl) - buf_.data());
      const size_t size = at - pos_;
      *line = std::string_view(buf_).substr(pos_, size);
      pos_ = at + 1;
      scan_ = 0;
      return size > kMaxApplyLineBytes ? Got::kTooLong : Got::kLine;
    }
    scan_ = end - pos_;
    if (scan_ > kMaxApplyLineBytes) {
      // Too long to keep: forget it and skip up to its end.
      skipping_ = true;
      pos_ = end;
      scan_ = 0;
      return Next(line);
    }
    if (eof_) {
      // A last line without its '\n'.
      *line = std::string_view(buf_).substr(pos_);
      pos_ = end;
      scan_ = 0;
      return Got::kLine;
    }
    return Got::kNone;
  }
  return eof_ ? Got::kEnd : Got::kNone;
}

bool LineReader::Fill() {
  if (eof_) return true;
  // Keep only what was not returned yet (less than one line).
  if (pos_ > 0) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  if (buf_.empty() && !skipping_) oldest_ = std::chrono::steady_clock::now();
  const size_t used = buf_.size();
  buf_.resize(used + kApplyReadBytes);
  ssize_t got;
  do {
    got = ::read(fd_, buf_.data() + used, kApplyReadBytes);
  } while (got < 0 && errno == EINTR);
  const int err = errno;
  buf_.resize(used + static_cast<size_t>(std::max<ssize_t>(got, 0)));
  if (got < 0) {
    errno = err;
    return false;
  }
  if (got == 0) eof_ = true;
  bytes_read_ += static_cast<uint64_t>(got);
  return true;
}

FileSource::~FileSource() { ::close(fd_); }

std::unique_ptr<FileSource> FileSource::Open(const std::string& path,
                                             uint64_t skip, std::string* error,
                                             uint64_t* lines_in_file) {
  error->clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    const int err = S_ISDIR(st.st_mode) ? EISDIR : errno;
    ::close(fd);
    *error = path + ": " + std::strerror(err);
    return nullptr;
  }
  const uint64_t size =
      S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  std::unique_ptr<FileSource> source(new FileSource(fd, path, size));
  // The first read happens here, before the caller opens the database, so
  // an unreadable file is reported without touching it.
  if (!source->reader_.Fill()) {
    *error = path + ": " + std::strerror(errno);
    return nullptr;
  }
  std::string_view line;
  for (uint64_t skipped = 0; skipped < skip;) {
    switch (source->reader_.Next(&line)) {
      case LineReader::Got::kLine:
      case LineReader::Got::kTooLong:
        ++skipped;
        ++source->next_line_;
        break;
      case LineReader::Got::kNone:
        if (!source->reader_.Fill()) {
          *error = path + ": " + std::strerror(errno);
          return nullptr;
        }
        break;
      case LineReader::Got::kEnd:
        *lines_in_file = skipped;
        return nullptr;
    }
  }
  source->start_ = source->reader_.consumed();
  return source;
}

bool FileSource::Fill() {
  if (reader_.Fill()) return true;
  status_ = tally::Status::IOError(path_ + ": " + std::strerror(errno));
  return false;
}

bool FileSource::Next(size_t max_lines, Chunk* chunk) {
  chunk->Clear();
  chunk->first_line = next_line_;
  if (!status_.ok() || exhausted_) return false;
  std::string_view line;
  while (chunk->HasRoom(max_lines)) {
    const LineReader::Got got = reader_.Next(&line);
    if (got == LineReader::Got::kEnd) break;
    if (got == LineReader::Got::kNone) {
      if (!Fill()) break;
      continue;
    }
    AddLine(got == LineReader::Got::kLine ? line : std::string_view(),
            got == LineReader::Got::kTooLong, chunk);
    ++next_line_;
  }
  // Learn now whether this was the last chunk, so a run stopped after it
  // is not reported as stopped before the end.
  while (status_.ok() && !reader_.HasBuffered() && !reader_.eof()) {
    if (!Fill()) break;
  }
  if (status_.ok() && !reader_.HasBuffered() && reader_.eof()) {
    exhausted_ = true;
  }
  chunk->end_offset = reader_.consumed() - start_;
  return !chunk->lines.empty();
}

bool FeedSource::Next(size_t max_lines, Chunk* chunk) {
  using Clock = std::chrono::steady_clock;
  chunk->Clear();
  chunk->first_line = next_line_;
  Clock::time_point first{};  // when the chunk's first line was read
  std::string_view line;
  while (status_.ok()) {
    // Take what is buffered.
    while (chunk->HasRoom(max_lines)) {
      const Clock::time_point read_at = reader_.oldest();
      const LineReader::Got got = reader_.Next(&line);
      if (got == LineReader::Got::kEnd) {
        exhausted_ = true;
        break;
      }
      if (got == LineReader::Got::kNone) break;
      if (chunk->lines.empty()) first = read_at;
      AddLine(got == LineReader::Got::kLine ? line : std::string_view(),
              got == LineReader::Got::kTooLong, chunk);
      ++next_line_;
    }
    const bool stopping = stop_ != nullptr && stop_->load();
    if (!chunk->HasRoom(max_lines) || exhausted_ || stopping) break;
    int timeout = kIdlePollMs;
    if (!chunk->lines.empty()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          first + std::chrono::milliseconds(max_delay_ms_) - Clock::now());
      if (left.count() <= 0) break;  // the first line waited long enough
      timeout = static_cast<int>(left.count());
    }
    pollfd in{fd_, POLLIN, 0};
    const int ready = ::poll(&in, 1, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;  // a signal: the loop looks at `stop`
      status_ = tally::Status::IOError(std::string("stdin: ") +
                                       std::strerror(errno));
      break;
    }
    if (ready == 0) continue;  // the wait is over, or look at `stop`
    if (stop_ != nullptr && stop_->load()) continue;  // read no more
    if (!reader_.Fill()) {
      if (errno == EAGAIN) continue;
      status_ = tally::Status::IOError(std::string("stdin: ") +
                                       std::strerror(errno));
      break;
    }
  }
  chunk->end_offset = reader_.consumed();
  return !chunk->lines.empty() && status_.ok();
}

}  // namespace counterctl
