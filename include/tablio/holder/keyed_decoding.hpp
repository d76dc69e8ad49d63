// For a holder whose reading draws on its entry's key (an image's random crop and flip): a table
// calls its at_key(key) before the value is read, and where the record itself keeps the key (a
// key=NAME feature) at_key("") before and at_key(key) once the record gave it. keyed_decoding
// runs the part of reading that needs the key when the key is there:
//
//   void at_key(std::string_view key) { keyed_.at_key(key, decode_images); }
//   void decode_record(std::string_view bytes, const std::string& name) {
//     parse(bytes, name);
//     keyed_.read(name, decode_images);  // now, or at at_key(key)
//   }
#pragma once

#include <tablio/core/config.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// The entry's key as a key-aware holder is told it, and the reading that waits for it.
class keyed_decoding {
 public:
  // Takes the entry's key; runs keyed(source) for a value read before, which waited for it.
  template <class F>
  void at_key(std::string_view key, F&& keyed) {
    key_.assign(key);
    later_ = key.empty();
    const bool run = waiting_ && !key.empty();
    waiting_ = false;
    if (run) keyed(source_);
  }
  // The value read from `source`: runs keyed(source) now, or at at_key(key) where the key comes
  // after the value.
  template <class F>
  void read(const std::string& source, F&& keyed) {
    waiting_ = later_;
    if (waiting_)
      source_ = source;
    else
      keyed(source);
  }
  // The entry's key (empty where it is not known yet, or no table gave one).
  const std::string& key() const noexcept { return key_; }

 private:
  std::string key_, source_;
  bool later_ = false;    // the key comes after the value
  bool waiting_ = false;  // a value read waits for it
};

TABLIO_END_NAMESPACE
