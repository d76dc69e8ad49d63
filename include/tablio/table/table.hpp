// The table layer: Kaldi's Table concept over every framing, opened from specifiers.
#pragma once

#include <tablio/table/any_framing.hpp>
#include <tablio/table/random_access_reader.hpp>
#include <tablio/table/sequential_reader.hpp>
#include <tablio/table/table_writer.hpp>
