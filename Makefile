# SPDX-License-Identifier: MIT
# The project's entry points. Each installs the Debian packages it needs first.
#   make demo    record a real program, print and convert its trace
#   make check   build and pass every test (also sanitizer builds and fuzz smoke runs)
#   make bench   benchmarks, each figure beside its anchor measured in the same run
#   make build / install / clean
BUILD ?= build
PREFIX ?= /usr/local
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build deps demo check bench install clean

all: build

deps:
	@scripts/setup-deps.sh build

build: deps
	@cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

check:
	@scripts/setup-deps.sh check
	@scripts/check.sh

bench:
	@scripts/setup-deps.sh bench
	@scripts/bench.sh

install: build
	@cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) build-* demo-out
