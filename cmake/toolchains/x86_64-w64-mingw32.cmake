# Windows x86-64 from a Debian host: mingw-w64's g++ with POSIX threads (g++-mingw-w64-x86-64-posix),
# zlib from libz-mingw-w64-dev, programs linked statically and run under wine (Debian's wine64), also by ctest.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR AMD64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")
set(ZLIB_USE_STATIC_LIBS ON)  # libz.a: no DLL to find beside the programs
set(CMAKE_CROSSCOMPILING_EMULATOR wine)
# The header-only libraries (Boost, Catch2) are the same for every target: the host's, seen
# through a folder that holds them alone (the host's /usr/include would bring its C library).
set(tablio_host_headers ${CMAKE_BINARY_DIR}/host-headers)
foreach(library boost catch2)
  if(NOT EXISTS ${tablio_host_headers}/usr/include/${library} AND EXISTS /usr/include/${library})
    file(MAKE_DIRECTORY ${tablio_host_headers}/usr/include)
    file(CREATE_LINK /usr/include/${library} ${tablio_host_headers}/usr/include/${library} SYMBOLIC)
  endif()
endforeach()
# Catch2 2 as its headers alone (its package also names a host library, never linked here).
set(tablio_catch2_config ${tablio_host_headers}/usr/lib/cmake/Catch2)
if(NOT EXISTS ${tablio_catch2_config}/Catch2Config.cmake AND EXISTS /usr/include/catch2)
  file(WRITE ${tablio_catch2_config}/Catch2Config.cmake
       "add_library(Catch2::Catch2 INTERFACE IMPORTED)\n"
       "set_target_properties(Catch2::Catch2 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${tablio_host_headers}/usr/include)\n")
  file(READ /usr/include/catch2/catch.hpp catch2_head LIMIT 400)
  string(REGEX MATCH "v([0-9]+\\.[0-9]+\\.[0-9]+)" catch2_version "${catch2_head}")
  file(WRITE ${tablio_catch2_config}/Catch2ConfigVersion.cmake
       "set(PACKAGE_VERSION ${CMAKE_MATCH_1})\n"
       "set(PACKAGE_VERSION_COMPATIBLE FALSE)\n"
       "if(PACKAGE_FIND_VERSION_MAJOR EQUAL 2)\n  set(PACKAGE_VERSION_COMPATIBLE TRUE)\nendif()\n")
endif()
list(APPEND CMAKE_FIND_ROOT_PATH ${tablio_host_headers})
set(Boost_INCLUDE_DIR ${tablio_host_headers}/usr/include CACHE PATH "Boost's headers")
set(Boost_NO_BOOST_CMAKE ON)
