# SPDX-License-Identifier: MIT
# bash completion of tracekit(1): its commands, their options, and trace files.
# Installed as share/bash-completion/completions/tracekit.
_tracekit()
{
	local cur prev cmd
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	cmd=${COMP_WORDS[1]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "record print convert stats info help --help --version" -- "$cur"))
		return
	fi
	case $cmd in
	help)
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "record print convert stats info help" -- "$cur"))
		return
		;;
	convert)
		case $cur in
		--to=*) COMPREPLY=($(compgen -P --to= -W "json perfetto pftrace perfetto-trace sqlite db sqlite3 csv kev tb5 xml callgrind cgrind hdf5 h5" -- "${cur#--to=}")); return ;;
		-*) COMPREPLY=($(compgen -W "--to= --pair= --counter= --symbols --no-symbols --help" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
		esac
		;;
	stats)
		case $cur in
		--format=*) COMPREPLY=($(compgen -P --format= -W "text csv json" -- "${cur#--format=}")); return ;;
		-*) COMPREPLY=($(compgen -W "--format= --pair= --counter= --output= --help" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
		esac
		;;
	record)
		local i
		for ((i = 2; i < COMP_CWORD; i++)); do # after --: the traced command and its arguments
			if [ "${COMP_WORDS[i]}" = -- ]; then
				if [ $((i + 1)) -eq "$COMP_CWORD" ]; then
					COMPREPLY=($(compgen -c -- "$cur"))
				else
					COMPREPLY=($(compgen -f -- "$cur"))
				fi
				return
			fi
		done
		case $prev in
		-c) # comma-separated classes: complete the last one
			local head=${cur%,*} tail=${cur##*,}
			[ "$head" = "$cur" ] && head="" || head="$head,"
			COMPREPLY=($(compgen -P "$head" -W "THREAD PROCESS SYSTEM KERCALL INT USER" -- "$tail"))
			compopt -o nospace 2>/dev/null
			return
			;;
		-F) COMPREPLY=($(compgen -W "0 1 2 3 4 5 6" -- "$cur")); return ;;
		-p | -n | -s | -S | -b | -k | -A) return ;;
		esac
		case $cur in
		-*) COMPREPLY=($(compgen -W "-- -p -a -c -F -w -g --freq= -A -f -n -s -S -M -r -b -k -d1 -v --help --version" -- "$cur")); return ;;
		esac
		;;
	print)
		case $prev in
		-t) COMPREPLY=($(compgen -W "lsb cycles ns" -- "$cur")); return ;;
		esac
		case $cur in
		-*) COMPREPLY=($(compgen -W "-n -v -s -t -c -x -o -f -q --strict --symbols --help" -- "$cur")); return ;;
		esac
		;;
	esac
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _tracekit tracekit
