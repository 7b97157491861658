# Warnings are errors in our own targets only (stipple_warnings), never in generated code.
add_library(stipple_warnings INTERFACE)
target_compile_options(stipple_warnings INTERFACE -Wall -Wextra -Wno-unused-parameter)
