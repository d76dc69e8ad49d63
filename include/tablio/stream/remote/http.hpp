// HTTP requests through libcurl, as every remote object makes them: only http and https,
// redirects bounded and never to another scheme, TLS verified (with the CA bundle the
// environment or the options name), S3 requests signed with SigV4 by libcurl itself, stalls
// detected, and failures that may pass (a reset or timed-out connection, a truncated body,
// HTTP 429 and 5xx) retried after a bounded, growing delay that honours Retry-After, all
// within the deadlines of the request and of its stream. Errors are io_errors naming the
// object (never a credential or a query string), the byte offset and the HTTP status.
#pragma once

#include <tablio/core/error.hpp>
#include <tablio/core/sha256.hpp>
#include <tablio/stream/remote/url.hpp>

#include <curl/curl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

TABLIO_BEGIN_NAMESPACE

namespace remote {

// How hard to try: attempts in a row with no progress (TABLIO_HTTP_RETRIES), the delays between
// them, how long a connection may move nothing, or too little, before it counts as failed
// (TABLIO_HTTP_TIMEOUT, seconds), and the deadlines of a request and of a stream (seconds, 0:
// none; TABLIO_HTTP_REQUEST_DEADLINE, TABLIO_HTTP_STREAM_DEADLINE, or remote_options).
//
// The defaults must never cut a large object read at a real speed, yet leave no server a way
// to hold a reader for good by sending slowly. A request of bounded size (a HEAD, a range, a
// part of an upload, a listing page) must end within 10 minutes, retries and waits included:
// far more than 8 MiB take on any link in use. The GET that streams an object in order may
// rightly take hours: it has no deadline by default (a service reading untrusted servers sets
// stream_deadline), and what bounds it is speed. While a body moves, each stall_seconds must
// move `slowest` bytes a second (1 KiB/s: far below any real link, far above a drip), and an
// attempt that fails starts the count of attempts again only if the object moved at that speed
// since the count last started, waits included. A server that drips bytes, or asks to wait
// with Retry-After each time, runs the attempts out.
struct retry_policy {
  int attempts = 8;
  double first_delay = 0.1, max_delay = 5, max_retry_after = 60;
  long stall_seconds = 30, connect_seconds = 15;
  double slowest = 1024;  // bytes a second
  double request_deadline = 600, stream_deadline = 0;

  static retry_policy from_environment() {
    retry_policy p;
    if (const char* v = std::getenv("TABLIO_HTTP_RETRIES"); v && std::atoi(v) > 0) p.attempts = std::atoi(v);
    if (const char* v = std::getenv("TABLIO_HTTP_TIMEOUT"); v && std::atol(v) > 0)
      p.stall_seconds = p.connect_seconds = std::atol(v);
    seconds_from("TABLIO_HTTP_REQUEST_DEADLINE", p.request_deadline);
    seconds_from("TABLIO_HTTP_STREAM_DEADLINE", p.stream_deadline);
    return p;
  }
  // The delay before attempt `next` (2, 3, ...), at least what the server asked for.
  double delay(int next, double retry_after) const {
    double d = first_delay;
    for (int i = 2; i < next && d < max_delay; ++i) d *= 2;
    return std::min(std::max(std::min(d, max_delay), retry_after), max_retry_after);
  }

 private:
  // A variable's seconds, when it holds a number of them (0: none).
  static void seconds_from(const char* variable, double& seconds) {
    const char* v = std::getenv(variable);
    if (!v || !*v) return;
    char* end = nullptr;
    double s = std::strtod(v, &end);
    if (*end == '\0' && s >= 0) seconds = s;
  }
};

// When a request, or everything a stream does, must be done by; messages name it and its length.
struct deadline {
  using clock = std::chrono::steady_clock;
  clock::time_point at = clock::time_point::max();  // none
  double seconds = 0;
  const char* what = "";  // "request", "stream"

  // `seconds` from now (none for 0).
  static deadline after(double seconds, const char* what) {
    deadline d;
    if (seconds > 0)
      d = {clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds)),
           seconds, what};
    return d;
  }
  bool passed() const { return at != clock::time_point::max() && clock::now() >= at; }
  // Whether waiting `wait` seconds would end past it.
  bool passes_during(double wait) const {
    return at != clock::time_point::max() && std::chrono::duration<double>(at - clock::now()).count() <= wait;
  }
  deadline sooner(const deadline& other) const { return other.at < at ? other : *this; }
  // For libcurl's CURLOPT_TIMEOUT_MS: 0 for none, else at least 1 (0 would be none).
  long milliseconds_left() const {
    if (at == clock::time_point::max()) return 0;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(at - clock::now()).count();
    return static_cast<long>(std::max<decltype(left)>(left, 1));
  }
};

// What requests to one object share: how messages name it, how requests are signed, which
// CA to trust, and the one scheme redirects may go to.
struct endpoint {
  std::string name;  // as messages show it (redacted)
  std::string scheme;
  bool sign = false;  // SigV4, for S3
  std::string region, access_key, secret_key, session_token;
  std::string ca_file;
  retry_policy retries = retry_policy::from_environment();
};

struct request {
  request(std::string m, std::string u, std::vector<std::string> h = {}, std::string_view b = {})
      : method(std::move(m)), url(std::move(u)), headers(std::move(h)), body(b) {}
  std::string method;
  std::string url;
  std::vector<std::string> headers;
  std::string_view body;
};

struct response {
  long status = 0;
  std::string etag, last_modified, content_range, content_type;
  std::optional<std::uint64_t> content_length;
  double retry_after = 0;
  std::string body;  // what the request asked to keep, or an error's first bytes
};

// A body's bytes as they arrive; false stops the transfer.
using data_sink = std::function<bool(const char*, std::size_t)>;

namespace detail {

inline void init_curl() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

inline bool retryable_status(long status) { return status == 429 || (status >= 500 && status <= 599); }

inline bool retryable_transport(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_WEIRD_SERVER_REPLY:
      return true;
    default:
      return false;
  }
}

inline const char* status_text(long status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 412:
      return "Precondition Failed";
    case 416:
      return "Range Not Satisfiable";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

// The text of an XML element, for S3's error codes and listings' fields.
inline std::string_view xml_text(std::string_view xml, std::string_view element, std::size_t from = 0) {
  std::string open = "<" + std::string(element) + ">", close = "</" + std::string(element) + ">";
  std::size_t a = xml.find(open, from);
  if (a == std::string_view::npos) return {};
  a += open.size();
  std::size_t b = xml.find(close, a);
  return b == std::string_view::npos ? std::string_view{} : xml.substr(a, b - a);
}

// One transfer's state, which libcurl's callbacks fill in.
struct transfer {
  using clock = deadline::clock;
  static constexpr std::size_t kept_body = std::size_t{1} << 20;  // of an error's text, or a small body

  response* r;
  const data_sink* sink;
  std::uint64_t delivered = 0;
  std::uint64_t limit = UINT64_MAX;  // more body bytes than this: the server sent more than asked
  bool stopped = false, too_long = false, cut = false, stalled = false;
  // The stall watch: `need` bytes must move within `window` from `since`, of the server's time:
  // the time the sink takes is the reader's pace, left out (a reader that pauses does not stall).
  clock::duration window{}, in_sink{}, in_sink_then{};
  clock::time_point since{};
  curl_off_t need = 1, body_need = 1, moved_then = 0;

  static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* self) {
    auto* t = static_cast<transfer*>(self);
    std::string_view line(data, size * n);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.starts_with("HTTP/")) {  // a new response (after a redirect or 100-continue)
      *t->r = response{};
      if (std::size_t sp = line.find(' '); sp != std::string_view::npos)
        t->r->status = std::strtol(std::string(line.substr(sp + 1, 3)).c_str(), nullptr, 10);
      return size * n;
    }
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return size * n;
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (name == "etag")
      t->r->etag = value;
    else if (name == "last-modified")
      t->r->last_modified = value;
    else if (name == "content-range")
      t->r->content_range = value;
    else if (name == "content-type")
      t->r->content_type = value;
    else if (name == "content-length")
      t->r->content_length = std::strtoull(std::string(value).c_str(), nullptr, 10);
    else if (name == "retry-after")
      t->r->retry_after = std::atof(std::string(value).c_str());
    return size * n;
  }

  static std::size_t on_data(char* data, std::size_t size, std::size_t n, void* self) {
    auto* t = static_cast<transfer*>(self);
    std::size_t bytes = size * n;
    bool error = t->r->status < 200 || t->r->status >= 300;
    if (error || !*t->sink) {  // an error's text, or a small body
      if (t->r->body.size() < kept_body) {
        t->r->body.append(data, std::min(bytes, kept_body));
        return bytes;
      }
      t->cut = error;  // an error's text is not read on past that (a server could send it forever)
      return error ? 0 : bytes;
    }
    if (t->delivered + bytes > t->limit) {
      t->too_long = true;
      return 0;
    }
    t->delivered += bytes;
    clock::time_point start = clock::now();
    bool more = (*t->sink)(data, bytes);
    t->in_sink += clock::now() - start;
    if (!more) {
      t->stopped = true;
      return 0;
    }
    return bytes;
  }

  // Stops the transfer (returns 1) when `need` bytes took longer than the window: while a body
  // moves (sent, or read into a sink), the window's worth at the slowest speed; else one byte,
  // as while waiting for an answer (S3 keeps a long CompleteMultipartUpload alive with a space
  // now and then). The window starts again when they have moved, or the need changes.
  static int on_progress(void* self, curl_off_t, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    auto* t = static_cast<transfer*>(self);
    clock::time_point now = clock::now();
    curl_off_t moved = dlnow + ulnow;
    curl_off_t need = ulnow < ultotal || (dlnow > 0 && *t->sink) ? t->body_need : 1;
    if (need != t->need || moved - t->moved_then >= t->need) {
      t->need = need;
      t->since = now;
      t->in_sink_then = t->in_sink;
      t->moved_then = moved;
      return 0;
    }
    t->stalled = now - t->since - (t->in_sink - t->in_sink_then) >= t->window;
    return t->stalled ? 1 : 0;
  }
};

}  // namespace detail

// A libcurl handle, reused request after request so that its connections stay alive.
class connection {
 public:
  connection() {
    detail::init_curl();
    curl_ = curl_easy_init();
    if (!curl_) throw_io_error("libcurl", 0, {"cannot start"});
  }
  ~connection() {
    curl_slist_free_all(headers_);
    if (curl_) curl_easy_cleanup(curl_);
  }
  connection(connection&& o) noexcept
      : curl_(std::exchange(o.curl_, nullptr)), headers_(std::exchange(o.headers_, nullptr)) {}
  connection& operator=(connection&&) = delete;
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  // What one attempt gave: libcurl's result, whether the sink stopped it, and how long the
  // sink took (the reader's pace, not the server's).
  struct result {
    CURLcode code = CURLE_OK;
    bool stopped = false, too_long = false;
    std::uint64_t delivered = 0;
    double sink_seconds = 0;
    char message[CURL_ERROR_SIZE] = {};
  };

  // Sets the request up on this handle, for perform() or for a multi handle: body bytes of
  // a 2xx response go to sink (or into r.body when sink is empty), at most `limit` of them;
  // the transfer ends at the deadline `d` (which has not passed), and when it stalls.
  void prepare(const endpoint& e, const deadline& d, const request& q, response& r, const data_sink& sink,
               std::uint64_t limit) {
    curl_easy_reset(curl_);
    t_ = detail::transfer{&r, &sink};
    t_.limit = limit;
    t_.window = std::chrono::seconds(e.retries.stall_seconds);
    t_.body_need = std::max<curl_off_t>(
        1, static_cast<curl_off_t>(e.retries.slowest * static_cast<double>(e.retries.stall_seconds)));
    t_.since = detail::transfer::clock::now();
    r = response{};
    error_[0] = '\0';
    curl_easy_setopt(curl_, CURLOPT_URL, q.url.c_str());
    curl_easy_setopt(curl_, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl_, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl_, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(curl_, CURLOPT_REDIR_PROTOCOLS_STR, e.scheme.c_str());  // never http from https
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, error_);
    curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT, e.retries.connect_seconds);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, d.milliseconds_left());
    // Stalls are watched here rather than by libcurl's low-speed limit, which would count the
    // time a reader takes between reads against the server.
    curl_easy_setopt(curl_, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl_, CURLOPT_XFERINFOFUNCTION, &detail::transfer::on_progress);
    curl_easy_setopt(curl_, CURLOPT_XFERINFODATA, &t_);
    curl_easy_setopt(curl_, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(curl_, CURLOPT_ACCEPT_ENCODING, nullptr);  // bytes as stored: offsets are offsets
    if (streaming_) curl_easy_setopt(curl_, CURLOPT_BUFFERSIZE, 512L << 10);
    if (!e.ca_file.empty()) curl_easy_setopt(curl_, CURLOPT_CAINFO, e.ca_file.c_str());
    curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, &detail::transfer::on_header);
    curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &t_);
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, &detail::transfer::on_data);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &t_);
    if (q.method == "HEAD") {
      curl_easy_setopt(curl_, CURLOPT_NOBODY, 1L);
    } else if (q.method != "GET") {
      curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, q.method.c_str());
      curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, q.body.data());
      curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(q.body.size()));
    }
    curl_slist_free_all(headers_);
    headers_ = nullptr;
    for (const std::string& h : q.headers) headers_ = curl_slist_append(headers_, h.c_str());
    // A body is bytes (libcurl would say form data); sent, so that a signature of it is right.
    if (q.method != "GET" && q.method != "HEAD")
      headers_ = curl_slist_append(headers_, "Content-Type: application/octet-stream");
    if (e.sign) {
      // libcurl signs with SigV4; S3 wants the payload's hash signed and sent as well.
      payload_header_ = "x-amz-content-sha256: " + sha256::of(q.body);
      headers_ = curl_slist_append(headers_, payload_header_.c_str());
      if (!e.session_token.empty()) {
        token_header_ = "x-amz-security-token: " + e.session_token;
        headers_ = curl_slist_append(headers_, token_header_.c_str());
      }
      signing_ = "aws:amz:" + e.region + ":s3";
      credentials_ = e.access_key + ":" + e.secret_key;
      curl_easy_setopt(curl_, CURLOPT_AWS_SIGV4, signing_.c_str());
      curl_easy_setopt(curl_, CURLOPT_USERPWD, credentials_.c_str());
    }
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers_);
  }

  // The result of the transfer prepared last, once it has ended with `code`.
  result finish(CURLcode code) const {
    result out;
    out.code = code;
    out.stopped = t_.stopped;
    out.too_long = t_.too_long;
    out.delivered = t_.delivered;
    out.sink_seconds = std::chrono::duration<double>(t_.in_sink).count();
    std::copy(std::begin(error_), std::end(error_), out.message);
    if (t_.cut) out.code = CURLE_OK;  // the status says what failed
    if (t_.stalled) {
      out.code = CURLE_OPERATION_TIMEDOUT;
      long window = static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(t_.window).count());
      if (t_.need == 1)
        std::snprintf(out.message, sizeof out.message, "nothing came for %ld s", window);
      else
        std::snprintf(out.message, sizeof out.message, "less than %lld bytes moved in %ld s",
                      static_cast<long long>(t_.need), window);
    }
    if (code == CURLE_OK && t_.r->retry_after == 0) {
      curl_off_t after = 0;
      if (curl_easy_getinfo(curl_, CURLINFO_RETRY_AFTER, &after) == CURLE_OK)
        t_.r->retry_after = double(after);
    }
    return out;
  }

  result perform(const endpoint& e, const deadline& d, const request& q, response& r, const data_sink& sink,
                 std::uint64_t limit = UINT64_MAX) {
    prepare(e, d, q, r, sink, limit);
    return finish(curl_easy_perform(curl_));
  }

  CURL* handle() noexcept { return curl_; }
  // For long transfers (streaming an object): a larger receive buffer, fewer callbacks.
  void stream() noexcept { streaming_ = true; }

 private:
  CURL* curl_ = nullptr;
  curl_slist* headers_ = nullptr;
  detail::transfer t_{nullptr, nullptr};
  char error_[CURL_ERROR_SIZE] = {};
  std::string payload_header_, token_header_, signing_, credentials_;
  bool streaming_ = false;
};

// Throws the io_error of a request that failed for good, at byte `offset` of the object; or,
// with `deadline_passes` (why the failure is not tried again), that a deadline ended it.
[[noreturn]] TABLIO_COLD inline void fail(const endpoint& e, std::uint64_t offset, const response& r,
                                          const connection::result& got, int attempts,
                                          std::string_view deadline_passes = {}) {
  decimal at(offset), tries(attempts);
  bool retried = attempts > 1, late = !deadline_passes.empty();
  std::string_view several = retried ? " after " : "", count = retried ? std::string_view(tries) : "",
                   times = retried ? " attempts" : "", and_ = late ? ", and " : "", comma = late ? "," : "";
  if (got.too_long) throw_io_error(e.name, 0, {"the server sent more than asked for at byte ", at, " of"});
  if (got.code != CURLE_OK) {
    std::string_view why = got.message[0] ? std::string_view(got.message) : curl_easy_strerror(got.code);
    throw_io_error(e.name, late ? ETIMEDOUT : 0,
                   {"request failed (", why, ")", several, count, times, and_, deadline_passes, comma,
                    " at byte ", at, " of"});
  }
  decimal status(r.status);
  std::string_view code = detail::xml_text(r.body, "Code");  // S3's error code: NoSuchKey...
  const char* text = detail::status_text(r.status);
  // As a file's would be: missing (Python's FileNotFoundError), or not to be read (PermissionError).
  int errnum = late ? ETIMEDOUT : r.status == 404 ? ENOENT : r.status == 401 || r.status == 403 ? EACCES : 0;
  throw_io_error(e.name, errnum,
                 {"HTTP ", status, *text ? " " : "", text, code.empty() ? "" : " (", code,
                  code.empty() ? "" : ")", r.status == 412 ? ": the object changed since it was opened" : "",
                  several, count, times, and_, deadline_passes, comma, " at byte ", at, " of"});
}

namespace detail {

// "the request deadline of 2.5 s", as messages name a deadline.
TABLIO_COLD inline std::string named(const deadline& d) {
  char text[64];
  std::snprintf(text, sizeof text, "the %s deadline of %g s", d.what, d.seconds);
  return text;
}

}  // namespace detail

// Throws the io_error of a request whose deadline `d` has passed, at byte `offset`.
[[noreturn]] TABLIO_COLD inline void fail_at(const deadline& d, const endpoint& e, std::uint64_t offset,
                                             int attempts) {
  decimal at(offset), tries(attempts);
  bool retried = attempts > 1;
  throw_io_error(
      e.name, ETIMEDOUT,
      {detail::named(d), " passed", retried ? " after " : "", retried ? std::string_view(tries) : "",
       retried ? " attempts" : "", " at byte ", at, " of"});
}

// Throws the io_error of a failed attempt (`r`, `got`) that waiting `wait` seconds to try again
// (as the server asked, with `asked`) would take past the deadline `d`.
[[noreturn]] TABLIO_COLD inline void fail_before(const deadline& d, double wait, bool asked,
                                                 const endpoint& e, std::uint64_t offset, const response& r,
                                                 const connection::result& got, int attempts) {
  char text[96];
  std::snprintf(text, sizeof text, "the %g s wait %s would pass ", wait,
                asked ? "the server asks for (Retry-After)" : "before the next attempt");
  fail(e, offset, r, got, attempts, text + detail::named(d));
}

// How a caller waits `seconds` between attempts: false when it gave the request up meanwhile (a
// reader closed). None: the thread sleeps.
using pause_fn = std::function<bool(double)>;

// Runs attempt(), one transfer that returns what it got, until it succeeds (a 2xx status),
// stops on purpose, or fails for good; between retryable failures it waits, with pause(). An
// attempt resumes where the last one stopped, and keeps `at` (what errors name) the offset it
// is at. The attempts counted are those in a row that moved too little: the count (and the
// delays) starts again once the bytes since it last did so came at `slowest` bytes a second,
// waits included and the sink's own time not. So faults spread over a long stream never add
// up, while a server that drips bytes, or asks to wait, runs the attempts out. Nothing goes on
// past the deadline `d`: an attempt ends there, and a wait that would pass it fails at once.
template <class Attempt>
connection::result with_retries(const endpoint& e, const deadline& d, response& r, const std::uint64_t& at,
                                Attempt attempt, const pause_fn& pause = {}) {
  using clock = deadline::clock;
  const retry_policy& policy = e.retries;
  clock::time_point since = clock::now();
  std::uint64_t from = at;
  double sink_seconds = 0;
  for (int number = 1;; ++number) {
    if (d.passed()) fail_at(d, e, at, number - 1);
    connection::result got = attempt();
    if (got.stopped) return got;
    bool ok = got.code == CURLE_OK && r.status >= 200 && r.status < 300;
    if (ok) return got;
    clock::time_point now = clock::now();
    sink_seconds += got.sink_seconds;
    double server_seconds = std::chrono::duration<double>(now - since).count() - sink_seconds;
    if (at > from && static_cast<double>(at - from) >= policy.slowest * server_seconds) {
      number = 1;
      since = now;
      from = at;
      sink_seconds = 0;
    }
    bool again = !got.too_long && (got.code == CURLE_OK ? detail::retryable_status(r.status)
                                                        : detail::retryable_transport(got.code));
    if (again && d.passes_during(0.05)) fail_at(d, e, at, number);  // libcurl may end it a little early
    if (!again || number >= policy.attempts) fail(e, at, r, got, number);
    double asked = got.code == CURLE_OK ? r.retry_after : 0;
    double wait = policy.delay(number + 1, asked);
    if (d.passes_during(wait)) fail_before(d, wait, asked > 0, e, at, r, got, number);
    if (!pause) {
      std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    } else if (!pause(wait)) {
      got.stopped = true;
      return got;
    }
  }
}

}  // namespace remote

TABLIO_END_NAMESPACE
