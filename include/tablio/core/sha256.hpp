// SHA-256 (FIPS 180-4), in hex: the payload hash S3's SigV4 signs, the names of cached remote
// objects, digests of long lists. Portable and plain.
#pragma once

#include <tablio/core/version.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// An incremental SHA-256: update() with the bytes in order, then hex() once.
class sha256 {
 public:
  // Hashes more bytes, after those given before: the digest is of all of them in order.
  void update(std::string_view data) {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    std::size_t n = data.size();
    if (n == 0) return;  // an empty view's data() may be null, which memcpy may not be given
    length_ += n;
    if (used_ != 0) {
      std::size_t take = n < 64 - used_ ? n : 64 - used_;
      std::memcpy(block_ + used_, p, take);
      used_ += take;
      p += take;
      n -= take;
      if (used_ < 64) return;
      compress(block_);
      used_ = 0;
    }
    for (; n >= 64; p += 64, n -= 64) compress(p);
    std::memcpy(block_, p, n);
    used_ = n;
  }

  // The digest as 64 lowercase hex digits; the object is spent.
  std::string hex() {
    std::uint64_t bits = length_ * 8;
    unsigned char pad[72] = {0x80};
    std::size_t pad_size = (used_ < 56 ? 56 : 120) - used_;
    for (std::size_t i = 0; i < 8; ++i) pad[pad_size + i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    update(std::string_view(reinterpret_cast<const char*>(pad), pad_size + 8));
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (std::uint32_t word : state_)
      for (int shift = 28; shift >= 0; shift -= 4) out.push_back(digits[(word >> shift) & 15]);
    return out;
  }

  // The digest of data, in hex: sha256::of("abc") == "ba7816bf...".
  static std::string of(std::string_view data) {
    sha256 h;
    h.update(data);
    return h.hex();
  }

 private:
  static std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

  void compress(const unsigned char* p) {
    static constexpr std::uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = std::uint32_t{p[4 * i]} << 24 | std::uint32_t{p[4 * i + 1]} << 16 |
             std::uint32_t{p[4 * i + 2]} << 8 | std::uint32_t{p[4 * i + 3]};
    for (int i = 16; i < 64; ++i) {
      std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::array<std::uint32_t, 8> v = state_;
    for (int i = 0; i < 64; ++i) {
      std::uint32_t s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
      std::uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
      std::uint32_t t1 = v[7] + s1 + ch + k[i] + w[i];
      std::uint32_t s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
      std::uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
      v = {t1 + s0 + maj, v[0], v[1], v[2], v[3] + t1, v[4], v[5], v[6]};
    }
    for (std::size_t i = 0; i < 8; ++i) state_[i] += v[i];
  }

  std::array<std::uint32_t, 8> state_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char block_[64];
  std::size_t used_ = 0;
  std::uint64_t length_ = 0;
};

TABLIO_END_NAMESPACE
