#!/bin/sh
# SPDX-License-Identifier: MIT
# <sys/neutrino.h> (compat): ThreadCtl(_NTO_TCTL_IO, 0) and _NTO_TCTL_IO_PRIV succeed doing
# nothing (they only ask for I/O privileges, which a user-space recorder does not need);
# every other command fails with -1 and errno ENOTSUP, ThreadCtl_r() with -ENOTSUP. The
# header compiles with the QNX program's includes as C11 with every warning an error.
# usage: tutorial_threadctl.sh CC COMPAT_INCLUDE_DIR INCLUDE_DIR
set -eu
cc=$1 compat=$2 inc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/t.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <sys/neutrino.h>
#include <sys/neutrino.h>
#include <sys/trace.h>

static int fails;
#define CHECK(c) do { if (!(c)) { printf("FAILED: %s\n", #c); fails++; } } while (0)

int main(void)
{
	errno = 0;
	CHECK(ThreadCtl(_NTO_TCTL_IO, 0) == EOK);
	CHECK(ThreadCtl(_NTO_TCTL_IO, (void *)&fails) == 0);
	CHECK(ThreadCtl(_NTO_TCTL_IO_PRIV, 0) == 0);
	CHECK(errno == 0);
	CHECK(ThreadCtl_r(_NTO_TCTL_IO, 0) == EOK);
	CHECK(ThreadCtl(2, 0) == -1 && errno == ENOTSUP);
	errno = 0;
	CHECK(ThreadCtl(-1, 0) == -1 && errno == ENOTSUP);
	errno = 0;
	CHECK(ThreadCtl_r(4, 0) == -ENOTSUP && errno == 0);
	CHECK(EOK == 0);
	return fails != 0;
}
C
"$cc" -std=c11 -Wall -Wextra -Werror -pedantic -I"$compat" -I"$inc" -c "$tmp/t.c" -o "$tmp/t.o"
# the test program needs nothing of the libraries: ThreadCtl() is inline
"$cc" "$tmp/t.o" -o "$tmp/t"
"$tmp/t"
echo "ThreadCtl: _NTO_TCTL_IO and _NTO_TCTL_IO_PRIV granted, other commands ENOTSUP"
