# An overlay port that builds the tablio tree it lives in:
#   vcpkg install tablio --overlay-ports=<tablio>/ports
get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

# Headers only: one configuration is enough.
set(VCPKG_BUILD_TYPE release)

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    curl TABLIO_WITH_CURL
    jpeg TABLIO_WITH_JPEG
    lmdb TABLIO_WITH_LMDB
    zlib TABLIO_WITH_ZLIB
)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    -DTABLIO_BUILD_TESTS=OFF
    -DTABLIO_BUILD_EXAMPLES=OFF
    -DTABLIO_BUILD_TOOLS=OFF
    ${FEATURE_OPTIONS}
)
vcpkg_cmake_install()
# vcpkg keeps share/pkgconfig for modules that link nothing; tablio's link threads (its tables'
# threads=N, the remote layer's).
file(MAKE_DIRECTORY "${CURRENT_PACKAGES_DIR}/lib/pkgconfig")
file(GLOB tablio_pc_files "${CURRENT_PACKAGES_DIR}/share/pkgconfig/*.pc")
foreach(pc IN LISTS tablio_pc_files)
  get_filename_component(name "${pc}" NAME)
  file(RENAME "${pc}" "${CURRENT_PACKAGES_DIR}/lib/pkgconfig/${name}")
endforeach()
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/share/pkgconfig")
vcpkg_cmake_config_fixup()
vcpkg_fixup_pkgconfig()

# The licence goes where vcpkg looks for it, not under share/doc.
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/share/doc")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
