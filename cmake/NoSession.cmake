# SPDX-License-Identifier: MIT
# tk_tests_outside_sessions(): every test of the calling directory that does not choose a
# session itself runs with TRACEKIT_SESSION empty, so that its programs attach to none
# (docs/sessions.md). Without it, a developer's live "default" session would record the tests'
# programs and disturb them (a program's tk_logger_start() then competes with the session).
# Tests that run tracelogger name their own session (-N or TRACEKIT_SESSION in the script).
function(tk_tests_outside_sessions)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    get_test_property(${t} ENVIRONMENT env)
    if(NOT env)
      set(env "")
    endif()
    if(NOT env MATCHES "TRACEKIT_SESSION=")
      set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT "TRACEKIT_SESSION=")
    endif()
  endforeach()
endfunction()
