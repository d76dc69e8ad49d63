// Framings behind one interface, for tables whose framing is chosen at run time (from a
// specifier): any_output and any_input model the Framing concept with every capability, and
// forward to a framing of any type, which says at run time what it can do (the form of its
// entries, lookups, locations). What does not depend on the holder is compiled here once,
// not once per holder.
#pragma once

#include <tablio/core/owned.hpp>
#include <tablio/framing/concepts.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// The run-time interface of an output framing, behind any_output: the Framing concept's output
// side with every capability as a virtual function. erased_output<F> implements it for a framing F.
class any_output_base {
 public:
  virtual ~any_output_base() = default;
  // Which form its entries take: object, record or array.
  virtual entry_form form() const = 0;
  // Begins an object entry for key; returns the writer its bytes go to until end().
  virtual writer& begin(std::string_view key) = 0;
  // Ends the object entry begun last.
  virtual void end() = 0;
  // Takes back the object entry begun for key, which failed before it was whole, where it can.
  virtual void abandon(std::string_view key) = 0;
  // Writes a record entry: key and its bytes, whole.
  virtual void put(std::string_view key, std::string_view bytes) = 0;
  // Writes an array entry: key and a typed array.
  virtual void put(std::string_view key, const array_view& array) = 0;
  // False when objects are written in text mode.
  virtual bool binary() const = 0;
  // The bytes feature its records keep their key in (key=NAME); empty when none.
  virtual std::string_view key_name() const = 0;
  // Where the entry just begun or put is: a file number (see file_name()) and an offset.
  virtual location entry_location() const = 0;
  // Why a script cannot point at the entries being written now; empty when it can.
  virtual std::string_view script_refusal() const = 0;
  // Whether its keys may be any bytes (as an LMDB database's) rather than Kaldi tokens.
  virtual bool keys_any_bytes() const = 0;
  // The name of file number `file`, as entry_location() numbers them.
  virtual std::string_view file_name(std::uint32_t file) const = 0;
  // The holder's natural file extension, given at open, for a framing that names files itself.
  virtual void set_default_extension(std::string_view extension) = 0;
  // The keys are kept beside what it writes (in a script), so it need not refuse keys it cannot store.
  virtual void keep_keys_beside() = 0;
  // Keep keys in the bytes feature `name` (as key=NAME does), for records that keep none unless told.
  virtual void keep_keys_in(std::string_view name) = 0;
  // Pushes what was written to the OS.
  virtual void flush() = 0;
  // Flushes and closes; throws for anything lost.
  virtual void close() = 0;
};

// The run-time interface of an input framing, behind any_input: the Framing concept's input side
// with every capability as a virtual function. erased_input<F> implements it for a framing F.
class any_input_base {
 public:
  virtual ~any_input_base() = default;
  // Fills in the next entry; false at the end.
  virtual bool next(entry& e) = 0;
  // Fills in an entry that next() or find() left pending.
  virtual void load(entry& e) = 0;
  // Whether find() works: the framing looks keys up.
  virtual bool can_find() const = 0;
  // Whether its keys may be any bytes (as an LMDB database's) rather than Kaldi tokens.
  virtual bool keys_any_bytes() const = 0;
  // Readies what find() needs; a random-access table calls it when it opens.
  virtual void prepare_lookups() = 0;
  // Fills in the entry of key; false when the table has none.
  virtual bool find(std::string_view key, entry& e) = 0;
  // Whether read_at() works for the entry next() gave last.
  virtual bool seekable() const = 0;
  // Reads the entry at a location next() reported.
  virtual bool read_at(const location& at, entry& e) = 0;
  // The number of entries; nullopt when the framing cannot count them.
  virtual std::optional<std::uint64_t> size() = 0;
  // Calls f(context, key) for each key without reading values; false if the framing cannot.
  virtual bool for_each_key(void* context, void (*f)(void*, std::string_view)) = 0;
  // Keys about to be found: the framing may fetch what they read at once (a script into remote objects).
  virtual void prefetch(std::span<const std::string> keys) = 0;
  // The holder's natural file extension, given at open, for a framing that names files itself.
  virtual void set_default_extension(std::string_view extension) = 0;
  // Lets next() give records as parts (entry::parts), for a holder that takes them.
  virtual void give_parts() = 0;
  // Releases the input; throws when an input command failed.
  virtual void close() = 0;
};

namespace detail {
[[noreturn]] inline void framing_cannot(const char* what) {
  throw_usage_error({"this table's framing cannot ", what});
}
}  // namespace detail

// F behind any_output_base. A capability F lacks takes its default (binary, no key name, no
// abandon or flush), or throws usage_error where there is none (begin() of a record framing).
template <class F>
class erased_output final : public any_output_base {
 public:
  template <class... Args>
  // Makes the F, from args.
  explicit erased_output(Args&&... args) : f_(std::forward<Args>(args)...) {}

  entry_form form() const override { return detail::output_form(f_); }
  writer& begin(std::string_view key) override {
    if constexpr (object_output<F>)
      return f_.begin(key);
    else
      detail::framing_cannot("take objects");
  }
  void end() override {
    if constexpr (object_output<F>) f_.end();
  }
  void abandon(std::string_view key) override { detail::abandon_entry(f_, key); }
  void put(std::string_view key, std::string_view bytes) override {
    if constexpr (record_output<F>)
      f_.put(key, bytes);
    else
      detail::framing_cannot("take records");
  }
  void put(std::string_view key, const array_view& array) override {
    if constexpr (array_output<F>)
      f_.put(key, array);
    else
      detail::framing_cannot("take arrays");
  }
  bool binary() const override { return detail::writes_binary(f_); }
  std::string_view key_name() const override { return detail::output_key_name(f_); }
  std::string_view script_refusal() const override {
    if constexpr (!positional_output<F>)
      return "a script cannot point into what this format writes";
    else if constexpr (requires { f_.script_refusal(); })
      return f_.script_refusal();
    else
      return {};
  }
  bool keys_any_bytes() const override { return detail::keys_any_bytes(f_); }
  location entry_location() const override {
    if constexpr (positional_output<F>)
      return f_.entry_location();
    else
      detail::framing_cannot("locate its entries");
  }
  std::string_view file_name(std::uint32_t file) const override {
    if constexpr (positional_output<F>)
      return f_.file_name(file);
    else
      detail::framing_cannot("locate its entries");
  }
  void set_default_extension(std::string_view extension) override {
    detail::suggest_extension(f_, extension);
  }
  void keep_keys_beside() override { detail::keep_keys_beside(f_); }
  void keep_keys_in(std::string_view name) override { detail::keep_keys_in(f_, name); }
  void flush() override {
    if constexpr (requires { f_.flush(); }) f_.flush();
  }
  void close() override { f_.close(); }

 private:
  F f_;
};

// F behind any_input_base. A capability F lacks takes its default (nothing to load or prepare,
// no size), or throws usage_error where there is none (find() of a framing without lookups).
template <class F>
class erased_input final : public any_input_base {
 public:
  template <class... Args>
  // Makes the F, from args.
  explicit erased_input(Args&&... args) : f_(std::forward<Args>(args)...) {}

  bool next(entry& e) override { return detail::next_entry(f_, e); }
  void load(entry& e) override {
    if constexpr (lazy_input<F>) f_.load(e);
  }
  bool can_find() const override { return detail::can_find(f_); }
  bool keys_any_bytes() const override { return detail::keys_any_bytes(f_); }
  void prepare_lookups() override {
    if constexpr (requires { f_.prepare_lookups(); }) f_.prepare_lookups();
  }
  bool find(std::string_view key, entry& e) override {
    if constexpr (keyed_input<F>)
      return detail::find_entry(f_, key, e);
    else
      detail::framing_cannot("look keys up");
  }
  bool seekable() const override { return detail::can_read_at(f_); }
  bool read_at(const location& at, entry& e) override {
    if constexpr (positional_input<F>)
      return f_.read_at(at, e);
    else
      detail::framing_cannot("read at a location");
  }
  std::optional<std::uint64_t> size() override {
    if constexpr (counted_input<F>)
      return f_.size();
    else
      return std::nullopt;
  }
  bool for_each_key(void* context, void (*f)(void*, std::string_view)) override {
    if constexpr (requires { f_.for_each_key([](std::string_view) {}); })
      return f_.for_each_key([&](std::string_view key) { f(context, key); });
    else
      return false;
  }
  void prefetch(std::span<const std::string> keys) override {
    if constexpr (requires { f_.prefetch(keys); }) f_.prefetch(keys);
  }
  void set_default_extension(std::string_view extension) override {
    detail::suggest_extension(f_, extension);
  }
  void give_parts() override { detail::ask_for_parts(f_); }
  void close() override { f_.close(); }

 private:
  F f_;
};

// An output framing of a type chosen at run time. It models the Framing concept's output side
// with every capability and forwards to an any_output_base (erased_output<F>), which throws
// usage_error for a capability the framing lacks.
class any_output {
 public:
  // Takes the framing.
  explicit any_output(owned<any_output_base> impl) : impl_(std::move(impl)) {}
  // The Framing concept: which form the entries take (object, record or array).
  entry_form form() const { return impl_->form(); }
  // The Framing concept: begins an object entry for key and returns the writer its bytes go to.
  writer& begin(std::string_view key) { return impl_->begin(key); }
  // The Framing concept: ends the object entry begun last.
  void end() { impl_->end(); }
  // Takes back the object entry begun for key, which failed before it was whole, where it can.
  void abandon(std::string_view key) { impl_->abandon(key); }
  // The Framing concept: writes a record entry, key and its bytes whole, or an array entry.
  void put(std::string_view key, std::string_view bytes) { impl_->put(key, bytes); }
  void put(std::string_view key, const array_view& array) { impl_->put(key, array); }
  // The Framing concept: false when objects are written in text mode.
  bool binary() const { return impl_->binary(); }
  // The Framing concept: the bytes feature records keep their key in (key=NAME); empty when none.
  std::string_view key_name() const { return impl_->key_name(); }
  // The Framing concept: where the entry just begun or put is, for a script to point at.
  location entry_location() const { return impl_->entry_location(); }
  // Why a script cannot point at the entries being written now; empty when it can.
  std::string_view script_refusal() const { return impl_->script_refusal(); }
  // Whether keys may be any bytes (as an LMDB database's) rather than Kaldi tokens.
  bool keys_any_bytes() const { return impl_->keys_any_bytes(); }
  // The Framing concept: the name of file number `file`, as entry_location() numbers them.
  std::string_view file_name(std::uint32_t file) const { return impl_->file_name(file); }
  // The Framing concept: the holder's natural file extension, given at open.
  void set_default_extension(std::string_view extension) { impl_->set_default_extension(extension); }
  // The keys are kept beside what it writes (in a script), so it need not refuse keys it cannot store.
  void keep_keys_beside() { impl_->keep_keys_beside(); }
  // Keep keys in the bytes feature `name` (as key=NAME does), for records that keep none unless told.
  void keep_keys_in(std::string_view name) { impl_->keep_keys_in(name); }
  // The Framing concept: pushes what was written to the OS.
  void flush() { impl_->flush(); }
  // The Framing concept: flushes and closes; throws for anything lost.
  void close() { impl_->close(); }

 private:
  owned<any_output_base> impl_;
};

// An input framing of a type chosen at run time. It models the Framing concept's input side
// with every capability and forwards to an any_input_base (erased_input<F>), which throws
// usage_error for a capability the framing lacks.
class any_input {
 public:
  // Takes the framing.
  explicit any_input(owned<any_input_base> impl) : impl_(std::move(impl)) {}
  // The Framing concept: fills in the next entry; false at the end.
  bool next(entry& e) { return impl_->next(e); }
  // The Framing concept: fills in an entry that next() or find() left pending.
  void load(entry& e) { impl_->load(e); }
  // Whether find() works: the framing looks keys up.
  bool can_find() const { return impl_->can_find(); }
  // Whether keys may be any bytes (as an LMDB database's) rather than Kaldi tokens.
  bool keys_any_bytes() const { return impl_->keys_any_bytes(); }
  // The Framing concept: readies what find() needs, when a random-access table opens.
  void prepare_lookups() { impl_->prepare_lookups(); }
  // The Framing concept: fills in the entry of key; false when the table has none.
  bool find(std::string_view key, entry& e) { return impl_->find(key, e); }
  // The Framing concept: whether read_at() works for the entry next() gave last.
  bool seekable() const { return impl_->seekable(); }
  // The Framing concept: reads the entry at a location next() reported.
  bool read_at(const location& at, entry& e) { return impl_->read_at(at, e); }
  // The Framing concept: the number of entries; nullopt when the framing cannot count them.
  std::optional<std::uint64_t> size() { return impl_->size(); }
  // Calls f(key) for each key without reading values; false (and no call) if the framing cannot.
  template <class F>
  bool for_each_key(F f) {
    return impl_->for_each_key(&f,
                               [](void* context, std::string_view key) { (*static_cast<F*>(context))(key); });
  }
  // The Framing concept: keys about to be found, whose reads the framing may fetch at once.
  void prefetch(std::span<const std::string> keys) { impl_->prefetch(keys); }
  // The Framing concept: the holder's natural file extension, given at open.
  void set_default_extension(std::string_view extension) { impl_->set_default_extension(extension); }
  // The Framing concept: lets next() give records as parts (entry::parts), for holders that take them.
  void give_parts() { impl_->give_parts(); }
  // The Framing concept: releases the input; throws when an input command failed.
  void close() { impl_->close(); }

 private:
  owned<any_input_base> impl_;
};

TABLIO_END_NAMESPACE
