# Compile-error tests. Each snippet here compiles as it is, and fails to compile when
# TABLIO_EXPECT_ERROR is defined, with the message of its "// expected error: " line as the
# first error the compiler gives: the library's own message, not the noise that would follow.
# A "// flags with TABLIO_EXPECT_ERROR: " line adds compiler flags to that second compilation.
#   cmake -DCXX=g++ -DINCLUDE_DIRS="dir1|dir2" -DSNIPPETS=tests/compile_errors -P run.cmake
string(REPLACE "|" ";" include_dirs "${INCLUDE_DIRS}")
set(flags -std=c++20 -fsyntax-only)
foreach(dir ${include_dirs})
  list(APPEND flags -I${dir})
endforeach()

file(GLOB snippets ${SNIPPETS}/*.cpp)
if(NOT snippets)
  message(FATAL_ERROR "no snippets in ${SNIPPETS}")
endif()
foreach(snippet ${snippets})
  get_filename_component(name ${snippet} NAME)
  file(STRINGS ${snippet} expected REGEX "^// expected error: ")
  string(REPLACE "// expected error: " "" expected "${expected}")
  if(expected STREQUAL "")
    message(SEND_ERROR "${name}: no '// expected error: ' line")
    continue()
  endif()
  # The snippet itself compiles: what fails below is the one thing TABLIO_EXPECT_ERROR changes.
  execute_process(COMMAND ${CXX} ${flags} ${snippet} RESULT_VARIABLE rc ERROR_VARIABLE out OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "${name} does not compile without TABLIO_EXPECT_ERROR:\n${out}")
    continue()
  endif()
  file(STRINGS ${snippet} extra REGEX "^// flags with TABLIO_EXPECT_ERROR: ")
  string(REPLACE "// flags with TABLIO_EXPECT_ERROR: " "" extra "${extra}")
  separate_arguments(extra UNIX_COMMAND "${extra}")
  execute_process(COMMAND ${CXX} ${flags} ${extra} -DTABLIO_EXPECT_ERROR ${snippet} RESULT_VARIABLE rc
                  ERROR_VARIABLE out OUTPUT_VARIABLE out)
  string(REGEX MATCH "[^\n]*error: [^\n]*" first "${out}")
  string(FIND "${first}" "${expected}" at)
  if(rc EQUAL 0)
    message(SEND_ERROR "${name} compiles with TABLIO_EXPECT_ERROR")
  elseif(at EQUAL -1)
    message(SEND_ERROR "${name}: the first error is not '${expected}' but\n${first}\n\n${out}")
  else()
    message(STATUS "${name}: ${first}")
  endif()
endforeach()
