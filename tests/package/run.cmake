# Installs tablio as each kind of user gets it and builds tests/package/consumer against it:
#   find_package      cmake --install, moved elsewhere, then find_package(tablio COMPONENTS
#                     zlib lmdb curl), header-only and through the package's tablio::compiled
#   core_only         installed without components: the core works, asking for lmdb or curl fails
#   add_subdirectory  the source tree inside a project
#   headers_only      TABLIO_INSTALL_HEADERS_ONLY: the include directory and nothing else, which
#                     with src/remote.cpp from the sources is all a program needs
#   pkg_config        pkg-config --cflags --libs tablio-zlib tablio-lmdb tablio-curl, and the
#                     source the curl module names (remote_source)
#   conan             conanfile.py's package() and package_info(), without and with options
#   vcpkg             ports/tablio/portfile.cmake, without and with features
#   separate          installed, then compiled with TABLIO_SEPARATE_COMPILATION and the installed
#                     share/tablio/src/tablio.cpp beside the consumer
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(no_extras -DTABLIO_BUILD_TESTS=OFF -DTABLIO_BUILD_EXAMPLES=OFF -DTABLIO_BUILD_TOOLS=OFF)
set(all_components -DTABLIO_WITH_ZLIB=ON -DTABLIO_WITH_LMDB=ON -DTABLIO_WITH_CURL=ON -DTABLIO_WITH_JPEG=ON)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

function(install_tablio prefix)
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${prefix}-build -DCMAKE_CXX_COMPILER=${CXX}
      -DCMAKE_INSTALL_PREFIX=${prefix} ${no_extras} ${ARGN})
  run(${CMAKE_COMMAND} --install ${prefix}-build)
endfunction()

# Configures, builds and runs the consumer; extra arguments go to its configure step.
function(build_consumer name components)
  set(build ${WORK_DIR}/${name})
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package -B ${build} -DCMAKE_CXX_COMPILER=${CXX}
      -DTABLIO_CONSUMER_COMPONENTS=${components} ${ARGN})
  run(${CMAKE_COMMAND} --build ${build})
  run(${build}/consumer ${build}/data)
endfunction()

# Compiles the consumer with a plain compiler command.
function(compile_consumer name)
  run(${CXX} -std=c++20 -O1 ${SOURCE_DIR}/tests/package/consumer.cpp -o ${WORK_DIR}/${name} ${ARGN})
  run(${WORK_DIR}/${name} ${WORK_DIR}/${name}-data)
endfunction()

if(MODE STREQUAL "find_package")
  # Built against a moved copy: the package must find its files (tablio::curl's source among
  # them) from where it is, not from where it was installed.
  install_tablio(${WORK_DIR}/installed ${all_components})
  file(RENAME ${WORK_DIR}/installed ${WORK_DIR}/prefix)
  build_consumer(consumer "zlib,lmdb,curl,jpeg" -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
  # The package's tablio::compiled, made from the installed src/tablio.cpp, with the header the
  # consumer includes precompiled through TABLIO_PRECOMPILE_HEADERS.
  build_consumer(consumer-compiled "zlib,lmdb,curl" -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
                 -DTABLIO_CONSUMER_COMPILED=ON -DTABLIO_PRECOMPILE_HEADERS=tablio/tablio.hpp)
  if(NOT EXISTS ${WORK_DIR}/consumer-compiled/CMakeFiles/consumer.dir/cmake_pch.hxx)
    message(FATAL_ERROR "TABLIO_PRECOMPILE_HEADERS gave the consumer no precompiled header")
  endif()
  # The same installation from clang with libc++ (macOS's standard library, which reads no
  # floating-point text): fast_float is asked for by the consumer's compiler, not the installer's.
  if(CLANG)
    build_consumer(consumer-libcxx "zlib" -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_CXX_COMPILER=${CLANG}
                   -DCMAKE_CXX_FLAGS=-stdlib=libc++)
    file(STRINGS ${WORK_DIR}/consumer-libcxx/CMakeCache.txt fast_float REGEX "^FastFloat_DIR:.*[^-]FOUND$|^FastFloat_DIR:PATH=/")
    if(NOT fast_float)
      message(FATAL_ERROR "a consumer with libc++ did not find fast_float through tablio's package")
    endif()
  endif()
elseif(MODE STREQUAL "core_only")
  install_tablio(${WORK_DIR}/prefix -DTABLIO_WITH_ZLIB=OFF -DTABLIO_WITH_LMDB=OFF -DTABLIO_WITH_CURL=OFF
                 -DTABLIO_WITH_JPEG=OFF)
  build_consumer(consumer "" -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
  foreach(component lmdb curl jpeg)
    if(EXISTS ${WORK_DIR}/prefix/share/tablio/tablio-${component}-targets.cmake)
      message(FATAL_ERROR "TABLIO_WITH_${component}=OFF installed the ${component} component")
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package -B ${WORK_DIR}/asks-${component}
                    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DTABLIO_CONSUMER_COMPONENTS=${component}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(rc EQUAL 0 OR NOT err MATCHES "tablio::${component} component was asked for")
      message(FATAL_ERROR "asking a core-only installation for ${component} should fail and say why:\n${err}")
    endif()
  endforeach()
elseif(MODE STREQUAL "add_subdirectory")
  build_consumer(consumer "zlib,lmdb,curl,jpeg" -DTABLIO_CONSUMER_MODE=add_subdirectory -DTABLIO_SOURCE_DIR=${SOURCE_DIR}
                 ${all_components})
elseif(MODE STREQUAL "headers_only")
  install_tablio(${WORK_DIR}/prefix -DTABLIO_INSTALL_HEADERS_ONLY=ON)
  file(GLOB_RECURSE installed RELATIVE ${WORK_DIR}/prefix ${WORK_DIR}/prefix/*)
  list(FILTER installed EXCLUDE REGEX "^include/tablio/")
  if(installed)
    message(FATAL_ERROR "TABLIO_INSTALL_HEADERS_ONLY installed more than headers: ${installed}")
  endif()
  # What a package manager that writes its own files does: the headers, and the remote layer
  # compiled from the sources against them.
  compile_consumer(consumer -I${WORK_DIR}/prefix/include -DTABLIO_WITH_ZLIB -DTABLIO_WITH_LMDB -DTABLIO_WITH_CURL
                   ${SOURCE_DIR}/src/remote.cpp -lz -llmdb -lcurl -pthread)
elseif(MODE STREQUAL "separate")
  install_tablio(${WORK_DIR}/prefix -DTABLIO_WITH_ZLIB=ON -DTABLIO_WITH_LMDB=ON -DTABLIO_WITH_CURL=OFF)
  compile_consumer(consumer -I${WORK_DIR}/prefix/include -DTABLIO_SEPARATE_COMPILATION -DTABLIO_WITH_ZLIB
                   -DTABLIO_WITH_LMDB ${WORK_DIR}/prefix/share/tablio/src/tablio.cpp -lz -llmdb)
elseif(MODE STREQUAL "pkg_config")
  install_tablio(${WORK_DIR}/prefix ${all_components})
  set(ENV{PKG_CONFIG_PATH} ${WORK_DIR}/prefix/share/pkgconfig)
  execute_process(COMMAND pkg-config --cflags --libs tablio-zlib tablio-lmdb tablio-curl tablio-jpeg
                  OUTPUT_VARIABLE flags RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR NOT flags MATCHES "-I[^ ]*/include" OR NOT flags MATCHES "-DTABLIO_WITH_LMDB"
     OR NOT flags MATCHES "-DTABLIO_WITH_CURL" OR NOT flags MATCHES "-pthread" OR NOT flags MATCHES "-lcurl"
     OR NOT flags MATCHES "-DTABLIO_WITH_JPEG" OR NOT flags MATCHES "-lturbojpeg" OR NOT flags MATCHES "-lpng")
    message(FATAL_ERROR "pkg-config gave: ${flags}")
  endif()
  execute_process(COMMAND pkg-config --variable=remote_source tablio-curl
                  OUTPUT_VARIABLE remote_source RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  file(REAL_PATH "${remote_source}" remote_source)
  file(REAL_PATH ${WORK_DIR}/prefix/share/tablio/src/remote.cpp installed)
  if(NOT rc EQUAL 0 OR NOT remote_source STREQUAL installed)
    message(FATAL_ERROR "tablio-curl's remote_source is '${remote_source}', not the installed src/remote.cpp")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  compile_consumer(consumer ${remote_source} ${flags})
elseif(MODE STREQUAL "conan")
  foreach(options "zlib=False;lmdb=False;curl=False;jpeg=False" "zlib=True;lmdb=True;curl=True;jpeg=True")
    string(MAKE_C_IDENTIFIER "${options}" name)
    run(${PYTHON} ${SOURCE_DIR}/tests/package/conan_recipe.py ${SOURCE_DIR} ${WORK_DIR}/${name} ${options})
    string(REGEX REPLACE "[a-z]+=False;?" "" components "${options}")
    string(REGEX REPLACE "=True" "" components "${components}")
    string(REPLACE ";" "," components "${components}")
    build_consumer(${name}-consumer "${components}" -DCMAKE_PREFIX_PATH=${WORK_DIR}/${name}/generators
                   -DCMAKE_CXX_STANDARD=20)
  endforeach()
elseif(MODE STREQUAL "vcpkg")
  foreach(features "core" "lmdb,zlib,curl,jpeg")
    string(MAKE_C_IDENTIFIER "${features}" name)
    run(${CMAKE_COMMAND} -DSOURCE_DIR=${SOURCE_DIR} -DPACKAGES_DIR=${WORK_DIR}/${name}/packages
        -DFEATURES=${features} -P ${SOURCE_DIR}/tests/package/vcpkg_port.cmake)
    string(REPLACE "core" "" components "${features}")
    build_consumer(${name}-consumer "${components}" -DCMAKE_PREFIX_PATH=${WORK_DIR}/${name}/packages)
  endforeach()
else()
  message(FATAL_ERROR "unknown MODE ${MODE}")
endif()
