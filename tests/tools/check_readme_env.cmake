# README.md's table of environment variables must be the registry's (xffl-run --help-env=markdown).
# cmake -DXFFL_RUN=<xffl-run> -DREADME=<README.md> -P check_readme_env.cmake
execute_process(COMMAND ${XFFL_RUN} --help-env=markdown OUTPUT_VARIABLE table RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xffl-run --help-env=markdown exited ${rc}")
endif()
file(READ ${README} readme)
set(begin "<!-- xffl-run --help-env=markdown: begin -->\n")
set(end "<!-- xffl-run --help-env=markdown: end -->")
string(FIND "${readme}" "${begin}" at_begin)
string(FIND "${readme}" "${end}" at_end)
if(at_begin EQUAL -1 OR at_end EQUAL -1)
  message(FATAL_ERROR "README.md lacks the markers of the environment table:\n${begin}${end}")
endif()
string(LENGTH "${begin}" begin_length)
math(EXPR start "${at_begin} + ${begin_length}")
math(EXPR length "${at_end} - ${start}")
string(SUBSTRING "${readme}" ${start} ${length} copy)
if(NOT copy STREQUAL table)
  message(FATAL_ERROR "README.md's environment table differs from the registry (src/bootstrap/env_registry.cpp).\n"
                      "Run scripts/update-readme-env.sh BUILD_DIR, or edit the registry.\n"
                      "--- registry (xffl-run --help-env=markdown):\n${table}--- README.md:\n${copy}")
endif()
