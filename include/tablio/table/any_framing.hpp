// any_framing: the framing a specifier chooses at run time, and the default framing of the
// table classes, so that
//
//   table_writer<holder<matrix<float>>> out("ark,scp:feats.ark,feats.scp");
//   sequential_table_reader<datum_holder> in("lmdb,shard=1/4:train_lmdb");
//
// open any format a specifier names (docs/specifiers.md). A table of one holder compiles the
// code that depends on the holder once, whatever the formats; the formats themselves are
// compiled once behind one interface (table/erased_framing.hpp).
#pragma once

#include <tablio/table/erased_framing.hpp>
#include <tablio/table/formats.hpp>
#include <tablio/table/specifier.hpp>

#include <string>
#include <string_view>

TABLIO_BEGIN_NAMESPACE

// The framing family that a specifier chooses at run time: `output` and `input` model the
// Framing concept's two sides with every capability, for any format (any_output, any_input).
struct any_framing {
  // Opened from a wspecifier ("ark,scp,t:a.ark,a.scp").
  class output : public any_output {
   public:
    // Opens the table the wspecifier names; usage_error for a specifier that is not one.
    explicit output(std::string_view wspec, const open_options& options = {})
        : output(require_wspecifier(wspec), options) {}
    output(const wspecifier& spec, const open_options& options)
        : any_output(open_table_output(spec, options)), spec_(spec) {}
    // The specifier it was opened with.
    const wspecifier& specifier() const noexcept { return spec_; }
    // What errors call the table: its archive's name, or its script's when it writes none.
    const std::string& name() const noexcept { return spec_.archive.empty() ? spec_.script : spec_.archive; }

   private:
    wspecifier spec_;
  };

  // Opened from an rspecifier ("ark,s,cs:-"), whose options say how a table reads it.
  class input : public any_input {
   public:
    // Opens the table the rspecifier names; usage_error for a specifier that is not one.
    explicit input(std::string_view rspec, const open_options& options = {})
        : input(require_rspecifier(rspec), options) {}
    input(const rspecifier& spec, const open_options& options)
        : any_input(open_table_input(spec, options)), spec_(spec) {}
    // The Framing concept: how a table reads it, from the specifier's options (s, cs, o, p).
    read_options options() const noexcept {
      return {spec_.sorted, spec_.called_sorted, spec_.once, spec_.permissive};
    }
    // The bytes feature records keep their key in, as the specifier's key=NAME says; empty when none.
    std::string_view key_name() const noexcept { return spec_.records.key_feature; }
    // The specifier it was opened with.
    const rspecifier& specifier() const noexcept { return spec_; }
    // The Framing concept: what errors call the table (the specifier's file name).
    const std::string& name() const noexcept { return spec_.filename; }

   private:
    rspecifier spec_;
  };
};

TABLIO_END_NAMESPACE
