// Names of remote objects: s3://bucket/key and http(s) URLs, the form they take in messages
// (no user name, password or query, which may hold a presigned URL's signature), and the
// percent-encoding of S3 keys and query values.
#pragma once

#include <tablio/core/error.hpp>

#include <optional>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace remote {

// A URL's parts: scheme "http" or "https", authority (host[:port]), path from its '/' on
// (with any query).
struct url_parts {
  std::string scheme, authority, path;
};

// The parts of "scheme://authority/path"; nullopt when there is no "://", no scheme or no
// authority. A URL without a path has "/".
inline std::optional<url_parts> split_url(std::string_view url) {
  std::size_t colon = url.find("://");
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::size_t slash = url.find('/', colon + 3);
  url_parts p;
  p.scheme = url.substr(0, colon);
  p.authority =
      url.substr(colon + 3, slash == std::string_view::npos ? std::string_view::npos : slash - colon - 3);
  p.path = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  if (p.authority.empty()) return std::nullopt;
  return p;
}

// The name as messages show it: without credentials in the authority or a query string.
inline std::string redacted(std::string_view name) {
  std::string out(name.substr(0, name.find_first_of("?#")));
  if (std::size_t scheme = out.find("://"); scheme != std::string::npos) {
    std::size_t end = out.find('/', scheme + 3);
    std::size_t at = out.rfind('@', end == std::string::npos ? out.size() : end);
    if (at != std::string::npos && at > scheme) out.erase(scheme + 3, at - scheme - 2);
  }
  return out;
}

// Percent-encodes all but RFC 3986's unreserved characters (and '/', when keep_slash): what
// S3 expects of keys in paths and of query values, and what SigV4 signs.
inline std::string percent_encoded(std::string_view s, bool keep_slash) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/');
    if (unreserved) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

// s3://bucket/key
struct s3_name {
  std::string bucket, key;
};

// The bucket and key of "s3://bucket/key" (the key may be empty: a bucket, or a prefix "s3://b/");
// usage_error when there is no bucket, or it holds '?' or '#'.
inline s3_name split_s3_name(std::string_view name) {
  std::string_view rest = name.substr(5);  // after "s3://"
  std::size_t slash = rest.find('/');
  s3_name n;
  n.bucket = rest.substr(0, slash);
  if (slash != std::string_view::npos) n.key = rest.substr(slash + 1);
  if (n.bucket.empty() || n.bucket.find_first_of("?#") != std::string::npos)
    throw_usage_error({"'", name, "' is not an s3://bucket/key name"});
  return n;
}

}  // namespace remote

TABLIO_END_NAMESPACE
