# Fails when docs/op-coverage.md differs from `tessel coverage --markdown`.
execute_process(COMMAND ${TESSEL} coverage --markdown OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessel coverage --markdown failed with ${rc}")
endif()
file(READ ${DOC} committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "docs/op-coverage.md is stale: regenerate it with "
                      "`build/tessel coverage --markdown > docs/op-coverage.md`")
endif()
message(STATUS "docs/op-coverage.md matches the claim tables")
