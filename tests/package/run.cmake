# Builds and runs tests/package/consumer against tablio in MODE (find_package after an
# install to a temporary prefix, or add_subdirectory of the source tree).
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

if(MODE STREQUAL "find_package")
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/tablio-build -DCMAKE_CXX_COMPILER=${CXX}
      -DTABLIO_BUILD_TESTS=OFF -DTABLIO_BUILD_EXAMPLES=OFF -DTABLIO_BUILD_TOOLS=OFF
      -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/tablio-build)
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package -B ${WORK_DIR}/consumer-build
      -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DTABLIO_CONSUMER_MODE=find_package)
else()
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package -B ${WORK_DIR}/consumer-build
      -DCMAKE_CXX_COMPILER=${CXX} -DTABLIO_CONSUMER_MODE=add_subdirectory -DTABLIO_SOURCE_DIR=${SOURCE_DIR})
endif()
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-build)
run(${WORK_DIR}/consumer-build/consumer)
