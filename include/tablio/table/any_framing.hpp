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

struct any_framing {
  // Opened from a wspecifier ("ark,scp,t:a.ark,a.scp").
  class output : public any_output {
   public:
    explicit output(std::string_view wspec, const open_options& options = {})
        : output(require_wspecifier(wspec), options) {}
    output(const wspecifier& spec, const open_options& options)
        : any_output(open_table_output(spec, options)), spec_(spec) {}
    const wspecifier& specifier() const noexcept { return spec_; }
    const std::string& name() const noexcept { return spec_.archive.empty() ? spec_.script : spec_.archive; }

   private:
    wspecifier spec_;
  };

  // Opened from an rspecifier ("ark,s,cs:-"), whose options say how a table reads it.
  class input : public any_input {
   public:
    explicit input(std::string_view rspec, const open_options& options = {})
        : input(require_rspecifier(rspec), options) {}
    input(const rspecifier& spec, const open_options& options)
        : any_input(open_table_input(spec, options)), spec_(spec) {}
    read_options options() const noexcept {
      return {spec_.sorted, spec_.called_sorted, spec_.once, spec_.permissive};
    }
    std::string_view key_name() const noexcept { return spec_.records.key_feature; }
    const rspecifier& specifier() const noexcept { return spec_; }
    const std::string& name() const noexcept { return spec_.filename; }

   private:
    rspecifier spec_;
  };
};

TABLIO_END_NAMESPACE
