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

class any_output_base {
 public:
  virtual ~any_output_base() = default;
  virtual entry_form form() const = 0;
  virtual writer& begin(std::string_view key) = 0;
  virtual void end() = 0;
  virtual void abandon(std::string_view key) = 0;
  virtual void put(std::string_view key, std::string_view bytes) = 0;
  virtual void put(std::string_view key, const array_view& array) = 0;
  virtual bool binary() const = 0;
  virtual std::string_view key_name() const = 0;
  virtual location entry_location() const = 0;
  // Why a script cannot point at the entries being written now; empty when it can.
  virtual std::string_view script_refusal() const = 0;
  virtual bool keys_any_bytes() const = 0;
  virtual std::string_view file_name(std::uint32_t file) const = 0;
  virtual void set_default_extension(std::string_view extension) = 0;
  virtual void keep_keys_beside() = 0;
  virtual void keep_keys_in(std::string_view name) = 0;
  virtual void flush() = 0;
  virtual void close() = 0;
};

class any_input_base {
 public:
  virtual ~any_input_base() = default;
  virtual bool next(entry& e) = 0;
  virtual void load(entry& e) = 0;
  virtual bool can_find() const = 0;
  virtual bool keys_any_bytes() const = 0;
  virtual void prepare_lookups() = 0;
  virtual bool find(std::string_view key, entry& e) = 0;
  virtual bool seekable() const = 0;
  virtual bool read_at(const location& at, entry& e) = 0;
  virtual std::optional<std::uint64_t> size() = 0;
  // Calls f(context, key) for each key without reading values; false if the framing cannot.
  virtual bool for_each_key(void* context, void (*f)(void*, std::string_view)) = 0;
  virtual void prefetch(std::span<const std::string> keys) = 0;
  virtual void set_default_extension(std::string_view extension) = 0;
  virtual void give_parts() = 0;
  virtual void close() = 0;
};

namespace detail {
[[noreturn]] inline void framing_cannot(const char* what) {
  throw_usage_error({"this table's framing cannot ", what});
}
}  // namespace detail

// F behind any_output_base.
template <class F>
class erased_output final : public any_output_base {
 public:
  template <class... Args>
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

// F behind any_input_base.
template <class F>
class erased_input final : public any_input_base {
 public:
  template <class... Args>
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

// An output framing of a type chosen at run time.
class any_output {
 public:
  explicit any_output(owned<any_output_base> impl) : impl_(std::move(impl)) {}
  entry_form form() const { return impl_->form(); }
  writer& begin(std::string_view key) { return impl_->begin(key); }
  void end() { impl_->end(); }
  void abandon(std::string_view key) { impl_->abandon(key); }
  void put(std::string_view key, std::string_view bytes) { impl_->put(key, bytes); }
  void put(std::string_view key, const array_view& array) { impl_->put(key, array); }
  bool binary() const { return impl_->binary(); }
  std::string_view key_name() const { return impl_->key_name(); }
  location entry_location() const { return impl_->entry_location(); }
  std::string_view script_refusal() const { return impl_->script_refusal(); }
  bool keys_any_bytes() const { return impl_->keys_any_bytes(); }
  std::string_view file_name(std::uint32_t file) const { return impl_->file_name(file); }
  void set_default_extension(std::string_view extension) { impl_->set_default_extension(extension); }
  void keep_keys_beside() { impl_->keep_keys_beside(); }
  void keep_keys_in(std::string_view name) { impl_->keep_keys_in(name); }
  void flush() { impl_->flush(); }
  void close() { impl_->close(); }

 private:
  owned<any_output_base> impl_;
};

// An input framing of a type chosen at run time.
class any_input {
 public:
  explicit any_input(owned<any_input_base> impl) : impl_(std::move(impl)) {}
  bool next(entry& e) { return impl_->next(e); }
  void load(entry& e) { impl_->load(e); }
  bool can_find() const { return impl_->can_find(); }
  bool keys_any_bytes() const { return impl_->keys_any_bytes(); }
  void prepare_lookups() { impl_->prepare_lookups(); }
  bool find(std::string_view key, entry& e) { return impl_->find(key, e); }
  bool seekable() const { return impl_->seekable(); }
  bool read_at(const location& at, entry& e) { return impl_->read_at(at, e); }
  std::optional<std::uint64_t> size() { return impl_->size(); }
  template <class F>
  bool for_each_key(F f) {
    return impl_->for_each_key(&f,
                               [](void* context, std::string_view key) { (*static_cast<F*>(context))(key); });
  }
  void prefetch(std::span<const std::string> keys) { impl_->prefetch(keys); }
  void set_default_extension(std::string_view extension) { impl_->set_default_extension(extension); }
  void give_parts() { impl_->give_parts(); }
  void close() { impl_->close(); }

 private:
  owned<any_input_base> impl_;
};

TABLIO_END_NAMESPACE
