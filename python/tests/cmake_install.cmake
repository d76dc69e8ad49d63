# cmake --install puts the package under the prefix where the interpreter looks; it works.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK} --component python RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${WORK}/${SITE} ${PYTHON}
                        ${CMAKE_CURRENT_LIST_DIR}/smoke.py ${WORK}/${SITE}
                WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed package does not work: ${rc}")
endif()
