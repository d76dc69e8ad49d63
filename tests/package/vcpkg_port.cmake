# Runs ports/tablio/portfile.cmake the way `vcpkg install tablio[FEATURES]` does, with the
# vcpkg functions it calls standing in for vcpkg's own: they run the same CMake configure
# (vcpkg's standard arguments) and install, and make the checks vcpkg makes after a build.
#   cmake -DSOURCE_DIR=... -DPACKAGES_DIR=... -DFEATURES=lmdb,zlib,curl -P vcpkg_port.cmake
cmake_minimum_required(VERSION 3.20)
set(PORT tablio)
set(CURRENT_PACKAGES_DIR ${PACKAGES_DIR})
set(CURRENT_BUILDTREES_DIR ${PACKAGES_DIR}-buildtrees)
string(REPLACE "," ";" FEATURES "${FEATURES}")
file(REMOVE_RECURSE ${CURRENT_PACKAGES_DIR} ${CURRENT_BUILDTREES_DIR})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

# The port's version is the project's.
file(READ ${SOURCE_DIR}/ports/tablio/vcpkg.json manifest)
string(JSON port_version GET "${manifest}" version)
file(READ ${SOURCE_DIR}/CMakeLists.txt cmake_lists)
string(REGEX MATCH "project\\(tablio VERSION ([0-9.]+)" _ "${cmake_lists}")
if(NOT port_version STREQUAL CMAKE_MATCH_1)
  message(FATAL_ERROR "vcpkg.json says ${port_version}, CMakeLists.txt says ${CMAKE_MATCH_1}")
endif()

function(vcpkg_check_features)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUT_FEATURE_OPTIONS" "FEATURES")
  set(options)
  while(arg_FEATURES)
    list(POP_FRONT arg_FEATURES feature variable)
    if(feature IN_LIST FEATURES)
      list(APPEND options -D${variable}=ON)
    else()
      list(APPEND options -D${variable}=OFF)
    endif()
  endwhile()
  set(${arg_OUT_FEATURE_OPTIONS} ${options} PARENT_SCOPE)
endfunction()

function(vcpkg_cmake_configure)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "SOURCE_PATH" "OPTIONS")
  if(NOT VCPKG_BUILD_TYPE STREQUAL "release")
    message(FATAL_ERROR "a header-only port builds the release configuration only")
  endif()
  run(${CMAKE_COMMAND} -S ${arg_SOURCE_PATH} -B ${CURRENT_BUILDTREES_DIR}/x64-linux-rel
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=${CURRENT_PACKAGES_DIR} -DBUILD_SHARED_LIBS=OFF
      -DCMAKE_INSTALL_LIBDIR:STRING=lib -DCMAKE_INSTALL_BINDIR:STRING=bin -DFETCHCONTENT_FULLY_DISCONNECTED=ON
      -DCMAKE_EXPORT_NO_PACKAGE_REGISTRY=ON -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
      -DVCPKG_TARGET_TRIPLET=x64-linux ${arg_OPTIONS})
endfunction()

function(vcpkg_cmake_install)
  run(${CMAKE_COMMAND} --build ${CURRENT_BUILDTREES_DIR}/x64-linux-rel --target install)
  # Headers only: the port compiles nothing (tablio::compiled is made in the consuming project).
  file(GLOB_RECURSE objects ${CURRENT_BUILDTREES_DIR}/*.o ${CURRENT_BUILDTREES_DIR}/*.a)
  if(objects)
    message(FATAL_ERROR "the header-only port compiled ${objects}")
  endif()
endfunction()

# Relocatable: no file vcpkg installs may name the directory it was built in.
function(check_no_absolute_paths)
  file(GLOB_RECURSE files ${CURRENT_PACKAGES_DIR}/*)
  foreach(file ${files})
    file(READ ${file} text)
    foreach(path ${CURRENT_PACKAGES_DIR} ${SOURCE_DIR})
      string(FIND "${text}" "${path}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "${file} names ${path}: the package would not be relocatable")
      endif()
    endforeach()
  endforeach()
endfunction()

function(vcpkg_cmake_config_fixup)
  if(NOT EXISTS ${CURRENT_PACKAGES_DIR}/share/${PORT}/tablioConfig.cmake)
    message(FATAL_ERROR "no CMake package in share/${PORT}")
  endif()
endfunction()

# Each module must be valid, and find the modules it requires (in the package, or installed).
function(vcpkg_fixup_pkgconfig)
  file(GLOB pc_files ${CURRENT_PACKAGES_DIR}/lib/pkgconfig/*.pc ${CURRENT_PACKAGES_DIR}/share/pkgconfig/*.pc)
  if(NOT pc_files)
    message(FATAL_ERROR "no pkg-config files")
  endif()
  set(ENV{PKG_CONFIG_PATH} ${CURRENT_PACKAGES_DIR}/lib/pkgconfig:${CURRENT_PACKAGES_DIR}/share/pkgconfig)
  foreach(pc ${pc_files})
    run(pkg-config --validate ${pc})
  endforeach()
endfunction()

function(vcpkg_install_copyright)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "" "FILE_LIST")
  file(INSTALL ${arg_FILE_LIST} DESTINATION ${CURRENT_PACKAGES_DIR}/share/${PORT})
  get_filename_component(name ${arg_FILE_LIST} NAME)
  file(RENAME ${CURRENT_PACKAGES_DIR}/share/${PORT}/${name} ${CURRENT_PACKAGES_DIR}/share/${PORT}/copyright)
endfunction()

include(${SOURCE_DIR}/ports/tablio/portfile.cmake)

# vcpkg's post-build checks that apply to a header-only port.
foreach(required share/${PORT}/copyright share/${PORT}/usage include/tablio/tablio.hpp)
  if(NOT EXISTS ${CURRENT_PACKAGES_DIR}/${required})
    message(FATAL_ERROR "the port installs no ${required}")
  endif()
endforeach()
foreach(forbidden debug bin share/doc)
  if(EXISTS ${CURRENT_PACKAGES_DIR}/${forbidden})
    message(FATAL_ERROR "a header-only port must not install ${forbidden}/")
  endif()
endforeach()
file(GLOB_RECURSE libraries RELATIVE ${CURRENT_PACKAGES_DIR} ${CURRENT_PACKAGES_DIR}/lib/*)
list(FILTER libraries EXCLUDE REGEX "^lib/pkgconfig/[^/]*\\.pc$")
if(libraries)
  message(FATAL_ERROR "a header-only port installs no libraries, but there are ${libraries}")
endif()
check_no_absolute_paths()
# A module in share/pkgconfig must link nothing (no Libs: with a value): those that do are
# architecture-dependent, and belong in lib/pkgconfig.
file(GLOB pc_files ${CURRENT_PACKAGES_DIR}/share/pkgconfig/*.pc)
foreach(pc ${pc_files})
  file(STRINGS ${pc} libs REGEX "^Libs[^:]*:.*[^ ]")
  if(libs)
    message(FATAL_ERROR "${pc} links something (${libs}), so vcpkg wants it in lib/pkgconfig")
  endif()
endforeach()
