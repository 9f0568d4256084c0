#!/bin/sh
# SPDX-License-Identifier: MIT
# Checks a traceprinter output against the lines of a sample result file from the QNX
# SAT guide (the seed), ignoring differences in runs of white space (the guide's layout
# was lost in typesetting). Every seed line must appear, in order.
# In the seed file, "# ..." lines are comments and "#= LINE" lines replace the seed line
# just above them with the QNX 6.4 (traceprinter 1.02) form where the guide's older
# printer differed; every such replacement carries a comment saying why.
# usage: seed_compare.sh OUTPUT SEED_LINES
set -eu
norm() { sed -e 's/[[:space:]][[:space:]]*/ /g' -e 's/^ //' -e 's/ $//'; }
out=$(mktemp)
want=$(mktemp)
trap 'rm -f "$out" "$want"' EXIT
norm <"$1" >"$out"
awk '
	/^#= / { if (n > 0) { if (!replaced) n--; replaced = 1 } line[++n] = substr($0, 4); next }
	/^#/ { next }
	{ line[++n] = $0; replaced = 0 }
	END { for (i = 1; i <= n; i++) print line[i] }
' "$2" | norm >"$want"
awk -v wantfile="$want" '
	BEGIN { while ((getline l < wantfile) > 0) want[++nw] = l; i = 1 }
	i <= nw && $0 == want[i] { i++ }
	END {
		if (i <= nw) { printf "seed line %d not found in order: %s\n", i, want[i]; exit 1 }
		printf "all %d seed lines found\n", nw
	}
' "$out"
