# cmake -DINPUT=<file> -DOUTPUT=<header> -DNAME=<identifier> -P embed_text.cmake
#
# Writes OUTPUT, a C++ header defining `inline constexpr const char NAME[]` as the text
# of INPUT in a raw string, so that a source file is compiled in one place and printed
# verbatim by another (the runtime's exp_f32 body, printed by the C++ source back end).
# The header is rewritten only when its text changes, so that nothing rebuilds needlessly.
if(NOT INPUT OR NOT OUTPUT OR NOT NAME)
  message(FATAL_ERROR "embed_text.cmake needs INPUT, OUTPUT and NAME")
endif()
file(READ "${INPUT}" text)
set(delimiter "stipple_embedded")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string's end, )${delimiter}\"")
endif()
get_filename_component(input_name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${input_name} by cmake/embed_text.cmake: edit that file, not this one.\n"
  "#pragma once\n\n"
  "inline constexpr const char ${NAME}[] = R\"${delimiter}(${text})${delimiter}\";\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
file(REMOVE "${OUTPUT}.tmp")
