# Installs tablio as each kind of user gets it and builds tests/package/consumer against it:
#   find_package      cmake --install, then find_package(tablio COMPONENTS zlib lmdb)
#   core_only         installed without components: the core works, asking for lmdb fails
#   add_subdirectory  the source tree inside a project
#   headers_only      TABLIO_INSTALL_HEADERS_ONLY: the include directory and nothing else
#   pkg_config        pkg-config --cflags --libs tablio-zlib tablio-lmdb
#   conan             conanfile.py's package() and package_info(), without and with options
#   vcpkg             ports/tablio/portfile.cmake, without and with features
#   separate          installed, then compiled with TABLIO_SEPARATE_COMPILATION and the installed
#                     share/tablio/src/tablio.cpp beside the consumer
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(no_extras -DTABLIO_BUILD_TESTS=OFF -DTABLIO_BUILD_EXAMPLES=OFF -DTABLIO_BUILD_TOOLS=OFF)

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
  install_tablio(${WORK_DIR}/prefix -DTABLIO_WITH_ZLIB=ON -DTABLIO_WITH_LMDB=ON)
  build_consumer(consumer "zlib,lmdb" -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
elseif(MODE STREQUAL "core_only")
  install_tablio(${WORK_DIR}/prefix -DTABLIO_WITH_ZLIB=OFF -DTABLIO_WITH_LMDB=OFF)
  if(EXISTS ${WORK_DIR}/prefix/share/tablio/tablio-lmdb-targets.cmake)
    message(FATAL_ERROR "TABLIO_WITH_LMDB=OFF installed the lmdb component")
  endif()
  build_consumer(consumer "" -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package -B ${WORK_DIR}/asks-lmdb
                  -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DTABLIO_CONSUMER_COMPONENTS=lmdb
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "tablio::lmdb component was asked for")
    message(FATAL_ERROR "asking a core-only installation for lmdb should fail and say why:\n${err}")
  endif()
elseif(MODE STREQUAL "add_subdirectory")
  build_consumer(consumer "zlib,lmdb" -DTABLIO_CONSUMER_MODE=add_subdirectory -DTABLIO_SOURCE_DIR=${SOURCE_DIR})
elseif(MODE STREQUAL "headers_only")
  install_tablio(${WORK_DIR}/prefix -DTABLIO_INSTALL_HEADERS_ONLY=ON)
  file(GLOB_RECURSE installed RELATIVE ${WORK_DIR}/prefix ${WORK_DIR}/prefix/*)
  list(FILTER installed EXCLUDE REGEX "^include/tablio/")
  if(installed)
    message(FATAL_ERROR "TABLIO_INSTALL_HEADERS_ONLY installed more than headers: ${installed}")
  endif()
  compile_consumer(consumer -I${WORK_DIR}/prefix/include -DTABLIO_WITH_ZLIB -DTABLIO_WITH_LMDB -lz -llmdb)
elseif(MODE STREQUAL "separate")
  install_tablio(${WORK_DIR}/prefix -DTABLIO_WITH_ZLIB=ON -DTABLIO_WITH_LMDB=ON)
  compile_consumer(consumer -I${WORK_DIR}/prefix/include -DTABLIO_SEPARATE_COMPILATION -DTABLIO_WITH_ZLIB
                   -DTABLIO_WITH_LMDB ${WORK_DIR}/prefix/share/tablio/src/tablio.cpp -lz -llmdb)
elseif(MODE STREQUAL "pkg_config")
  install_tablio(${WORK_DIR}/prefix)
  set(ENV{PKG_CONFIG_PATH} ${WORK_DIR}/prefix/share/pkgconfig)
  execute_process(COMMAND pkg-config --cflags --libs tablio-zlib tablio-lmdb
                  OUTPUT_VARIABLE flags RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR NOT flags MATCHES "-I[^ ]*/include" OR NOT flags MATCHES "-DTABLIO_WITH_LMDB")
    message(FATAL_ERROR "pkg-config gave: ${flags}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  compile_consumer(consumer ${flags})
elseif(MODE STREQUAL "conan")
  foreach(options "zlib=False;lmdb=False" "zlib=True;lmdb=True")
    string(MAKE_C_IDENTIFIER "${options}" name)
    run(${PYTHON} ${SOURCE_DIR}/tests/package/conan_recipe.py ${SOURCE_DIR} ${WORK_DIR}/${name} ${options})
    string(REGEX REPLACE "(zlib|lmdb)=False;?" "" components "${options}")
    string(REGEX REPLACE "=True" "" components "${components}")
    string(REPLACE ";" "," components "${components}")
    build_consumer(${name}-consumer "${components}" -DCMAKE_PREFIX_PATH=${WORK_DIR}/${name}/generators
                   -DCMAKE_CXX_STANDARD=20)
  endforeach()
elseif(MODE STREQUAL "vcpkg")
  foreach(features "core" "lmdb,zlib")
    string(MAKE_C_IDENTIFIER "${features}" name)
    run(${CMAKE_COMMAND} -DSOURCE_DIR=${SOURCE_DIR} -DPACKAGES_DIR=${WORK_DIR}/${name}/packages
        -DFEATURES=${features} -P ${SOURCE_DIR}/tests/package/vcpkg_port.cmake)
    string(REPLACE "core" "" components "${features}")
    build_consumer(${name}-consumer "${components}" -DCMAKE_PREFIX_PATH=${WORK_DIR}/${name}/packages)
  endforeach()
else()
  message(FATAL_ERROR "unknown MODE ${MODE}")
endif()
