# pip installs the package from the source folder, offline, with Debian's setuptools and
# pybind11 (no build isolation), into a folder of its own; the installed package then works.
# pip builds in the folder it installs from: a copy of python/ beside the headers, which must
# be as it was afterwards.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/source)
file(COPY ${SOURCE} ${SOURCE}/../include ${SOURCE}/../src DESTINATION ${WORK}/source PATTERN build EXCLUDE
     PATTERN *.egg-info EXCLUDE)
# At -O0: what is checked here is the packaging (the optimised module is the build's, tested by
# the suite); the default -O2 build takes minutes.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env CFLAGS=-O0 ${PYTHON} -m pip install --no-build-isolation --no-deps --no-index --disable-pip-version-check
          --target ${WORK}/site ${WORK}/source/python
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pip install ./python failed: ${rc}")
endif()
# ... and leaves it as it was: no build folder, no egg-info.
file(GLOB left RELATIVE ${WORK}/source/python ${WORK}/source/python/build ${WORK}/source/python/*.egg-info)
if(left)
  message(FATAL_ERROR "pip install ./python left ${left} in the source folder")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${WORK}/site ${PYTHON} ${SOURCE}/tests/smoke.py ${WORK}/site
                WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the pip-installed package does not work: ${rc}")
endif()
