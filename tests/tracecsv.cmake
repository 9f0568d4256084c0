# SPDX-License-Identifier: MIT
# tracecsv and the csv module (issue 13): the unit test, the fuzz target's corpus replay is
# registered with the other fuzz targets; here the golden tests of the tool. Inputs are the
# CSV files of golden/tracecsv/input (Intel's published examples among them), copied into
# the sample directory by the csv_inputs fixture. Regenerate with scripts/update-golden.sh.
tk_unit_test(test_csv)

if(TK_BUILD_TOOLS)
  set(TC $<TARGET_FILE:tracecsv>)
  set(TP $<TARGET_FILE:traceprinter>)
  set(PT $<TARGET_FILE:print_tb5>)
  set(G ${TK_GOLDEN}/tracecsv)
  add_test(NAME golden_tracecsv_inputs
           COMMAND ${CMAKE_COMMAND} -E copy_directory ${CMAKE_CURRENT_SOURCE_DIR}/golden/tracecsv/input ${TK_WORK}/csv)
  set_tests_properties(golden_tracecsv_inputs PROPERTIES FIXTURES_SETUP csv_inputs FIXTURES_REQUIRED samples
                       LABELS "golden")
  # Fixed dates and time zone: the .kev header's DATE lines.
  function(tk_csv_golden name)
    tk_golden(NAME tracecsv_${name} ${ARGN})
    set_tests_properties(golden_tracecsv_${name} PROPERTIES FIXTURES_REQUIRED "samples;csv_inputs"
                         ENVIRONMENT "TZ=UTC;SOURCE_DATE_EPOCH=1377651723;VTUNE_HOSTNAME=vthost")
  endfunction()

  # Intel's examples: CSV -> .kev -> traceprinter, and back to CSV
  foreach(ex phases utcexample tscexample)
    tk_csv_golden(${ex}_kev STDOUT tracecsv/${ex}_kev.txt
                  COMMAND sh -c "mkdir -p csv/${ex} && \"$0\" import --tsc-hz 2400000000 -o csv/${ex}/t.kev csv/${ex}-hostname-octagon53.csv && \"$1\" csv/${ex}/t.kev"
                          ${TC} ${TP})
    tk_csv_golden(${ex}_export
                  FILE csv/${ex}e/t-intervals-hostname-octagon53.csv=${G}/${ex}_intervals.csv
                  COMMAND sh -c "mkdir -p csv/${ex}e && \"$0\" import --tsc-hz 2400000000 -o csv/${ex}e/t.kev csv/${ex}-hostname-octagon53.csv && \"$0\" export -o csv/${ex}e csv/${ex}e/t.kev"
                          ${TC})
  endforeach()
  # counters of both kinds, several per file, quoted names, pid/tid as empty values
  tk_csv_golden(counters_kev STDOUT tracecsv/counters_kev.txt
                COMMAND sh -c "mkdir -p csv/ck && \"$0\" import -o csv/ck/t.kev csv/power-hostname-octagon53.csv && \"$1\" csv/ck/t.kev" ${TC} ${TP})
  tk_csv_golden(counters_export
                FILE csv/ce/t-counters-hostname-octagon53.csv=${G}/counters.csv
                FILE csv/ce/t-intervals-hostname-octagon53.csv=${G}/counters_intervals.csv
                COMMAND sh -c "mkdir -p csv/ce && \"$0\" import -o csv/ce/t.kev csv/power-hostname-octagon53.csv && \"$0\" export -o csv/ce csv/ce/t.kev" ${TC})
  # several files merged in time order; RFC 4180 quoting survives
  tk_csv_golden(merge STDOUT tracecsv/merge.txt
                FILE csv/mg/t-intervals-hostname-h.csv=${G}/merge_intervals.csv
                COMMAND sh -c "mkdir -p csv/mg && \"$0\" import -o csv/mg/t.kev csv/quoting-hostname-h.csv csv/second-hostname-h.csv && \"$1\" csv/mg/t.kev && \"$0\" export -o csv/mg csv/mg/t.kev" ${TC} ${TP})
  # CSV -> .tb5 -> print_tb5, and back
  tk_csv_golden(tb5 STDOUT tracecsv/tb5.txt
                FILE csv/tb/t-intervals-hostname-octagon53.csv=${G}/phases_intervals.csv
                FILE csv/tc/c-counters-hostname-octagon53.csv=${G}/counters.csv
                COMMAND sh -c "mkdir -p csv/tb csv/tc && \"$0\" import -o csv/tb/t.tb5 csv/phases-hostname-octagon53.csv && \"$1\" csv/tb/t.tb5 && \"$0\" import -o csv/tc/c.tb5 csv/power-hostname-octagon53.csv && \"$1\" csv/tc/c.tb5 && \"$0\" export -o csv/tb csv/tb/t.tb5 && \"$0\" export -o csv/tc csv/tc/c.tb5"
                        ${TC} ${PT})
  # export -> import -> export gives identical files (.kev and .tb5, every example; and a trace
  # of kev_samples with NaN and infinite counter samples and names that are not UTF-8)
  add_test(NAME tracecsv_round_trip COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tracecsv_round_trip.sh ${TC}
           ${TK_WORK}/csv $<TARGET_FILE:kev_samples>)
  # its imports read ahead in a thread: ThreadSanitizer runs it too
  set_tests_properties(tracecsv_round_trip PROPERTIES FIXTURES_REQUIRED "samples;csv_inputs" LABELS "golden;threads"
                       ENVIRONMENT "TZ=UTC;SOURCE_DATE_EPOCH=1377651723")
  # audit regressions (issue 10): FIFO outputs, long records, out-of-range times, --host, diagnostics
  add_test(NAME tracecsv_audit COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tracecsv_audit.sh ${TC}
           ${CMAKE_CURRENT_SOURCE_DIR}/golden/tracecsv/input)
  set_tests_properties(tracecsv_audit PROPERTIES LABELS "golden" TIMEOUT 300)
  # merged into a trace of the recorder (needs the examples)
  if(TARGET worker_pool)
    add_test(NAME tracecsv_into_recorded COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tracecsv_into.sh ${TC} ${TP}
             $<TARGET_FILE:worker_pool> ${CMAKE_CURRENT_SOURCE_DIR}/golden/tracecsv/input)
    set_tests_properties(tracecsv_into_recorded PROPERTIES LABELS "golden" TIMEOUT 120)
  endif()
  # merged into an existing trace; export with another clock and host
  tk_csv_golden(into STDOUT tracecsv/into.txt
                FILE csv/in/t-counters-vthost.csv=${G}/into_counters.csv
                COMMAND sh -c "mkdir -p csv/in && \"$0\" import -o csv/in/t.kev --into smp.kev csv/power-hostname-octagon53.csv 2>&1 && \"$1\" csv/in/t.kev && \"$0\" import -o csv/in/u.kev csv/power-hostname-octagon53.csv && \"$0\" export --clock QPC --host vthost -o csv/in csv/in/u.kev && mv csv/in/u-counters-hostname-vthost.csv csv/in/t-counters-vthost.csv"
                        ${TC} ${TP})
  # bad input: file, line and column; exit 1; nothing under the output's name
  foreach(b header suffix fields number negative date end duplicate counter utf8 quote)
    tk_csv_golden(bad_${b} STDERR tracecsv/bad_${b}.err STATUS 1 ABSENT csv/bad_${b}.kev ABSENT csv/bad_${b}.kev.part
                  COMMAND ${TC} import -o csv/bad_${b}.kev csv/bad_${b}-hostname-h.csv)
  endforeach()
  tk_csv_golden(bad_tb5 STDERR tracecsv/bad_number.err STATUS 1 ABSENT csv/bad.tb5
                COMMAND ${TC} import -o csv/bad.tb5 csv/bad_number-hostname-h.csv)
  tk_csv_golden(nohost STDERR tracecsv/nohost.err COMMAND ${TC} import -o csv/nohost.kev csv/nohost.csv)
  # What export writes, import reads back (docs/vtune-csv.md, "Export"): names that are not
  # UTF-8 are read as Latin-1, NaN and infinite counter samples are left out; warned, exit 0
  set(KS $<TARGET_FILE:kev_samples>)
  tk_csv_golden(odd_export STDERR tracecsv/odd_export.err
                FILE csv/od/odd-intervals-hostname-octagon53.csv=${G}/odd_intervals.csv
                FILE csv/od/odd-counters-hostname-octagon53.csv=${G}/odd_counters.csv
                COMMAND sh -c "mkdir -p csv/od && \"$0\" csv_odd csv/od/odd.kev && \"$1\" export -o csv/od csv/od/odd.kev" ${KS} ${TC})
  # Malformed CSV events among valid ones: every valid interval and counter written, the first
  # bad event named with its byte offset, exit 3 (tracekit convert --to=csv passes it on)
  tk_csv_golden(bad_events STDERR tracecsv/bad_events.err STATUS 3
                FILE csv/be/bad-intervals-hostname-octagon53.csv=${G}/bad_events_intervals.csv
                FILE csv/be/bad-counters-hostname-octagon53.csv=${G}/bad_events_counters.csv
                COMMAND sh -c "mkdir -p csv/be && \"$0\" csv_bad csv/be/bad.kev && \"$1\" export -o csv/be csv/be/bad.kev" ${KS} ${TC})
  tk_csv_golden(bad_events_convert STDERR tracecsv/bad_events_convert.err STATUS 3
                FILE csv/bc3/bad-intervals-hostname-octagon53.csv=${G}/bad_events_intervals.csv
                COMMAND sh -c "mkdir -p csv/bc3 && \"$0\" csv_bad csv/bc3/bad.kev && \"$1\" convert --to=csv csv/bc3/bad.kev csv/bc3" ${KS} $<TARGET_FILE:tracekit_cmd>)
  # a trace cut midway: exported up to the damage, the damage's byte offset, exit 3
  tk_csv_golden(cut_export STDERR tracecsv/cut_export.err STATUS 3
                FILE csv/cu/cut-intervals-hostname-h.csv=${G}/cut_intervals.csv
                FILE csv/cu/cut-counters-hostname-h.csv=${G}/cut_counters.csv
                COMMAND sh -c "mkdir -p csv/cu && \"$0\" import -o csv/cu/t.kev csv/slices-hostname-h.csv csv/gauges-hostname-h.csv && dd if=csv/cu/t.kev of=csv/cu/cut.kev bs=1500 count=1 2>/dev/null && \"$0\" export -o csv/cu csv/cu/cut.kev" ${TC})
  # standard input: an unsorted file (read twice: streamed, then sorted), errors, export
  tk_csv_golden(stdin_bad STDERR tracecsv/stdin_bad.err STATUS 1 STDIN csv/bad_end-hostname-h.csv
                ABSENT csv/stdin_bad.kev COMMAND ${TC} import -o csv/stdin_bad.kev -)
  tk_csv_golden(stdin FILE csv/sd/stdin-intervals-hostname-vthost.csv=${G}/phases_intervals.csv
                STDIN csv/phases-hostname-octagon53.csv
                COMMAND sh -c "mkdir -p csv/sd && \"$0\" import -o csv/sd/t.kev - && \"$0\" export -o csv/sd - < csv/sd/t.kev" ${TC})
  tk_csv_golden(help STDOUT tracecsv/help.txt COMMAND ${TC} --help)
  tk_csv_golden(bad_option STDERR tracecsv/bad_option.err STATUS 2 COMMAND ${TC} import --frobnicate x.csv)
  tk_csv_golden(bad_clock STDERR tracecsv/bad_clock.err STATUS 2
                COMMAND sh -c "mkdir -p csv/bc && \"$0\" import -o csv/bc/t.kev csv/phases-hostname-octagon53.csv && \"$0\" export --clock FOO -o csv/bc csv/bc/t.kev" ${TC})
  tk_csv_golden(mixed_clocks STDERR tracecsv/mixed_clocks.err STATUS 1 ABSENT csv/mixed.kev
                COMMAND ${TC} import -o csv/mixed.kev csv/phases-hostname-octagon53.csv csv/power-hostname-octagon53.csv)

  # The CSV data in tracekit convert and stats (docs/vtune-csv.md): intervals as slices on
  # their thread (tasks that overlap without nesting on lanes of their own), frames of a
  # process and of none, counters with integer and double values. slices-hostname-h.csv
  # and gauges-hostname-h.csv imported into one trace, then each export.
  set(TKC $<TARGET_FILE:tracekit_cmd>)
  set(SL "\"$0\" import -o t.kev ../slices-hostname-h.csv ../gauges-hostname-h.csv")
  tk_csv_golden(slices_json STDOUT tracecsv/slices.json
                COMMAND sh -c "mkdir -p csv/slj && cd csv/slj && ${SL} && \"$1\" convert --to=json t.kev -" ${TC} ${TKC})
  if(TK_PYTHON3)
    add_test(NAME export_json_valid_tracecsv_slices COMMAND ${TK_PYTHON3} ${TK_JSON_CHECK} ${G}/slices.json)
    add_test(NAME export_stats_json_valid_tracecsv_slices COMMAND ${TK_PYTHON3} -m json.tool ${G}/slices.stats.json)
    set_tests_properties(export_json_valid_tracecsv_slices export_stats_json_valid_tracecsv_slices
                         PROPERTIES LABELS "golden")
  endif()
  foreach(f text csv json)
    tk_csv_golden(slices_stats_${f} STDOUT tracecsv/slices.stats.${f}
                  COMMAND sh -c "mkdir -p csv/sls${f} && cd csv/sls${f} && ${SL} && \"$1\" stats --format=${f} t.kev" ${TC} ${TKC})
  endforeach()
  if(TK_PROTOC)
    tk_csv_golden(slices_perfetto STDOUT tracecsv/slices.pftrace.txt
                  COMMAND sh -c "mkdir -p csv/slp && cd csv/slp && ${SL} && \"$1\" convert t.kev t.pftrace && \"$2\" --decode=perfetto.protos.Trace -I \"$3\" \"$3\"/perfetto_trace.proto <t.pftrace"
                          ${TC} ${TKC} ${TK_PROTOC} ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  if(TK_SQLITE3)
    tk_csv_golden(slices_sqlite STDOUT tracecsv/slices.db.txt
                  COMMAND sh -c "mkdir -p csv/sld && cd csv/sld && rm -f t.db && ${SL} && \"$1\" convert t.kev t.db && \"$2\" t.db 'SELECT * FROM slices ORDER BY id' 'SELECT * FROM counters ORDER BY rowid' 'SELECT pid, name, ts, typeof(value) FROM counters ORDER BY rowid' 'SELECT * FROM threads ORDER BY pid, tid' 'SELECT * FROM processes ORDER BY pid'"
                          ${TC} ${TKC} ${TK_SQLITE3})
  endif()
  # as a user would: Intel's example imported, converted, compared with tracecsv export
  if(TK_PYTHON3)
    add_test(NAME tracekit_vtune_csv
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tracekit_vtune_csv.sh $<TARGET_FILE_DIR:tracekit_cmd>
                     ${CMAKE_CURRENT_SOURCE_DIR}/golden/tracecsv/input ${TK_PYTHON3} ${TK_JSON_CHECK}
                     "${TK_PROTOC}" ${CMAKE_CURRENT_SOURCE_DIR} "${TK_SQLITE3}")
    set_tests_properties(tracekit_vtune_csv PROPERTIES LABELS "golden" TIMEOUT 120)
  endif()
  # bad input, as tracekit warns of it: a name event cut short (the bytes after vsync's c, NUL and padding, overwritten: so
  # its frame names no name), then the trace cut inside (intervals without an end)
  if(TK_PYTHON3)
    tk_csv_golden(slices_bad STDERR tracecsv/slices_bad.err STATUS 1
                  COMMAND sh -c "mkdir -p csv/slb && cd csv/slb && ${SL} && \"$2\" -c \"b = open('t.kev', 'rb').read()$<SEMICOLON> i = b.index(b'vsyn') + 13$<SEMICOLON> open('bad.kev', 'wb').write(b[:i] + b'x' * 7 + b[i + 7:])$<SEMICOLON> open('cut.kev', 'wb').write(b[:1500])\" && \"$1\" convert bad.kev bad.json && \"$1\" stats cut.kev > /dev/null"
                          ${TC} ${TKC} ${TK_PYTHON3})
  endif()
endif()
