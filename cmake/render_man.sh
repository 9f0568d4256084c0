#!/bin/sh
# SPDX-License-Identifier: MIT
# Renders a manual page from its Markdown source (docs/<tool>.md, docs/man3/<name>.md) with
# lowdown: the "# name(N)" title line (after any leading HTML comment) becomes the page
# header (.TH), the "## Section" headings become .SH sections in capitals. Lines are
# left-adjusted (.ad l: long code in tables made groff warn "cannot adjust line") and not
# hyphenated (.nh: identifiers stay whole); tables lose the rules between cells and keep 2
# ens between columns, so that the widest (tbrw_reader's) fits 80 columns.
# A `docs/X.md` named in the text becomes `DOCDIR/X.md`, where the installed documentation is.
# usage: render_man.sh LOWDOWN IN.md OUT NAME SECTION SOURCE [DOCDIR]
set -eu
lowdown=$1 in=$2 out=$3 name=$4 section=$5 source=$6 docdir=${7:-}
tmp=$out.tmp.$$
trap 'rm -f "$tmp" "$tmp.md" "$tmp.ad"' EXIT
title_line=$(awk '/^<!--.*-->$/ || /^$/ { next } { print NR; exit }' "$in")
first=$(sed -n "${title_line:-1}p" "$in")
case $first in
"# $name($section)"*) ;;
*)
	echo "render_man: $in: line ${title_line:-1}: expected the title '# $name($section)', found '$first'" >&2
	exit 1
	;;
esac
# Drop what precedes the title and the title; raise every heading one level (outside code
# blocks), the top level in capitals as manual pages spell them.
awk -v t="$title_line" -v docdir="$docdir" 'NR <= t { next }
     /^```/ { code = !code }
     !code && docdir != "" { gsub(/`docs\//, "`" docdir "/") }
     !code && /^## / { $0 = "# " toupper(substr($0, 4)) }
     !code && /^###/ { sub(/^#/, "") }
     { print }' "$in" >"$tmp.md"
"$lowdown" -s -Tman -M "title=$name" -M "section=$section" -M "source=$source" -M "volume=tracekit" \
	-o "$tmp" "$tmp.md"
awk '/^\.TS/ { ts = 1 }
     /^\.TE/ { ts = 0 }
     ts && /^tab\(/ { sub(/ allbox/, "") }
     ts && /^[lcr]b?( [lcr]b?)*\.?$/ {
	n = split($0, col, " ")
	line = ""
	for (i = 1; i <= n; i++) {
		spec = col[i]
		last = sub(/\.$/, "", spec)
		line = line (i > 1 ? " " : "") spec (i < n ? "2" : "") (last ? "." : "")
	}
	$0 = line
     }
     { print }
     /^\.TH / && !adjusted { print ".ad l"; print ".nh"; adjusted = 1 }' "$tmp" >"$tmp.ad"
mv "$tmp.ad" "$out"
