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
#include <tablio/core/sha256.hpp>
#include <tablio/framing/tfrecord.hpp>
#include <tablio/types/example.hpp>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

using namespace tablio;

namespace {

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
        h.update({length, 8});
        h.update(v);
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
        h.update({le, 4});
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
        h.update({le, 8});
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
