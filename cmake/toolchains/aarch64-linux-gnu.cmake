# 64-bit ARM Linux from an x86-64 Debian: Debian's cross compiler (g++-aarch64-linux-gnu), the
# target's libraries from its arm64 packages (zlib1g-dev:arm64, liblmdb-dev:arm64), programs run
# under qemu-aarch64-static, also by ctest. Programs are linked statically: qemu-user (7.2) hangs
# in a dynamically linked program that starts threads.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
set(CMAKE_EXE_LINKER_FLAGS_INIT -static)
set(ZLIB_USE_STATIC_LIBS ON)
set(TABLIO_LMDB_LIBRARY /usr/lib/aarch64-linux-gnu/liblmdb.a CACHE FILEPATH "liblmdb (static)")
# Only the target's libraries: the host's multiarch folders and pkg-config files are not looked at.
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/include/x86_64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
