# For packages whose information cannot carry sources (Conan's: this is its build module, which
# CMakeDeps includes once the targets exist): adds the remote layer's source, packaged beside
# this file as src/remote.cpp, to tablio::curl, so that each program linking it compiles it once.
target_sources(tablio::curl INTERFACE "${CMAKE_CURRENT_LIST_DIR}/src/remote.cpp")
