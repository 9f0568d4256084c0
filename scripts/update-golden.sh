#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerates the golden files under tests/golden from the current build's output.
# Review the diff (git diff tests/golden) before committing: a golden file is a promise.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
cmake --build "$BUILD"
(cd "$BUILD" && TK_UPDATE_GOLDEN=1 ctest -L golden --output-on-failure "$@")
git status --short tests/golden
