// Where S3 requests go and how they are signed, from the places AWS's own tools read:
//   credentials  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; else the
//                profile's in the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, or
//                ~/.aws/credentials) or in the config file; none: anonymous (public buckets)
//   profile      AWS_PROFILE (or AWS_DEFAULT_PROFILE), else "default"
//   region       AWS_REGION, AWS_DEFAULT_REGION, the profile's region in the config file
//                (AWS_CONFIG_FILE, or ~/.aws/config), else us-east-1
//   endpoint     AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url; else AWS
//                (an S3-compatible store: GCS's https://storage.googleapis.com, MinIO...)
//   CA bundle    AWS_CA_BUNDLE, the profile's ca_bundle
// Read when an object is opened, so that a change of environment applies to the next one.
#pragma once

#include <tablio/core/version.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

namespace remote {

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
// lines) are read as "s3.key".
inline std::map<std::string, std::string> ini_section(const std::string& path, std::string_view section) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  bool inside = false;
  std::string nested;
  for (std::string line; std::getline(in, line);) {
    bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
    std::string_view l = trimmed(line);
    if (l.empty() || l[0] == '#' || l[0] == ';') continue;
    if (l.front() == '[' && l.back() == ']') {
      inside = trimmed(l.substr(1, l.size() - 2)) == section;
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

}  // namespace detail

inline aws_settings load_aws_settings() {
  using detail::environment;
  using detail::first_of;
  std::string home = environment("HOME");
  std::string profile = first_of({environment("AWS_PROFILE"), environment("AWS_DEFAULT_PROFILE"), "default"});
  std::string credentials_file =
      first_of({environment("AWS_SHARED_CREDENTIALS_FILE"), home.empty() ? "" : home + "/.aws/credentials"});
  std::string config_file =
      first_of({environment("AWS_CONFIG_FILE"), home.empty() ? "" : home + "/.aws/config"});
  auto credentials = detail::ini_section(credentials_file, profile);
  auto config = detail::ini_section(config_file, profile == "default" ? "default" : "profile " + profile);

  aws_settings s;
  if (std::string key = environment("AWS_ACCESS_KEY_ID"); !key.empty()) {
    s.access_key = key;
    s.secret_key = environment("AWS_SECRET_ACCESS_KEY");
    s.session_token = environment("AWS_SESSION_TOKEN");
  } else {
    auto& from = credentials.count("aws_access_key_id") ? credentials : config;
    s.access_key = from["aws_access_key_id"];
    s.secret_key = from["aws_secret_access_key"];
    s.session_token = from["aws_session_token"];
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
