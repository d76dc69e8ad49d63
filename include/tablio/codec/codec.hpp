// The codec layer: every codec and the support for standard types. Kaldi-style classes
// (Write/Read members) also need <tablio/codec/kaldi_object.hpp>, which brings in iostreams.
#pragma once

#include <tablio/codec/dispatch.hpp>
#include <tablio/codec/kaldi_binary.hpp>
#include <tablio/codec/kaldi_io.hpp>
#include <tablio/codec/kaldi_text.hpp>
#include <tablio/codec/raw.hpp>
#include <tablio/codec/std/array.hpp>
#include <tablio/codec/std/map.hpp>
#include <tablio/codec/std/optional.hpp>
#include <tablio/codec/std/string.hpp>
#include <tablio/codec/std/tuple.hpp>
#include <tablio/codec/std/variant.hpp>
#include <tablio/codec/std/vector.hpp>
