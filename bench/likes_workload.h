// The likes workload of tally_likes_bench (issue 15): likes of posts with
// Zipf-distributed popularity, each like a (post, user) pair delivered once
// or, for 20% of the likes, twice. Built before a timed loop, from a fixed
// seed, so every side of the benchmark (tally, SQLite, Redis) replays the
// same deliveries, and the generator's own per-post counts are what every
// side's result is checked against.
//
// Header-only and independent of tally, SQLite and Redis. Thread safety:
// values; a Workload is read-only once built.

#ifndef TALLY_BENCH_LIKES_WORKLOAD_H_
#define TALLY_BENCH_LIKES_WORKLOAD_H_

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

namespace tally::bench {

// Ranks 1..n with P(k) proportional to 1/k^s, by rejection-inversion
// (Hörmann and Derflinger, "Rejection-inversion to generate variates from
// monotone discrete distributions", 1996; the form of Apache Commons
// RejectionInversionZipfSampler): O(1) memory and time per draw, so 10M
// posts need no 80 MB table of their CDF. s > 0.
class ZipfSampler {
 public:
  ZipfSampler(uint64_t n, double s) : n_(n), s_(s) {
    h_x1_ = HIntegral(1.5) - 1.0;
    h_n_ = HIntegral(static_cast<double>(n) + 0.5);
    accept_ = 2.0 - HIntegralInverse(HIntegral(2.5) - H(2.0));
  }

  template <typename Engine>
  uint64_t Sample(Engine& rng) {
    for (;;) {
      const double u = h_n_ + Uniform01(rng) * (h_x1_ - h_n_);
      const double x = HIntegralInverse(u);
      uint64_t k = static_cast<uint64_t>(x + 0.5);
      k = std::clamp<uint64_t>(k, 1, n_);
      const double kd = static_cast<double>(k);
      if (kd - x <= accept_ || u >= HIntegral(kd + 0.5) - H(kd)) return k;
    }
  }

 private:
  template <typename Engine>
  static double Uniform01(Engine& rng) {
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
  }
  double H(double x) const { return std::exp(-s_ * std::log(x)); }
  double HIntegral(double x) const {
    const double lx = std::log(x);
    return Helper2((1.0 - s_) * lx) * lx;
  }
  double HIntegralInverse(double x) const {
    double t = x * (1.0 - s_);
    if (t < -1.0) t = -1.0;
    return std::exp(Helper1(t) * x);
  }
  // log1p(x)/x and expm1(x)/x, continuous at 0.
  static double Helper1(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x
                              : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
  }
  static double Helper2(double x) {
    return std::abs(x) > 1e-8
               ? std::expm1(x) / x
               : 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
  }

  uint64_t n_;
  double s_;
  double h_x1_ = 0, h_n_ = 0, accept_ = 0;
};

// One delivery of a like: post id 0..posts-1, user id.
struct Like {
  uint32_t post = 0;
  uint32_t user = 0;
};

struct LikesWorkload {
  uint32_t posts = 0;
  std::vector<Like> deliveries;  // in delivery order, copies included
  std::vector<uint32_t> likes;   // per post id: its distinct likes
  uint64_t distinct = 0;         // distinct (post, user) pairs delivered
  uint64_t copies = 0;           // second deliveries (must be kDuplicate)
  uint64_t posts_liked = 0;      // posts with at least one like
  // The posts of popularity rank 1..kCelebrities (the most liked).
  std::vector<uint32_t> celebrities;
};

inline constexpr double kZipfExponent = 1.0;
inline constexpr int kCopyEvery = 5;  // 1 like in 5 (20%) comes twice
inline constexpr size_t kCelebrities = 100;
inline constexpr size_t kShuffleWindow = 4096;

// Rank r (1-based) -> post id: a bijection of 0..posts-1 (a multiplier
// coprime to `posts`), so that the celebrities are spread over the key
// space instead of being the first keys.
inline uint32_t PostOfRank(uint64_t rank, uint32_t posts) {
  uint64_t m = 7919;  // a prime; stepped up until coprime to posts
  auto gcd = [](uint64_t a, uint64_t b) {
    while (b != 0) a = std::exchange(b, a % b);
    return a;
  };
  while (gcd(m, posts) != 1) m += 2;
  return static_cast<uint32_t>(((rank - 1) * m) % posts);
}

// `n` deliveries of likes over `posts` posts. The k-th distinct like of a
// post is user (k * 2654435761 + post * 40503) mod 2^32: distinct users per
// post (a bijection of k), and one user likes many posts. Every kCopyEvery-th
// like is delivered twice; the deliveries are shuffled (fixed seed) within
// windows of kShuffleWindow, the way a redelivering queue interleaves
// retries with new likes (a copy may even come before its original).
inline LikesWorkload MakeLikes(uint32_t posts, size_t n, uint64_t seed = 15) {
  LikesWorkload w;
  w.posts = posts;
  w.likes.assign(posts, 0);
  w.deliveries.reserve(n);
  std::mt19937_64 rng(seed);
  ZipfSampler zipf(posts, kZipfExponent);
  for (uint64_t i = 0; w.deliveries.size() < n; ++i) {
    const uint32_t post = PostOfRank(zipf.Sample(rng), posts);
    const uint32_t k = w.likes[post]++;
    if (k == 0) ++w.posts_liked;
    const Like like{post, k * 2654435761u + post * 40503u};
    w.deliveries.push_back(like);
    ++w.distinct;
    if (i % kCopyEvery == kCopyEvery - 1 && w.deliveries.size() < n) {
      w.deliveries.push_back(like);
      ++w.copies;
    }
  }
  for (size_t b = 0; b < w.deliveries.size(); b += kShuffleWindow) {
    const size_t e = std::min(w.deliveries.size(), b + kShuffleWindow);
    std::shuffle(w.deliveries.begin() + static_cast<std::ptrdiff_t>(b),
                 w.deliveries.begin() + static_cast<std::ptrdiff_t>(e), rng);
  }
  for (uint64_t r = 1; r <= kCelebrities && r <= posts; ++r) {
    w.celebrities.push_back(PostOfRank(r, posts));
  }
  return w;
}

// A decimal number in a fixed buffer: the text of a post or user id
// without an allocation. The view is valid until the next Of().
class IdText {
 public:
  std::string_view Of(uint32_t v) {
    const auto r = std::to_chars(buf_, buf_ + sizeof(buf_), v);
    return std::string_view(buf_, static_cast<size_t>(r.ptr - buf_));
  }

 private:
  char buf_[12];
};

}  // namespace tally::bench

#endif  // TALLY_BENCH_LIKES_WORKLOAD_H_
