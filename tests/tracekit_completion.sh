#!/bin/bash
# SPDX-License-Identifier: MIT
# tracekit's bash completion: commands, convert's formats, stats' options.
# usage: tracekit_completion.sh COMPLETION_SCRIPT
set -u
. "$1"
fail=0
complete_words() { # expected words...
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_tracekit
	if [ "${COMPREPLY[*]}" != "$*" ]; then
		echo "completing '${COMP_WORDS[*]}': got '${COMPREPLY[*]}', expected '$*'"
		fail=1
	fi
}
COMP_WORDS=(tracekit c); complete_words convert
COMP_WORDS=(tracekit ''); complete_words record print convert stats info help --help --version
COMP_WORDS=(tracekit convert --to=p); complete_words --to=perfetto --to=pftrace --to=perfetto-trace
COMP_WORDS=(tracekit convert --to=d); complete_words --to=db
COMP_WORDS=(tracekit convert --to=sq); complete_words --to=sqlite --to=sqlite3
COMP_WORDS=(tracekit stats --format=); complete_words --format=text --format=csv --format=json
COMP_WORDS=(tracekit help s); complete_words stats
COMP_WORDS=(tracekit print -t ''); complete_words lsb cycles ns
COMP_WORDS=(tracekit convert --no-s); complete_words --no-symbols
COMP_WORDS=(tracekit print --sy); complete_words --symbols
COMP_WORDS=(tracekit r); complete_words record
COMP_WORDS=(tracekit help r); complete_words record
COMP_WORDS=(tracekit record -c THREAD,PR); complete_words THREAD,PROCESS
COMP_WORDS=(tracekit record -F ''); complete_words 0 1 2 3 4 5 6
COMP_WORDS=(tracekit record --f); complete_words --freq=
COMP_WORDS=(tracekit record -f t.kev -- tracekit_no_such_command_); complete_words
exit $fail
