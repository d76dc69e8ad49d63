// tablio: one header for every layer.
#pragma once

#include <tablio/codec/codec.hpp>
#include <tablio/codec/kaldi_object.hpp>
#include <tablio/core/crc32c.hpp>
#include <tablio/core/endian.hpp>
#include <tablio/core/error.hpp>
#include <tablio/core/limits.hpp>
#include <tablio/core/owned.hpp>
#include <tablio/core/version.hpp>
#include <tablio/framing/ark.hpp>
#include <tablio/framing/concepts.hpp>
#include <tablio/framing/idx.hpp>
#include <tablio/framing/scp.hpp>
#include <tablio/framing/tar.hpp>
#include <tablio/framing/tfrecord.hpp>
#include <tablio/holder/datum.hpp>
#include <tablio/holder/example.hpp>
#include <tablio/holder/holders.hpp>
#include <tablio/holder/sample.hpp>
#include <tablio/stream/arguments.hpp>
#include <tablio/stream/file.hpp>
#include <tablio/stream/filename.hpp>
#include <tablio/stream/iostream.hpp>
#include <tablio/stream/memory.hpp>
#include <tablio/stream/mmap.hpp>
#include <tablio/stream/pipe.hpp>
#include <tablio/stream/shards.hpp>
#include <tablio/table/compiled_kaldi_tables.hpp>
#include <tablio/table/compiled_record_tables.hpp>
#include <tablio/table/table.hpp>
#include <tablio/table/tfrecord_index.hpp>
#include <tablio/types/compressed_matrix.hpp>
#include <tablio/types/datum.hpp>
#include <tablio/types/example.hpp>
#include <tablio/types/example_mapping.hpp>
#include <tablio/types/example_view.hpp>
#include <tablio/types/matrix.hpp>
#include <tablio/types/sample.hpp>

// Optional components, when their CMake target (which defines the macro) is linked.
#if defined(TABLIO_WITH_ZLIB)
#include <tablio/stream/zlib.hpp>
#endif
#if defined(TABLIO_WITH_LMDB)
#include <tablio/framing/lmdb.hpp>
#endif
