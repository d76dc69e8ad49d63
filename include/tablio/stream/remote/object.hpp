// One remote object: where its requests go and how they are signed (an http(s) URL as it is;
// s3://bucket/key at the endpoint AWS's settings name), and, once stat() has asked, its size
// and identity (ETag, else Last-Modified). Every read after that is pinned to that identity
// (If-Match), so that an object replaced while it is read is an error, never a mix of two
// versions; and a read resumes at the exact byte where a failed attempt stopped. An object is
// opened once per stream (a reader, a writer, a listing): the stream's deadline runs from then.
#pragma once

#include <tablio/stream/open_options.hpp>
#include <tablio/stream/remote/aws_config.hpp>
#include <tablio/stream/remote/http.hpp>
#include <tablio/stream/remote/url.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace remote {

class object {
 public:
  // The object `name` names (http(s) URL or s3://bucket/key), with AWS's settings read now for
  // s3://; usage_error for an s3:// name without a bucket, or settings AWS's tools refuse.
  object(std::string_view name, const open_options& options) {
    e_.name = redacted(name);
    std::string ca = options.remote.ca_file;
    if (name.starts_with("s3://")) {
      s3_name n = split_s3_name(name);
      aws_settings aws = load_aws_settings();
      bucket_ = n.bucket;
      key_ = n.key;
      e_.sign = !aws.access_key.empty();
      e_.region = aws.region;
      e_.access_key = aws.access_key;
      e_.secret_key = aws.secret_key;
      e_.session_token = aws.session_token;
      if (ca.empty()) ca = aws.ca_bundle;
      // A custom endpoint (MinIO, GCS, a local server) takes the bucket in the path; AWS takes
      // it in the host name, unless dots in it would not match AWS's certificate.
      if (!aws.endpoint.empty())
        bucket_url_ = aws.endpoint + "/" + percent_encoded(bucket_, false);
      else if (bucket_.find('.') == std::string::npos)
        bucket_url_ = "https://" + bucket_ + ".s3." + aws.region + ".amazonaws.com";
      else
        bucket_url_ = "https://s3." + aws.region + ".amazonaws.com/" + percent_encoded(bucket_, false);
      url_ = bucket_url_ + "/" + percent_encoded(key_, true);
    } else {
      url_ = std::string(name);
    }
    if (ca.empty()) ca = detail_environment_ca();
    e_.ca_file = ca;
    e_.scheme = url_.substr(0, url_.find(':'));
    if (options.remote.request_deadline) e_.retries.request_deadline = *options.remote.request_deadline;
    if (options.remote.stream_deadline) e_.retries.stream_deadline = *options.remote.stream_deadline;
    stream_ = deadline::after(e_.retries.stream_deadline, "stream");
  }

  // What its requests share: its name for messages, signing, the CA, the scheme.
  const endpoint& where() const noexcept { return e_; }
  // The name as messages show it, without credentials or a query string.
  const std::string& name() const noexcept { return e_.name; }
  // The URL requests go to (an s3:// name's at its endpoint).
  const std::string& url() const noexcept { return url_; }
  // Whether it is an s3:// object.
  bool is_s3() const noexcept { return !bucket_.empty(); }
  // The s3:// object's bucket; empty for http(s).
  const std::string& bucket() const noexcept { return bucket_; }
  // The s3:// object's key; empty for http(s).
  const std::string& key() const noexcept { return key_; }
  // For S3 requests on the bucket rather than the object (listing).
  const std::string& bucket_url() const noexcept { return bucket_url_; }

  // When a request of bounded size starting now must end: its own deadline, or the stream's.
  deadline request_deadline() const {
    return deadline::after(e_.retries.request_deadline, "request").sooner(stream_);
  }
  // When everything the stream does must end (the GET streaming the object in order).
  const deadline& stream_deadline() const noexcept { return stream_; }

  // Asks for the object's size and identity; throws io_error when it cannot be had. (A read
  // learns them from its first response too, saving the round trip.)
  void stat(connection& c) {
    response r;
    std::uint64_t at = 0;
    deadline d = request_deadline();
    with_retries(e_, d, r, at, [&] { return c.perform(e_, d, {"HEAD", url_}, r, {}); });
    if (!r.content_length) throw_io_error(e_.name, 0, {"the server gives no size (Content-Length) for"});
    size_ = *r.content_length;
    etag_ = r.etag;
    last_modified_ = r.last_modified;
    known_ = true;
  }
  // Whether stat() (or a first read) has learnt its size and identity.
  bool known() const noexcept { return known_; }

  // Whether the object exists (HEAD: 404 is no).
  bool exists(connection& c) {
    response r;
    std::uint64_t at = 0;
    deadline d = request_deadline();
    bool missing = false;
    with_retries(e_, d, r, at, [&] {
      connection::result got = c.perform(e_, d, {"HEAD", url_}, r, {});
      missing = got.code == CURLE_OK && r.status == 404;
      if (missing) r.status = 200;  // an answer: no
      return got;
    });
    return !missing;
  }

  // Its size in bytes, once known().
  std::uint64_t size() const noexcept { return size_; }
  // Its ETag, once known(); empty when the server gives none.
  const std::string& etag() const noexcept { return etag_; }

  // The request for bytes [from, to] (to inclusive, or to the end) of the object as stat()
  // saw it.
  request range_request(std::uint64_t from, std::optional<std::uint64_t> to) const {
    request q{"GET", url_};
    q.headers.push_back("Range: bytes=" + std::to_string(from) + "-" + (to ? std::to_string(*to) : ""));
    if (!etag_.empty())
      q.headers.push_back("If-Match: " + etag_);
    else if (!last_modified_.empty())
      q.headers.push_back("If-Unmodified-Since: " + last_modified_);
    return q;
  }

  // Checks a response to range_request(from, ...) before its bytes are used: the same object,
  // and the range asked for (a server that sends the whole object instead is refused).
  // Returns what is wrong, or nullptr.
  const char* wrong_response(const response& r, std::uint64_t from) const {
    if (!etag_.empty() && !r.etag.empty() && r.etag != etag_) return "the object changed since it was opened";
    if (r.status == 200 && from != 0) return "the server ignores byte ranges";
    if (r.status == 206 && !r.content_range.starts_with("bytes " + std::to_string(from) + "-"))
      return "the server sent another range than asked for";
    return nullptr;
  }

  // Reads bytes [from, to] (to inclusive; nullopt: to the end) into sink, retrying failures
  // and resuming at the byte where each attempt stopped, by the request deadline for a range
  // and the stream's for the rest of the object. False when sink stopped it (or pause(), which
  // waits between attempts, gave up). An object not stat()ed learns its size and identity from
  // the first response, before its first byte goes to sink (or when it has none): `learned` is
  // told then.
  bool get(connection& c, std::uint64_t from, std::optional<std::uint64_t> to, const data_sink& sink,
           const std::function<void()>& learned = {}, const pause_fn& pause = {}) {
    if (known_ && from >= (to ? *to + 1 : size_)) return true;
    std::uint64_t at = from, asked = from, end = 0;
    const char* wrong = nullptr;
    bool seen = false;  // the attempt's response was checked
    response r;
    auto check = [&] {
      seen = true;
      if (!known_ && (wrong = learn(r, asked)) == nullptr && learned) learned();
      if (!wrong && known_ && asked > size_) wrong = "an offset past the end";
      if (!wrong) wrong = wrong_response(r, asked);
      end = to ? std::min(*to + 1, size_) : size_;
    };
    data_sink checked = [&](const char* data, std::size_t n) {
      if (!seen) check();
      if (!wrong && n > end - at) wrong = "the server sent more than asked for";  // never buffered
      if (wrong) return false;
      at += n;
      return sink(data, n);
    };
    deadline d = to ? request_deadline() : stream_;
    auto attempt = [&] {
      asked = at;
      seen = false;
      std::optional<std::uint64_t> last =
          known_ ? std::optional(std::min(to.value_or(size_ - 1), size_ - 1)) : to;
      connection::result g = c.perform(e_, d, range_request(asked, last), r, checked);
      if (!seen && g.code == CURLE_OK && (r.status == 416 || (r.status >= 200 && r.status < 300))) {
        check();  // no body: an empty object, or one that ends where reading starts
        if (!wrong && r.status == 416 && asked >= size_) r.status = 206;  // nothing to read: done
      }
      if (!g.stopped && !wrong && g.code == CURLE_OK && r.status >= 200 && r.status < 300 && at != end)
        g.code = CURLE_PARTIAL_FILE;  // fewer bytes than asked for: resume
      return g;
    };
    connection::result got = with_retries(e_, d, r, at, attempt, pause);
    if (wrong) throw_io_error(e_.name, 0, {wrong, " (at byte ", decimal(at), ") of"});
    return !got.stopped;
  }

 private:
  // Takes the object's size and identity from the first response to a read from `from`;
  // what is wrong with it, or nullptr.
  const char* learn(const response& r, std::uint64_t from) {
    std::optional<std::uint64_t> total;
    if (std::size_t slash = r.content_range.rfind('/');
        slash != std::string::npos && r.content_range.size() > slash + 1)
      total = std::strtoull(r.content_range.c_str() + slash + 1, nullptr, 10);  // "bytes a-b/N", "bytes */N"
    else if (r.status == 200 && r.content_length)
      total = *r.content_length;
    if (!total)
      return r.status >= 200 && r.status < 300 ? "the server gives no size (Content-Range) for" : nullptr;
    if (r.status == 416 && from < *total) return nullptr;  // not about the size: the request failed
    size_ = *total;
    etag_ = r.etag;
    last_modified_ = r.last_modified;
    known_ = true;
    return nullptr;
  }

  static std::string detail_environment_ca() {
    for (const char* name : {"CURL_CA_BUNDLE", "SSL_CERT_FILE"})
      if (const char* v = std::getenv(name); v && *v) return v;
    return "";
  }

  endpoint e_;
  deadline stream_;
  std::string url_, bucket_url_, bucket_, key_;
  std::uint64_t size_ = 0;
  std::string etag_, last_modified_;
  bool known_ = false;  // size_, etag_ and last_modified_ are the object's
};

}  // namespace remote

TABLIO_END_NAMESPACE
