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
		COMPREPLY=($(compgen -W "print convert stats info help --help --version" -- "$cur"))
		return
	fi
	case $cmd in
	help)
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "print convert stats info help" -- "$cur"))
		return
		;;
	convert)
		case $cur in
		--to=*) COMPREPLY=($(compgen -P --to= -W "json perfetto sqlite" -- "${cur#--to=}")); return ;;
		-*) COMPREPLY=($(compgen -W "--to= --pair= --counter= --symbols --no-symbols --help" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
		esac
		;;
	stats)
		case $cur in
		--format=*) COMPREPLY=($(compgen -P --format= -W "text csv json" -- "${cur#--format=}")); return ;;
		-*) COMPREPLY=($(compgen -W "--format= --pair= --counter= --output= --help" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
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
