// tfrecord_dump: prints each record of a TFRecord file as one JSON line: where it is, its
// CRCs, the decoded tf.Example or tf.SequenceExample with every value (floats as their bit
// patterns, so nothing is rounded), and whether the payload is the deterministic encoding of
// what it holds. After a reading error, a last line says what TensorFlow would report, and
// the exit status is 1. GZIP and ZLIB files are recognised by their first bytes.
//
//   tfrecord_dump [--as example|sequence|raw] [--digest-after N] FILE
//
// --digest-after N: from record N on, lists longer than 64 values are printed as a count and
// the SHA-256 of their little-endian values (of each bytes value: its u64le length, then it).
#include <tablio/framing/tfrecord.hpp>
#include <tablio/types/example.hpp>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

using namespace tablio;

namespace {

// SHA-256 (FIPS 180-4), for the digests of long lists.
class sha256 {
 public:
  void update(const void* data, std::size_t n) {
    auto p = static_cast<const unsigned char*>(data);
    total_ += n;
    while (n > 0) {
      std::size_t take = std::min(n, 64 - used_);
      std::memcpy(block_ + used_, p, take);
      used_ += take;
      p += take;
      n -= take;
      if (used_ == 64) {
        compress(block_);
        used_ = 0;
      }
    }
  }
  std::string hex() {
    std::uint64_t bits = total_ * 8;
    unsigned char pad = 0x80;
    update(&pad, 1);
    unsigned char zero = 0;
    while (used_ != 56) update(&zero, 1);
    unsigned char length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    update(length, 8);
    std::string out;
    char digits[9];
    for (std::uint32_t word : state_) {
      std::snprintf(digits, sizeof digits, "%08x", word);
      out += digits;
    }
    return out;
  }

 private:
  static std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void compress(const unsigned char* b) {
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
      w[i] = std::uint32_t{b[4 * i]} << 24 | std::uint32_t{b[4 * i + 1]} << 16 |
             std::uint32_t{b[4 * i + 2]} << 8 | b[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
      std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t v[8];
    std::memcpy(v, state_, sizeof v);
    for (int i = 0; i < 64; ++i) {
      std::uint32_t s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
      std::uint32_t t1 = v[7] + s1 + ((v[4] & v[5]) ^ (~v[4] & v[6])) + k[i] + w[i];
      std::uint32_t s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
      std::uint32_t t2 = s0 + ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
      std::memmove(v + 1, v, 7 * sizeof(std::uint32_t));
      v[4] += t1;
      v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; ++i) state_[i] += v[i];
  }

  std::uint32_t state_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  unsigned char block_[64];
  std::size_t used_ = 0;
  std::uint64_t total_ = 0;
};

struct json {
  std::string out;
  void key(std::string_view k) {
    out += '"';
    string_body(k);
    out += "\":";
  }
  void string(std::string_view s) {
    out += '"';
    string_body(s);
    out += '"';
  }
  void string_body(std::string_view s) {
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        char escape[8];
        std::snprintf(escape, sizeof escape, "\\u%04x", c);
        out += escape;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  void number(std::int64_t v) { out += std::to_string(v); }
  void unsigned_number(std::uint64_t v) { out += std::to_string(v); }
};

std::string hex_of(std::string_view bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string h;
  for (unsigned char c : bytes) {
    h += digits[c >> 4];
    h += digits[c & 15];
  }
  return h;
}

void print_feature(json& j, const feature& f, bool digest) {
  auto list = [&](const char* name, std::size_t n, auto each) {
    j.out += "{\"";
    j.out += name;
    j.out += "\":[";
    for (std::size_t i = 0; i < n; ++i) {
      if (i) j.out += ',';
      each(i);
    }
    j.out += "]}";
  };
  auto digested = [&](const char* count_name, std::size_t n, const char* hash_name, sha256& h) {
    j.out += "{\"";
    j.out += count_name;
    j.out += "\":" + std::to_string(n) + ",\"" + hash_name + "\":\"" + h.hex() + "\"}";
  };
  if (auto* b = std::get_if<std::vector<std::string>>(&f)) {
    if (digest && b->size() > 64) {
      sha256 h;
      for (const auto& v : *b) {
        char length[8];
        store<std::endian::little>(length, static_cast<std::uint64_t>(v.size()));
        h.update(length, 8);
        h.update(v.data(), v.size());
      }
      return digested("bytes_count", b->size(), "bytes_sha256", h);
    }
    list("bytes_hex", b->size(), [&](std::size_t i) { j.string(hex_of((*b)[i])); });
  } else if (auto* fl = std::get_if<std::vector<float>>(&f)) {
    if (digest && fl->size() > 64) {
      sha256 h;
      for (float v : *fl) {
        char le[4];
        store<std::endian::little>(le, v);
        h.update(le, 4);
      }
      return digested("float_count", fl->size(), "float_bits_sha256", h);
    }
    list("float_bits", fl->size(),
         [&](std::size_t i) { j.unsigned_number(std::bit_cast<std::uint32_t>((*fl)[i])); });
  } else if (auto* in = std::get_if<std::vector<std::int64_t>>(&f)) {
    if (digest && in->size() > 64) {
      sha256 h;
      for (std::int64_t v : *in) {
        char le[8];
        store<std::endian::little>(le, v);
        h.update(le, 8);
      }
      return digested("int64_count", in->size(), "int64_sha256", h);
    }
    list("int64", in->size(), [&](std::size_t i) { j.number((*in)[i]); });
  } else {
    j.out += "{}";
  }
}

void print_features(json& j, const example& ex, bool digest) {
  j.out += '{';
  bool first = true;
  for (const auto& [name, f] : ex.features) {
    if (!first) j.out += ',';
    first = false;
    j.key(name);
    print_feature(j, f, digest);
  }
  j.out += '}';
}

enum class mode { example, sequence, raw };

int usage() {
  std::fputs("usage: tfrecord_dump [--as example|sequence|raw] [--digest-after N] FILE\n", stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  mode as = mode::example;
  std::uint64_t digest_after = UINT64_MAX;
  std::string file;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--as" && i + 1 < argc) {
      std::string_view m = argv[++i];
      if (m == "example")
        as = mode::example;
      else if (m == "sequence")
        as = mode::sequence;
      else if (m == "raw")
        as = mode::raw;
      else
        return usage();
    } else if (a == "--digest-after" && i + 1 < argc) {
      digest_after = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else if (file.empty() && (!a.starts_with("--") || a == "-")) {
      file = a;
    } else {
      return usage();
    }
  }
  if (file.empty()) return usage();

  std::optional<tfrecord_reader> records;
  bool compressed = false;
  try {
    reader head = open_input(file);
    compressed = tfrecord_compression(head) != compression::none;
    head.close();
    records.emplace(open_tfrecord_input(file), tfrecord_read_options{.strict_end = true});
  } catch (const tablio::error& e) {
    std::fprintf(stderr, "tfrecord_dump: %s\n", e.what());
    return 2;
  }
  json j;
  std::string_view record;
  std::string reencoded;
  std::uint64_t index = 0;
  auto error_line = [&](const char* code, std::string_view message, bool eof_note) {
    j.out.clear();
    j.out += "{\"error\":{\"code\":\"";
    j.out += code;
    j.out += "\",\"record_offset\":" + std::to_string(records->offset()) + ",\"message\":";
    j.string(message);
    if (eof_note) j.out += ",\"tfrecorddataset\":\"end of file, no error\"";
    j.out += "}}\n";
    std::fwrite(j.out.data(), 1, j.out.size(), stdout);
  };
  for (;; ++index) {
    try {
      if (!records->next(record)) break;
    } catch (const data_loss_error& e) {
      std::string message = e.found();
      if (e.cause() == data_loss_error::cause::truncated_data)
        message += compressed ? "' failed with EOF reached" : "' failed with Read less bytes than requested";
      error_line("DATA_LOSS", message, false);
      return 1;
    } catch (const format_error& e) {
      // A partial header at the end: TensorFlow's OUT_OF_RANGE, which TFRecordDataset ignores.
      error_line(records->truncated_header() ? "OUT_OF_RANGE" : "DATA_LOSS", e.found(),
                 records->truncated_header() != 0);
      return 1;
    }
    j.out.clear();
    j.out += "{\"offset\":" + std::to_string(records->offset()) +
             ",\"length\":" + std::to_string(records->length()) +
             ",\"length_crc\":" + std::to_string(records->masked_length_crc()) +
             ",\"crc\":" + std::to_string(records->masked_crc());
    bool digest = index >= digest_after;
    try {
      if (as == mode::example) {
        example ex = decode_example(record, file);
        j.out += ",\"example\":";
        print_features(j, ex, digest);
        encode_example(ex, reencoded);
      } else if (as == mode::sequence) {
        sequence_example seq = decode_sequence_example(record, file);
        j.out += ",\"sequence_example\":{\"context\":";
        print_features(j, seq.context, digest);
        j.out += ",\"feature_lists\":{";
        bool first = true;
        for (const auto& [name, list] : seq.feature_lists) {
          if (!first) j.out += ',';
          first = false;
          j.key(name);
          j.out += '[';
          for (std::size_t i = 0; i < list.features.size(); ++i) {
            if (i) j.out += ',';
            print_feature(j, list.features[i], digest);
          }
          j.out += ']';
        }
        j.out += "}}";
        encode_sequence_example(seq, reencoded);
      }
    } catch (const format_error& e) {
      error_line("INVALID_ARGUMENT", std::string("Could not parse the record: ") + e.what(), false);
      return 1;
    }
    if (as != mode::raw)
      j.out += std::string(",\"deterministic\":") + (reencoded == record ? "true" : "false");
    j.out += "}\n";
    if (std::fwrite(j.out.data(), 1, j.out.size(), stdout) != j.out.size()) return 3;
  }
  return std::fflush(stdout) == 0 ? 0 : 3;
}
