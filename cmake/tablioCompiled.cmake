# tablio::compiled, the separately compiled variant (docs/packaging.md), made the same way in
# tablio's own tree and from its installed package: a static library of SOURCE (src/tablio.cpp)
# with TABLIO_SEPARATE_COMPILATION, linking tablio::tablio and the component targets given.
# EXCLUDE_FROM_ALL builds it only when a target links it. With the curl component, the library
# compiles REMOTE_SOURCE (src/remote.cpp) too, once, and takes the component's usage
# requirements without its source, so that the programs linking it do not compile it each. The
# cache variable TABLIO_PRECOMPILE_HEADERS lists headers every target linking it precompiles.
#   tablio_add_compiled(SOURCE [EXCLUDE_FROM_ALL] [REMOTE_SOURCE FILE] COMPONENTS target...)
# The components whose code SOURCE compiles (it includes no image header: not jpeg), the same
# in the tree and in the package.
set(TABLIO_COMPILED_COMPONENTS zlib lmdb curl)
function(tablio_add_compiled source)
  cmake_parse_arguments(PARSE_ARGV 1 arg "EXCLUDE_FROM_ALL" "REMOTE_SOURCE" "COMPONENTS")
  if(arg_EXCLUDE_FROM_ALL)
    add_library(tablio_compiled STATIC EXCLUDE_FROM_ALL ${source})
  else()
    add_library(tablio_compiled STATIC ${source})
  endif()
  add_library(tablio::compiled ALIAS tablio_compiled)
  set_target_properties(tablio_compiled PROPERTIES TABLIO_REMOTE_LINKED ON)
  target_compile_definitions(tablio_compiled PUBLIC TABLIO_SEPARATE_COMPILATION)
  target_link_libraries(tablio_compiled PUBLIC tablio::tablio)
  foreach(component IN LISTS arg_COMPONENTS)
    if(component MATCHES "curl$" AND arg_REMOTE_SOURCE)
      target_sources(tablio_compiled PRIVATE ${arg_REMOTE_SOURCE})
      target_compile_definitions(tablio_compiled PUBLIC TABLIO_WITH_CURL)
      target_link_libraries(tablio_compiled PUBLIC $<TARGET_PROPERTY:${component},INTERFACE_LINK_LIBRARIES>)
    else()
      target_link_libraries(tablio_compiled PUBLIC ${component})
    endif()
  endforeach()
  # Such a target parses these headers once, not once per translation unit.
  set(TABLIO_PRECOMPILE_HEADERS "" CACHE STRING
      "tablio headers that targets linking tablio::compiled precompile (e.g. tablio/kaldi.hpp)")
  if(TABLIO_PRECOMPILE_HEADERS)
    list(TRANSFORM TABLIO_PRECOMPILE_HEADERS REPLACE "^(.+)$" "<\\1>" OUTPUT_VARIABLE precompiled)
    target_precompile_headers(tablio_compiled INTERFACE ${precompiled})
  endif()
endfunction()
