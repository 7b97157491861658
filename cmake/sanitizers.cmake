# ASan + UBSan for the whole build when STIPPLE_SANITIZE is on. tests/run.sh builds one
# such tree and runs the language, evaluator and image tests in it.
if(STIPPLE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
