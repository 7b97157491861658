# The hand-written schedules beside the benchmark pipelines (datasets/pipelines/*.sched):
# each parses, passes the schedule checker and round-trips through the printer.
# Included by tests/datasets/CMakeLists.txt.
if(TARGET stipple_schedule AND TARGET stipple_language)
  stipple_add_test(hand_schedules_test
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/schedules_test.cpp
    LIBS stipple_schedule stipple_language
    LABELS asan)
endif()
