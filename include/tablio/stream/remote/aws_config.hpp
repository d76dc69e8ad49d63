// Where S3 requests go and how they are signed, from the places AWS's own tools read:
//   credentials  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; else the
//                profile's in the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, or
//                ~/.aws/credentials) or in the config file; none: anonymous (public buckets)
//   profile      AWS_PROFILE (or AWS_DEFAULT_PROFILE), else "default"; a profile named there
//                must exist in one of the files
//   region       AWS_REGION, AWS_DEFAULT_REGION, the profile's region in the config file
//                (AWS_CONFIG_FILE, or ~/.aws/config), else us-east-1
//   endpoint     AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url; else AWS
//                (an S3-compatible store: GCS's https://storage.googleapis.com, MinIO...)
//   CA bundle    AWS_CA_BUNDLE, the profile's ca_bundle
// Read when an object is opened, so that a change of environment applies to the next one.
// As AWS's tools do, half a key pair (an id without its secret, or the reverse), a profile
// named but found nowhere, and a file named by AWS_SHARED_CREDENTIALS_FILE or AWS_CONFIG_FILE
// that cannot be read are usage errors: a typo must not turn into anonymous requests, or
// requests to another endpoint.
#pragma once

#include <tablio/core/error.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace remote {

// What S3 requests need: the credentials that sign them, the region and the endpoint they go
// to, and the CA bundle that checks it.
struct aws_settings {
  std::string access_key, secret_key, session_token;  // empty access key: unsigned requests
  std::string region = "us-east-1";
  std::string endpoint;  // empty: AWS's
  std::string ca_bundle;
};

namespace detail {

inline std::string environment(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

inline std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// The keys of one section of an AWS ini file ("[name]"); nested blocks ("s3 =" then indented
// lines) are read as "s3.key". `found`: whether the file has the section.
inline std::map<std::string, std::string> ini_section(std::ifstream& in, std::string_view section,
                                                      bool& found) {
  std::map<std::string, std::string> out;
  bool inside = false;
  std::string nested;
  for (std::string line; std::getline(in, line);) {
    bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
    std::string_view l = trimmed(line);
    if (l.empty() || l[0] == '#' || l[0] == ';') continue;
    if (l.front() == '[' && l.back() == ']') {
      inside = trimmed(l.substr(1, l.size() - 2)) == section;
      found = found || inside;
      nested.clear();
      continue;
    }
    std::size_t eq = l.find('=');
    if (!inside || eq == std::string_view::npos) continue;
    std::string key(trimmed(l.substr(0, eq)));
    std::string value(trimmed(l.substr(eq + 1)));
    if (!indented) nested = value.empty() ? key : "";
    out[indented && !nested.empty() ? nested + "." + key : key] = value;
  }
  return out;
}

inline std::string first_of(std::initializer_list<std::string> values) {
  for (const std::string& v : values)
    if (!v.empty()) return v;
  return "";
}

// The section of the file that `variable` names (it must be readable), else of `fallback` (if
// it exists).
inline std::map<std::string, std::string> ini_section(const char* variable, const std::string& fallback,
                                                      std::string_view section, bool& found) {
  std::string named = environment(variable);
  std::ifstream in(named.empty() ? fallback : named);
  if (!named.empty() && !in) throw_usage_error({variable, " names '", named, "', which cannot be read"});
  return ini_section(in, section, found);
}

// Both halves of a key pair, or neither.
inline void check_key_pair(const std::string& id, const std::string& secret, std::string_view where) {
  if (id.empty() != secret.empty())
    throw_usage_error(
        {"partial credentials in ", where, ": ",
         id.empty() ? "a secret access key without its id" : "an access key id without its secret"});
}

}  // namespace detail

// The settings from the environment and AWS's files, as the header's opening comment lists
// them; usage_error for half a key pair, a profile named but found nowhere, or a file named by
// AWS_SHARED_CREDENTIALS_FILE or AWS_CONFIG_FILE that cannot be read.
inline aws_settings load_aws_settings() {
  using detail::environment;
  using detail::first_of;
  std::string home = environment("HOME");
  std::string named_profile = first_of({environment("AWS_PROFILE"), environment("AWS_DEFAULT_PROFILE")});
  std::string profile = first_of({named_profile, "default"});
  bool found = false;
  auto credentials = detail::ini_section("AWS_SHARED_CREDENTIALS_FILE",
                                         home.empty() ? "" : home + "/.aws/credentials", profile, found);
  auto config = detail::ini_section("AWS_CONFIG_FILE", home.empty() ? "" : home + "/.aws/config",
                                    profile == "default" ? "default" : "profile " + profile, found);
  if (!named_profile.empty() && !found)
    throw_usage_error({"the AWS profile '", named_profile,
                       "' (AWS_PROFILE) is in neither the credentials nor the config file"});

  aws_settings s;
  std::string key = environment("AWS_ACCESS_KEY_ID"), secret = environment("AWS_SECRET_ACCESS_KEY");
  if (!key.empty() || !secret.empty()) {
    detail::check_key_pair(key, secret, "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)");
    s.access_key = key;
    s.secret_key = secret;
    s.session_token = environment("AWS_SESSION_TOKEN");
  } else {
    bool in_credentials =
        credentials.count("aws_access_key_id") || credentials.count("aws_secret_access_key");
    auto& from = in_credentials ? credentials : config;
    s.access_key = from["aws_access_key_id"];
    s.secret_key = from["aws_secret_access_key"];
    s.session_token = from["aws_session_token"];
    detail::check_key_pair(s.access_key, s.secret_key,
                           ::tablio::detail::join({"profile '", profile, "' of the ",
                                                   in_credentials ? "credentials" : "config", " file"}));
  }
  s.region =
      first_of({environment("AWS_REGION"), environment("AWS_DEFAULT_REGION"), config["region"], s.region});
  s.endpoint = first_of({environment("AWS_ENDPOINT_URL_S3"), environment("AWS_ENDPOINT_URL"),
                         config["s3.endpoint_url"], config["endpoint_url"]});
  while (!s.endpoint.empty() && s.endpoint.back() == '/') s.endpoint.pop_back();
  s.ca_bundle = first_of({environment("AWS_CA_BUNDLE"), config["ca_bundle"]});
  return s;
}

}  // namespace remote

TABLIO_END_NAMESPACE
