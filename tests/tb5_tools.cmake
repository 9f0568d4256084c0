# SPDX-License-Identifier: MIT
# Golden and integration tests of the TBRW tools (print_tb5, tbrw_reader, tbrw_writer,
# tb5_recover) and the TBRW examples, included at the end of tests/CMakeLists.txt.
# Their own work directory (golden-tb5) is filled by the tb5_samples fixture
# (gen_tb5_samples.sh: the examples' files, a larger file, broken files and .dat files).
# Regenerate the golden files with scripts/update-golden.sh (ctest -L golden).
# It also registers the library's own tests: test_tb5 (unit, and "threads" for its
# concurrent writers) and the C++ compile test of the public TBRW headers.

tk_unit_test(test_tb5)
set_tests_properties(test_tb5 PROPERTIES LABELS "unit;threads")

# The seed's examples are C++: the TBRW headers must compile as C++ and link with C linkage
# (with a C++ compiler on the machine; under the sanitizers only compiled, as their runtimes
# would have to be linked in too).
find_program(TK_CXX NAMES g++ clang++ c++)
if(TK_CXX)
  set(cxx_flags -std=c++11 -Wall -Wextra -Werror -I${PROJECT_SOURCE_DIR}/include)
  set(cxx_src ${CMAKE_CURRENT_SOURCE_DIR}/cxx/tbrw_cxx.cpp)
  set(cxx_out ${CMAKE_CURRENT_BINARY_DIR}/tbrw_cxx)
  if(TK_SANITIZE)
    add_test(NAME tbrw_headers_cxx COMMAND ${TK_CXX} ${cxx_flags} -c ${cxx_src} -o ${cxx_out}.o)
  else()
    add_test(NAME tbrw_headers_cxx
             COMMAND sh -c "\"$0\" \"$@\" && ${cxx_out}" ${TK_CXX} ${cxx_flags} ${cxx_src} -o ${cxx_out}
                     $<TARGET_FILE:tracekit_formats> $<TARGET_FILE:tracekit_core>
                     -Wl,-rpath,$<TARGET_FILE_DIR:tracekit_formats>)
  endif()
  set_tests_properties(tbrw_headers_cxx PROPERTIES LABELS "unit" TIMEOUT 120)
endif()

if(NOT TK_BUILD_TOOLS OR NOT TARGET tbrw_vtune_file OR NOT TARGET tbrw_usage)
  return()
endif()

set(TK_WORK_SAVED ${TK_WORK})
set(TK_WORK ${CMAKE_CURRENT_BINARY_DIR}/golden-tb5)

set(PT $<TARGET_FILE:print_tb5>)
set(RD $<TARGET_FILE:tbrw_reader>)
set(WR $<TARGET_FILE:tbrw_writer>)
set(RC $<TARGET_FILE:tb5_recover>)

add_test(NAME golden_tb5_samples
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/gen_tb5_samples.sh $<TARGET_FILE:tbrw_vtune_file>
                 $<TARGET_FILE:tbrw_usage> ${WR} ${TK_WORK})
set_tests_properties(golden_tb5_samples PROPERTIES FIXTURES_SETUP tb5_samples LABELS "golden")

# tk_golden() in the tb5 work directory, after its fixture.
function(tk_tb5_golden name)
  tk_golden(NAME ${name} ${ARGN})
  set_tests_properties(golden_${name} PROPERTIES FIXTURES_REQUIRED tb5_samples)
endfunction()

# ---- print_tb5 ----
foreach(s vtune usage)
  tk_tb5_golden(print_tb5_${s} STDOUT tb5/print_${s}.txt COMMAND ${PT} ${s}.tb5)
endforeach()
tk_tb5_golden(print_tb5_limit STDOUT tb5/print_many_n3.txt COMMAND ${PT} -n 3 many.tb5)
tk_tb5_golden(print_tb5_stream STDOUT tb5/print_many_s1.txt COMMAND ${PT} --stream=1 --hex many.tb5)
tk_tb5_golden(print_tb5_bind STDOUT tb5/print_vtune_bind.txt COMMAND ${PT} --bind vtune.tb5)
tk_tb5_golden(print_tb5_bind_none STDOUT tb5/print_many_bind.txt COMMAND ${PT} -b -n 1 -s 1 many.tb5)
tk_tb5_golden(print_tb5_no_data STDOUT tb5/print_vtune_no_data.txt COMMAND ${PT} --no-data vtune.tb5)
tk_tb5_golden(print_tb5_stdin STDOUT tb5/print_vtune.txt STDIN ${TK_WORK}/vtune.tb5 COMMAND ${PT} -)
tk_tb5_golden(print_tb5_output FILE out_vtune.txt=${TK_GOLDEN}/tb5/print_vtune.txt ABSENT out_vtune.txt.part
              COMMAND ${PT} -o out_vtune.txt vtune.tb5)
tk_tb5_golden(print_tb5_output_error STDERR tb5/print_tb5_flipped.err STATUS 1 ABSENT out_flipped.txt out_flipped.txt.part
              COMMAND ${PT} -o out_flipped.txt flipped.tb5)
tk_tb5_golden(print_tb5_no_such_stream STDERR tb5/print_tb5_no_such_stream.err STATUS 1 COMMAND ${PT} -s 2 many.tb5)
tk_tb5_golden(print_tb5_help STDOUT tb5/print_tb5_help.txt COMMAND ${PT} --help)
tk_tb5_golden(print_tb5_missing STDERR tb5/print_tb5_missing.err STATUS 1 COMMAND ${PT} no-such-file.tb5)
foreach(s not_a_tb5 empty truncated flipped)
  tk_tb5_golden(print_tb5_${s} STDERR tb5/print_tb5_${s}.err STATUS 1 COMMAND ${PT} ${s}.tb5)
endforeach()
tk_tb5_golden(print_tb5_bad_option STDERR tb5/print_tb5_bad_option.err STATUS 2 COMMAND ${PT} --frobnicate x.tb5)
tk_tb5_golden(print_tb5_bad_limit STDERR tb5/print_tb5_bad_limit.err STATUS 2 COMMAND ${PT} -n many x.tb5)
tk_tb5_golden(print_tb5_no_input STDERR tb5/print_tb5_no_input.err STATUS 2 COMMAND ${PT})

# ---- tbrw_reader ----
foreach(s vtune usage)
  tk_tb5_golden(tbrw_reader_${s} FILE out_${s}.dat=${TK_GOLDEN}/tb5/${s}.dat ABSENT out_${s}.dat.part
                COMMAND ${RD} ${s}.tb5 out_${s}.dat)
endforeach()
tk_tb5_golden(tbrw_reader_stdout STDOUT tb5/vtune.dat COMMAND ${RD} vtune.tb5 -)
tk_tb5_golden(tbrw_reader_truncated STDERR tb5/tbrw_reader_truncated.err STATUS 1
              ABSENT out_truncated.dat out_truncated.dat.part COMMAND ${RD} truncated.tb5 out_truncated.dat)
tk_tb5_golden(tbrw_reader_flipped STDERR tb5/tbrw_reader_flipped.err STATUS 1
              ABSENT out_flipped.dat out_flipped.dat.part COMMAND ${RD} flipped.tb5 out_flipped.dat)
tk_tb5_golden(tbrw_reader_missing STDERR tb5/tbrw_reader_missing.err STATUS 1 COMMAND ${RD} no-such-file.tb5 x.dat)
tk_tb5_golden(tbrw_reader_bad_args STDERR tb5/tbrw_reader_usage.err STATUS 2 COMMAND ${RD} vtune.tb5)
tk_tb5_golden(tbrw_reader_help STDOUT tb5/tbrw_reader_help.txt COMMAND ${RD} --help)
# A full output device is an output error, named as such, not a library failure.
if(EXISTS /dev/full)
  tk_tb5_golden(tbrw_reader_full STDERR tb5/tbrw_reader_full.err STATUS 1
                COMMAND sh -c "${RD} many.tb5 - > /dev/full")
  tk_tb5_golden(print_tb5_full STDERR tb5/print_tb5_full.err STATUS 1 COMMAND sh -c "${PT} many.tb5 > /dev/full")
endif()

# ---- tbrw_writer: round trips (print_tb5 of both files identical) and bad .dat files ----
foreach(s vtune usage many)
  add_test(NAME tb5_round_trip_${s}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tb5_round_trip.sh ${PT} ${RD} ${WR} ${TK_WORK}/${s}.tb5
                   ${TK_WORK}/rt_${s})
  set_tests_properties(tb5_round_trip_${s} PROPERTIES FIXTURES_REQUIRED tb5_samples LABELS "golden" TIMEOUT 300)
endforeach()
# Bound files: the bind result and a derived process/thread section survive the round trip.
add_test(NAME tb5_round_trip_bound
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tb5_bind_round_trip.sh ${PT} ${RD} ${WR} ${TK_WORK}/vtune.tb5
                 ${TK_WORK}/rtb ${CMAKE_CURRENT_SOURCE_DIR}/tb5_round_trip.sh)
set_tests_properties(tb5_round_trip_bound PROPERTIES FIXTURES_REQUIRED tb5_samples LABELS "golden" TIMEOUT 300)
# Every section and record kind, read back exactly as written (the .dat file is its own golden).
tk_tb5_golden(tbrw_writer_all_sections FILE out_all.dat=${TK_GOLDEN}/tb5/all_sections.dat ABSENT all.tb5.part
              COMMAND sh -c "${WR} ${TK_GOLDEN}/tb5/all_sections.dat all.tb5 && ${RD} all.tb5 out_all.dat")
add_test(NAME tb5_round_trip_all_sections
         COMMAND sh -c "${WR} ${TK_GOLDEN}/tb5/all_sections.dat ${TK_WORK}/rt_all_in.tb5 && sh ${CMAKE_CURRENT_SOURCE_DIR}/tb5_round_trip.sh ${PT} ${RD} ${WR} ${TK_WORK}/rt_all_in.tb5 ${TK_WORK}/rt_all")
set_tests_properties(tb5_round_trip_all_sections PROPERTIES FIXTURES_REQUIRED tb5_samples LABELS "golden" TIMEOUT 300)
tk_tb5_golden(tbrw_writer_stdin STDOUT tb5/print_vtune.txt STDIN ${CMAKE_CURRENT_SOURCE_DIR}/golden/tb5/vtune.dat
              COMMAND sh -c "${WR} - stdin.tb5 && ${PT} stdin.tb5")
foreach(s bad_field missing_field bad_hex bad_nesting out_of_range unterminated not_a_dat stream_gap size_mismatch)
  tk_tb5_golden(tbrw_writer_${s} STDERR tb5/tbrw_writer_${s}.err STATUS 1 ABSENT out_${s}.tb5 out_${s}.tb5.part
                COMMAND ${WR} ${s}.dat out_${s}.tb5)
endforeach()
foreach(s derived_late bind_early bind_count)
  tk_tb5_golden(tbrw_writer_${s} STDERR tb5/tbrw_writer_${s}.err STATUS 1 ABSENT out_${s}.tb5 out_${s}.tb5.part
                COMMAND ${WR} ${s}.dat out_${s}.tb5)
endforeach()
tk_tb5_golden(tbrw_writer_missing STDERR tb5/tbrw_writer_missing.err STATUS 1 ABSENT out_missing.tb5
              COMMAND ${WR} no-such-file.dat out_missing.tb5)
tk_tb5_golden(tbrw_writer_bad_args STDERR tb5/tbrw_writer_usage.err STATUS 2 COMMAND ${WR} a.dat)
tk_tb5_golden(tbrw_writer_help STDOUT tb5/tbrw_writer_help.txt COMMAND ${WR} --help)

# Issue 10 item 6: descriptors both at offset 0 (chapter 6) are reported where the records hold them.
add_test(NAME tb5_chapter6_offsets
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tb5_chapter6_offsets.sh ${PT} ${RD} ${WR} ${TK_GOLDEN}/tb5
                 ${TK_WORK}/ch6_offsets)
set_tests_properties(tb5_chapter6_offsets PROPERTIES FIXTURES_REQUIRED tb5_samples LABELS "golden" TIMEOUT 120)

# Issue 10 item 32: a FIFO as input is refused at once, not waited on.
add_test(NAME tb5_fifo_input COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tb5_fifo_input.sh ${PT} ${RD} ${RC} ${TK_WORK})
set_tests_properties(tb5_fifo_input PROPERTIES FIXTURES_REQUIRED tb5_samples LABELS "golden" TIMEOUT 120)

# Issue 10 item 26: the input shrinks while print_tb5 reads it: an error, not SIGBUS.
add_test(NAME tb5_shrink_while_read
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tb5_shrink_while_read.sh ${PT} ${TK_WORK}/many.tb5 ${TK_WORK})
set_tests_properties(tb5_shrink_while_read PROPERTIES FIXTURES_REQUIRED tb5_samples LABELS "golden" TIMEOUT 120)

# ---- tb5_recover ----
tk_tb5_golden(tb5_recover_truncated STDOUT tb5/print_recovered.txt STDERR tb5/tb5_recover_truncated.err
              ABSENT recovered.tb5.part
              COMMAND sh -c "${RC} truncated.tb5 recovered.tb5 && ${PT} -n 2 recovered.tb5")
tk_tb5_golden(tb5_recover_complete STDOUT tb5/print_vtune.txt STDERR tb5/tb5_recover_complete.err
              COMMAND sh -c "${RC} vtune.tb5 recovered_vtune.tb5 && ${PT} recovered_vtune.tb5")
tk_tb5_golden(tb5_recover_quiet STDOUT tb5/print_recovered.txt
              COMMAND sh -c "${RC} -q truncated.tb5 recovered_q.tb5 && ${PT} -n 2 recovered_q.tb5")
tk_tb5_golden(tb5_recover_not_a_tb5 STDERR tb5/tb5_recover_not_a_tb5.err STATUS 1 ABSENT out_nat.tb5
              COMMAND ${RC} not_a_tb5.tb5 out_nat.tb5)
tk_tb5_golden(tb5_recover_missing STDERR tb5/tb5_recover_missing.err STATUS 1 COMMAND ${RC} no-such-file.tb5 x.tb5)
tk_tb5_golden(tb5_recover_bad_args STDERR tb5/tb5_recover_usage.err STATUS 2 COMMAND ${RC} truncated.tb5)
# Issue 10 item 18: past a damaged chunk, the stretch reported.
add_test(NAME tb5_recover_damage COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tb5_recover_damage.sh ${RC} ${PT} ${TK_WORK})
set_tests_properties(tb5_recover_damage PROPERTIES FIXTURES_REQUIRED tb5_samples LABELS "golden" TIMEOUT 120)
tk_tb5_golden(tb5_recover_help STDOUT tb5/tb5_recover_help.txt COMMAND ${RC} --help)

# ---- the examples' own output ----
tk_tb5_golden(example_tbrw_vtune_file STDOUT tb5/example_tbrw_vtune_file.txt
              COMMAND sh -c "$<TARGET_FILE:tbrw_vtune_file> ex_vtune.tb5 && ${PT} ex_vtune.tb5")
tk_tb5_golden(example_tbrw_usage STDOUT tb5/print_usage.txt
              COMMAND sh -c "$<TARGET_FILE:tbrw_usage> ex_usage.tb5 && ${PT} ex_usage.tb5")

set(TK_WORK ${TK_WORK_SAVED})
