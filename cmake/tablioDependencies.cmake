# Finds what tablio's optional components link, in the same way when tablio is built and when
# its installed package is found, whichever package manager provided the library:
#   zlib: find_package(ZLIB), which CMake's module, vcpkg and Conan all answer with ZLIB::ZLIB;
#   lmdb: Conan writes an lmdb package (lmdb::lmdb), vcpkg's port is unofficial-lmdb
#         (unofficial::lmdb::lmdb), and Debian's liblmdb-dev has no CMake package at all;
#   curl: find_package(CURL), CMake's module or curl's own package: CURL::libcurl;
#   jpeg: libjpeg-turbo's TurboJPEG and libjpeg (libjpeg-turbo's package: libjpeg-turbo::turbojpeg
#         and ::jpeg; else turbojpeg.h, jpeglib.h and their libraries, as Debian's libturbojpeg0-dev
#         and libjpeg62-turbo-dev have them) and libpng
#         (find_package(PNG): PNG::PNG).
# Each function sets OUT to whether the library was found, and leaves its target defined.

function(tablio_find_zlib out)
  find_package(ZLIB QUIET)
  set(${out} ${ZLIB_FOUND} PARENT_SCOPE)
endfunction()

function(tablio_find_lmdb out)
  if(NOT TARGET lmdb::lmdb)
    find_package(lmdb CONFIG QUIET)
  endif()
  if(NOT TARGET lmdb::lmdb)
    find_package(unofficial-lmdb CONFIG QUIET)
    if(TARGET unofficial::lmdb::lmdb)
      add_library(lmdb::lmdb INTERFACE IMPORTED)
      set_target_properties(lmdb::lmdb PROPERTIES INTERFACE_LINK_LIBRARIES unofficial::lmdb::lmdb)
    endif()
  endif()
  if(NOT TARGET lmdb::lmdb)
    find_path(TABLIO_LMDB_INCLUDE_DIR lmdb.h)
    find_library(TABLIO_LMDB_LIBRARY lmdb)
    mark_as_advanced(TABLIO_LMDB_INCLUDE_DIR TABLIO_LMDB_LIBRARY)
    if(TABLIO_LMDB_INCLUDE_DIR AND TABLIO_LMDB_LIBRARY)
      add_library(lmdb::lmdb UNKNOWN IMPORTED)
      set_target_properties(lmdb::lmdb PROPERTIES IMPORTED_LOCATION "${TABLIO_LMDB_LIBRARY}"
                                                  INTERFACE_INCLUDE_DIRECTORIES "${TABLIO_LMDB_INCLUDE_DIR}")
    endif()
  endif()
  if(TARGET lmdb::lmdb)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

function(tablio_find_curl out)
  find_package(CURL QUIET)
  find_package(Threads QUIET)  # the remote layer reads ahead and uploads on threads of its own
  if(CURL_FOUND AND Threads_FOUND)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

function(tablio_find_jpeg out)
  if(NOT TARGET tablio_turbojpeg)
    find_package(libjpeg-turbo CONFIG QUIET)
    if(TARGET libjpeg-turbo::turbojpeg AND TARGET libjpeg-turbo::jpeg)
      add_library(tablio_turbojpeg INTERFACE IMPORTED)
      set_target_properties(tablio_turbojpeg PROPERTIES INTERFACE_LINK_LIBRARIES
                                                        "libjpeg-turbo::turbojpeg;libjpeg-turbo::jpeg")
    else()
      # TurboJPEG, and libjpeg's API beside it (a transform decodes only the part it needs)
      find_path(TABLIO_TURBOJPEG_INCLUDE_DIR turbojpeg.h)
      find_library(TABLIO_TURBOJPEG_LIBRARY turbojpeg)
      find_path(TABLIO_LIBJPEG_INCLUDE_DIR jpeglib.h)
      find_library(TABLIO_LIBJPEG_LIBRARY jpeg)
      mark_as_advanced(TABLIO_TURBOJPEG_INCLUDE_DIR TABLIO_TURBOJPEG_LIBRARY TABLIO_LIBJPEG_INCLUDE_DIR
                       TABLIO_LIBJPEG_LIBRARY)
      if(TABLIO_TURBOJPEG_INCLUDE_DIR AND TABLIO_TURBOJPEG_LIBRARY AND TABLIO_LIBJPEG_INCLUDE_DIR
         AND TABLIO_LIBJPEG_LIBRARY)
        add_library(tablio_turbojpeg UNKNOWN IMPORTED)
        set_target_properties(tablio_turbojpeg PROPERTIES
          IMPORTED_LOCATION "${TABLIO_TURBOJPEG_LIBRARY}"
          INTERFACE_INCLUDE_DIRECTORIES "${TABLIO_TURBOJPEG_INCLUDE_DIR};${TABLIO_LIBJPEG_INCLUDE_DIR}"
          INTERFACE_LINK_LIBRARIES "${TABLIO_LIBJPEG_LIBRARY}")
      endif()
    endif()
  endif()
  find_package(PNG QUIET)
  if(TARGET tablio_turbojpeg AND TARGET PNG::PNG)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()
