# stipple_add_test(NAME SOURCES a.cpp b.cpp LIBS lib1 lib2 [LABELS l1 l2] [RUN_SERIAL])
# One GoogleTest executable; each TEST becomes a ctest case with the given labels.
# RUN_SERIAL: ctest runs each of its cases alone (tests whose assertions compare run times,
# which another test on the other core can swing by 2x).
# STIPPLE_SOURCE_DIR points at the repository so tests find datasets/ and fixtures.
function(stipple_add_test name)
  cmake_parse_arguments(T "RUN_SERIAL" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main stipple_warnings)
  target_compile_definitions(${name} PRIVATE STIPPLE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  # T_RUN_SERIAL is TRUE or FALSE; it goes first, as an empty LABELS value would swallow
  # the key after it.
  gtest_discover_tests(${name} PROPERTIES RUN_SERIAL ${T_RUN_SERIAL} LABELS "${T_LABELS}"
                       DISCOVERY_TIMEOUT 60)
endfunction()
