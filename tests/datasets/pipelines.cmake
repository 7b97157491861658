# The benchmark pipelines' tests (datasets/pipelines/*.stp): each runs the reference
# evaluator on a small image and compares with an implementation written in the test.
# Included by tests/datasets/CMakeLists.txt.
if(TARGET stipple_language AND TARGET stipple_interp AND TARGET stipple_image)
  stipple_add_test(pipelines_perforation_test
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/pipelines_perforation_test.cpp
    LIBS stipple_language stipple_interp stipple_image
    LABELS pipelines)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/pipelines_halide_test.cpp)
    stipple_add_test(pipelines_halide_test
      SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/pipelines_halide_test.cpp
      LIBS stipple_language stipple_interp stipple_image
      LABELS pipelines)
  endif()
endif()
