// Read-only memory maps of open files: mmap(2) on POSIX, a file mapping's view on Win32.
#pragma once

#include <tablio/stream/platform/file_io.hpp>

#if !defined(_WIN32)
#include <sys/mman.h>
#endif

TABLIO_BEGIN_NAMESPACE

namespace detail::os {

// How the map will be read: the system may read ahead (or not) accordingly.
enum class map_advice { normal, sequential, random };

#if defined(_WIN32)

// The first `size` bytes of an open file, read-only; nullptr (errno set) on failure. Writes
// by others through the file are seen (as a shared map is on POSIX).
TABLIO_COLD inline const char* map_file(native_file f, std::size_t size,
                                        map_advice = map_advice::normal) noexcept {
  HANDLE mapping = ::CreateFileMappingW(f, nullptr, PAGE_READONLY, 0, 0, nullptr);
  if (!mapping) return win32::failed(nullptr);
  const void* view = ::MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, size);
  if (!view) win32::failed(nullptr);
  ::CloseHandle(mapping);  // the view keeps the mapping
  return static_cast<const char*>(view);
}
inline void unmap_file(const char* data, std::size_t) noexcept { ::UnmapViewOfFile(data); }

#else

TABLIO_COLD inline const char* map_file(native_file f, std::size_t size,
                                        map_advice advice = map_advice::normal) noexcept {
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, f, 0);
  if (p == MAP_FAILED) return nullptr;
  ::madvise(p, size,
            advice == map_advice::sequential ? MADV_SEQUENTIAL
            : advice == map_advice::random   ? MADV_RANDOM
                                             : MADV_NORMAL);  // a hint: failure is harmless
  return static_cast<const char*>(p);
}
inline void unmap_file(const char* data, std::size_t size) noexcept {
  ::munmap(const_cast<char*>(data), size);
}

#endif

}  // namespace detail::os

TABLIO_END_NAMESPACE
