// S3's requests besides reading an object: listing a bucket's keys under a prefix
// (ListObjectsV2, page after page), and uploading an object in parts (CreateMultipartUpload,
// UploadPart, CompleteMultipartUpload, AbortMultipartUpload) or whole (PutObject). Query
// parameters are sent sorted and encoded, as SigV4 signs them.
#pragma once

#include <tablio/stream/remote/http.hpp>
#include <tablio/stream/remote/object.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace remote {

namespace detail {

// XML text with its five entities and numeric references decoded (keys in listings).
inline std::string xml_unescaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out.push_back(s[i]);
      continue;
    }
    std::size_t semi = s.find(';', i);
    if (semi == std::string_view::npos) {
      out.push_back('&');
      continue;
    }
    std::string_view name = s.substr(i + 1, semi - i - 1);
    if (name == "amp")
      out.push_back('&');
    else if (name == "lt")
      out.push_back('<');
    else if (name == "gt")
      out.push_back('>');
    else if (name == "quot")
      out.push_back('"');
    else if (name == "apos")
      out.push_back('\'');
    else if (name.starts_with("#")) {
      bool hex = name.size() > 1 && (name[1] == 'x' || name[1] == 'X');
      unsigned long cp = std::strtoul(std::string(name.substr(hex ? 2 : 1)).c_str(), nullptr, hex ? 16 : 10);
      // UTF-8 of the code point
      if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
      } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
    } else {
      out.append(s.substr(i, semi - i + 1));  // not an entity of XML's: kept as it is
    }
    i = semi;
  }
  return out;
}

// An S3 request about `obj` that answers with XML: runs it, retrying what may pass, and gives
// the body.
inline std::string s3_call(connection& c, const object& obj, request q, std::uint64_t at = 0) {
  const endpoint& e = obj.where();
  deadline d = obj.request_deadline();
  response r;
  with_retries(e, d, r, at, [&] { return c.perform(e, d, q, r, {}); });
  // CompleteMultipartUpload can fail after its 200 has begun: the error is in the body.
  if (r.body.find("<Error>") != std::string::npos) {
    r.status = 500;
    connection::result got;
    fail(e, at, r, got, 1);
  }
  return std::move(r.body);
}

}  // namespace detail

// The keys of the bucket's objects that start with `prefix`, in bytewise order.
inline std::vector<std::string> s3_list(connection& c, const object& bucket, const std::string& prefix) {
  std::vector<std::string> keys;
  std::string token;
  for (;;) {
    std::string query = "?";
    if (!token.empty()) query += "continuation-token=" + percent_encoded(token, false) + "&";
    query += "list-type=2&prefix=" + percent_encoded(prefix, false);
    std::string page = detail::s3_call(c, bucket, {"GET", bucket.bucket_url() + "/" + query});
    for (std::size_t at = page.find("<Contents>"); at != std::string::npos;
         at = page.find("<Contents>", at + 1))
      keys.push_back(detail::xml_unescaped(remote::detail::xml_text(page, "Key", at)));
    if (remote::detail::xml_text(page, "IsTruncated") != "true") break;
    token = detail::xml_unescaped(remote::detail::xml_text(page, "NextContinuationToken"));
    if (token.empty()) break;
  }
  return keys;
}

// One object's upload: whole, or in numbered parts completed (or aborted) at the end.
class s3_upload {
 public:
  // An upload of obj, which must outlive it; nothing is asked of S3 until a part or the whole.
  explicit s3_upload(const object& obj) : obj_(obj) {}

  // Stores the whole object in one request.
  void put_whole(connection& c, std::string_view data) {
    detail::s3_call(c, obj_, {"PUT", obj_.url(), {}, data});
  }

  // Uploads part `number` (1, 2, ...), the object's bytes from `offset` (what errors name),
  // starting the upload with the first.
  void put_part(connection& c, int number, std::string_view data, std::uint64_t offset) {
    if (upload_id_.empty()) {
      std::string created = detail::s3_call(c, obj_, {"POST", obj_.url() + "?uploads="});
      upload_id_ = detail::xml_unescaped(remote::detail::xml_text(created, "UploadId"));
      if (upload_id_.empty())
        throw_io_error(obj_.name(), 0, {"no UploadId in the answer to CreateMultipartUpload for"});
    }
    response r;
    const std::uint64_t at = offset;
    request q{"PUT",
              obj_.url() + "?partNumber=" + std::to_string(number) +
                  "&uploadId=" + percent_encoded(upload_id_, false),
              {},
              data};
    deadline d = obj_.request_deadline();
    with_retries(obj_.where(), d, r, at, [&] { return c.perform(obj_.where(), d, q, r, {}); });
    if (r.etag.empty())
      throw_io_error(obj_.name(), 0,
                     {"no ETag for part ", decimal(number), " (at byte ", decimal(offset), ") of"});
    etags_.resize(std::max<std::size_t>(etags_.size(), static_cast<std::size_t>(number)));
    etags_[static_cast<std::size_t>(number) - 1] = r.etag;
  }

  // Whether a multipart upload was started (by the first put_part()) and is not yet completed.
  bool started() const noexcept { return !upload_id_.empty(); }

  // Makes the object of the parts uploaded: it appears now, whole.
  void complete(connection& c) {
    std::string body = "<CompleteMultipartUpload>";
    for (std::size_t i = 0; i < etags_.size(); ++i)
      body +=
          "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + etags_[i] + "</ETag></Part>";
    body += "</CompleteMultipartUpload>";
    detail::s3_call(c, obj_,
                    {"POST", obj_.url() + "?uploadId=" + percent_encoded(upload_id_, false), {}, body});
    upload_id_.clear();
  }

  // Gives the parts up: no object appears. Quiet: it runs after another failure. That may be
  // a deadline's, so it has one of its own: the request deadline, stall_seconds at most.
  void abort(connection& c) noexcept {
    if (upload_id_.empty()) return;
    const retry_policy& p = obj_.where().retries;
    double most = static_cast<double>(p.stall_seconds);
    response r;
    c.perform(obj_.where(),
              deadline::after(p.request_deadline > 0 ? std::min(p.request_deadline, most) : most, "request"),
              {"DELETE", obj_.url() + "?uploadId=" + percent_encoded(upload_id_, false)}, r, {});
    upload_id_.clear();
  }

 private:
  const object& obj_;
  std::string upload_id_;
  std::vector<std::string> etags_;  // of parts 1, 2, ...
};

}  // namespace remote

TABLIO_END_NAMESPACE
