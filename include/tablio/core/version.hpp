// tablio version and the versioned inline namespace.
//
// Every declaration lives in tablio::TABLIO_ABI_NAMESPACE, an inline namespace named after the
// version, so two copies of tablio embedded in one program (say, inside two frameworks) have
// distinct symbols and cannot violate the one-definition rule.
#pragma once

#define TABLIO_VERSION_MAJOR 0
#define TABLIO_VERSION_MINOR 1
#define TABLIO_VERSION_PATCH 0

#define TABLIO_CONCAT_IMPL(a, b, c) v##a##_##b##_##c
#define TABLIO_CONCAT(a, b, c) TABLIO_CONCAT_IMPL(a, b, c)
#define TABLIO_ABI_NAMESPACE TABLIO_CONCAT(TABLIO_VERSION_MAJOR, TABLIO_VERSION_MINOR, TABLIO_VERSION_PATCH)

#define TABLIO_BEGIN_NAMESPACE \
  namespace tablio {           \
  inline namespace TABLIO_ABI_NAMESPACE {
#define TABLIO_END_NAMESPACE \
  }                          \
  }

TABLIO_BEGIN_NAMESPACE

struct version_info {
  int major, minor, patch;
};
inline constexpr version_info version{TABLIO_VERSION_MAJOR, TABLIO_VERSION_MINOR, TABLIO_VERSION_PATCH};

TABLIO_END_NAMESPACE
