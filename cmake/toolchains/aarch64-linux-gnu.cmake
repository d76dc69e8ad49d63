# 64-bit ARM Linux from an x86-64 Debian: Debian's cross compiler (g++-aarch64-linux-gnu), the
# target's libraries from its arm64 packages (zlib1g-dev:arm64, liblmdb-dev:arm64), programs run
# under qemu-aarch64-static, also by ctest (the cross C and C++ runtimes found under -L).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/aarch64-linux-gnu)
