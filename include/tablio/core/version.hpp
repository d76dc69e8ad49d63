// tablio version and the versioned inline namespace.
//
// Every declaration lives in tablio::TABLIO_ABI_NAMESPACE, an inline namespace named after the
// version and after every option that changes a definition in the headers. Two copies of
// tablio embedded in one program (say, inside two plugins) therefore share symbols only when
// their definitions are the same, and cannot violate the one-definition rule: a copy built
// with zlib and one built without each keep their own `tfrecord_reader`, whatever the order
// the linker or the dynamic loader sees them in.
#pragma once

#if !defined(__cpp_exceptions) && !defined(__EXCEPTIONS)
#error \
    "tablio reports every error by exception: compile the translation units that include it with exceptions enabled (see docs/packaging.md for embedding tablio in a framework built with -fno-exceptions)"
#endif

#define TABLIO_VERSION_MAJOR 0
#define TABLIO_VERSION_MINOR 1
#define TABLIO_VERSION_PATCH 0

// One letter per option, in a fixed order. h or s: header-only or separate compilation;
// z, l, c: the zlib, LMDB and curl components; n: TABLIO_NO_CPU_DISPATCH; a, f, r: code chosen
// for AVX, for fused multiply-add, and for ARM's CRC32 instructions.
#if defined(TABLIO_SEPARATE_COMPILATION)
#define TABLIO_ABI_MODE s
#else
#define TABLIO_ABI_MODE h
#endif
#if defined(TABLIO_WITH_ZLIB)
#define TABLIO_ABI_ZLIB z
#else
#define TABLIO_ABI_ZLIB
#endif
#if defined(TABLIO_WITH_LMDB)
#define TABLIO_ABI_LMDB l
#else
#define TABLIO_ABI_LMDB
#endif
#if defined(TABLIO_WITH_CURL)
#define TABLIO_ABI_CURL c
#else
#define TABLIO_ABI_CURL
#endif
#if defined(TABLIO_NO_CPU_DISPATCH)
#define TABLIO_ABI_DISPATCH n
#else
#define TABLIO_ABI_DISPATCH
#endif
#if defined(__AVX__)
#define TABLIO_ABI_AVX a
#else
#define TABLIO_ABI_AVX
#endif
#if defined(__FP_FAST_FMAF) || defined(__FP_FAST_FMA) || defined(__FMA__)
#define TABLIO_ABI_FMA f
#else
#define TABLIO_ABI_FMA
#endif
#if defined(__ARM_FEATURE_CRC32)
#define TABLIO_ABI_CRC r
#else
#define TABLIO_ABI_CRC
#endif

#define TABLIO_ABI_NAME_IMPL(major, minor, patch, m, z, l, c, n, a, f, r) \
  v##major##_##minor##_##patch##_##m##z##l##c##n##a##f##r
#define TABLIO_ABI_NAME(...) TABLIO_ABI_NAME_IMPL(__VA_ARGS__)
#define TABLIO_ABI_NAMESPACE                                                                              \
  TABLIO_ABI_NAME(TABLIO_VERSION_MAJOR, TABLIO_VERSION_MINOR, TABLIO_VERSION_PATCH, TABLIO_ABI_MODE,      \
                  TABLIO_ABI_ZLIB, TABLIO_ABI_LMDB, TABLIO_ABI_CURL, TABLIO_ABI_DISPATCH, TABLIO_ABI_AVX, \
                  TABLIO_ABI_FMA, TABLIO_ABI_CRC)

#define TABLIO_BEGIN_NAMESPACE \
  namespace tablio {           \
  inline namespace TABLIO_ABI_NAMESPACE {
#define TABLIO_END_NAMESPACE \
  }                          \
  }

TABLIO_BEGIN_NAMESPACE

// A version of tablio as three numbers, major.minor.patch.
struct version_info {
  int major, minor, patch;
};
// The version of the headers included: TABLIO_VERSION_MAJOR, _MINOR and _PATCH.
inline constexpr version_info version{TABLIO_VERSION_MAJOR, TABLIO_VERSION_MINOR, TABLIO_VERSION_PATCH};

TABLIO_END_NAMESPACE
