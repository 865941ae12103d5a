# Included by bindings/fortran/CMakeLists.txt (the example needs the Fortran modules built there).
# Outside this tree, against an installed xffl:
#   gfortran -I<prefix>/include/xffl/fortran plan_and_average.f90 -L<prefix>/lib -lxffl_fortran -lxffl
add_executable(xffl_example_fortran ${CMAKE_CURRENT_LIST_DIR}/plan_and_average.f90)
target_link_libraries(xffl_example_fortran PRIVATE xffl_fortran)
set_target_properties(xffl_example_fortran PROPERTIES
  Fortran_MODULE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/example_modules)
if(BUILD_TESTING)
  # The example must run as a 1-rank world and print the plan and the (unchanged) averaged model.
  add_test(NAME bindings.fortran.example COMMAND xffl_example_fortran)
  set_tests_properties(bindings.fortran.example PROPERTIES LABELS bindings TIMEOUT 60
    ENVIRONMENT "RANK=0;WORLD_SIZE=1;XFFL_BACKEND=none"
    PASS_REGULAR_EXPRESSION "xFFL Distributed Setup.*rank 0 \\(federated group 0\\) averaged model: +1\\.000 +2\\.000 +3\\.000 +4\\.000")
endif()
