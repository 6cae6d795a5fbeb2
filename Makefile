# Appex. `make demo` runs the shipped examples under full governance; `make test` runs the tests.
# Both install missing system packages (libseccomp-dev) when run as root.

SWIFT      ?= swift
# Release builds (benchmarks) never fall back to the checkout's policies: name them.
export APPEX_POLICIES ?= $(CURDIR)/Policies
EXAMPLES   := .build/examples
DEMO_STATE := .build/demo-state

.PHONY: all deps build test lint format libappex test-libappex fuzz-libappex test-cgroup-v2 ci-build demo examples bench bench-replan bench-launch bench-activation bench-supervisor bench-policy bench-metrics bench-jetsam bench-load fuzz fuzz-wire fuzz-plist fuzz-elf clean

all: build

deps:
	@scripts/ensure-deps.sh

build: deps
	$(SWIFT) build

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	@$(MAKE) --no-print-directory test-libappex

# The style (.swift-format, .clang-format): `lint` checks every Swift and C file, `format`
# rewrites them. clang-format comes from Debian (ensure-deps installs it with APPEX_LINT=1).
lint:
	@APPEX_LINT=1 scripts/ensure-deps.sh
	@scripts/lint.sh

format:
	@APPEX_LINT=1 scripts/ensure-deps.sh
	@scripts/lint.sh --fix

# The live cgroup v2 checks in a QEMU guest booting Debian's kernel (Docs/cgroups.md, "Live on
# v2"); installs QEMU, the kernel and virtme-ng when missing. Root; 4–10 min under TCG.
test-cgroup-v2: deps
	@scripts/test-cgroup-v2.sh

examples: deps
	@scripts/assemble-examples.sh $(EXAMPLES) >/dev/null

demo: deps examples
	$(SWIFT) build --product appex
	$(SWIFT) build --product appex-commands
	$(SWIFT) build --product appexd
	$(SWIFT) build --product appex-sandbox-init
	$(SWIFT) build --product appex-transfer
	@scripts/demo.sh $(EXAMPLES)/ExampleHost.app $(DEMO_STATE)

bench: bench-activation bench-launch bench-supervisor bench-policy

# Benchmarks/ uses this package by path, and SwiftPM keeps the list of its source files from the
# last plan: a file added here since then fails the benchmark build ("cannot find type ... in
# scope") until Benchmarks/ plans again, which a newer Package.swift makes it do.
bench-replan:
	@touch Benchmarks/Package.swift

bench-activation: deps bench-replan
	cd Benchmarks && $(SWIFT) build -c release --product activation-bench && $$($(SWIFT) build -c release --show-bin-path)/activation-bench

bench-launch: deps bench-replan
	$(SWIFT) build -c release --product appex-sandbox-init
	$(SWIFT) build -c release --static-swift-stdlib --product appex
	$(SWIFT) build -c release --static-swift-stdlib --product appex-commands
	cd Benchmarks && $(SWIFT) build -c release --product launch-bench && \
	  APPEX_SANDBOX_INIT=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appex-sandbox-init \
	  APPEX=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appex \
	  $$($(SWIFT) build -c release --show-bin-path)/launch-bench

# Loading the policies: parsing every file against the compiled cache (Docs/policies.md).
bench-policy: deps bench-replan
	cd Benchmarks && $(SWIFT) build -c release --product policy-bench && $$($(SWIFT) build -c release --show-bin-path)/policy-bench

# Cold launch and warm round trip of the supervisor beside their floors (Docs/performance.md).
# BENCH_ARGS: --cold N --cold-cache N --warm N.
bench-supervisor: deps bench-replan examples
	$(SWIFT) build -c release --product appexd
	$(SWIFT) build -c release --product appex-sandbox-init
	cd Benchmarks && $(SWIFT) build -c release --product supervisor-bench && \
	  $(SWIFT) build -c release --product relay-floor && \
	  APPEX_SANDBOX_INIT=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appex-sandbox-init \
	  APPEXD=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appexd \
	  APPEX_EXAMPLES=$(abspath $(EXAMPLES))/ExampleHost.app \
	  $$($(SWIFT) build -c release --show-bin-path)/supervisor-bench $(BENCH_ARGS)

# appexd with 1,000 live idle extensions: scrape time, resident memory, idle CPU, and the launch
# of one more against none (Docs/metrics.md). appexd built as Docs/deployment.md says to ship it
# (the Swift runtime linked statically: ~5 MiB less resident). BENCH_ARGS: --extensions N
# --scrapes N --launches N --no-control.
bench-metrics: deps bench-replan
	$(SWIFT) build -c release --static-swift-stdlib --product appexd
	$(SWIFT) build -c release --product appex-sandbox-init
	$(SWIFT) build -c release --product appex-probe-extension
	cd Benchmarks && $(SWIFT) build -c release --product metrics-bench && \
	  APPEX_SANDBOX_INIT=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appex-sandbox-init \
	  APPEXD=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appexd \
	  APPEX_PROBE=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appex-probe-extension \
	  $$($(SWIFT) build -c release --show-bin-path)/metrics-bench $(BENCH_ARGS)

# 64 hosts (uid 4242) × 1,000 requests over eight probe extensions, four misbehaving, while a
# stranger uid holds connections: every outcome, well-behaved p99 against unloaded, appexd's
# descriptors and memory (Docs/performance.md, "Load and faults"). BENCH_ARGS: --requests N
# --hosts N --baseline N. Not part of `make bench`.
bench-load: deps bench-replan
	$(SWIFT) build -c release --product appexd
	$(SWIFT) build -c release --product appex-sandbox-init
	$(SWIFT) build -c release --product appex-probe-extension
	cd Benchmarks && $(SWIFT) build -c release --product load-bench && \
	  APPEX_SANDBOX_INIT=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appex-sandbox-init \
	  APPEXD=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appexd \
	  APPEX_PROBE=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appex-probe-extension \
	  $$($(SWIFT) build -c release --show-bin-path)/load-bench $(BENCH_ARGS)

# Memory threshold crossed → victim dead, appexd's budget beside earlyoom on the same load
# (Docs/jetsam.md, "Benchmark"); installs earlyoom when missing, without leaving its service
# running. BENCH_ARGS: --trials N --crossings N --bystanders N
# --budget-mib N --step-kib N --interval-us N. Not part of `make bench`.
bench-jetsam: deps bench-replan
	@command -v earlyoom >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get install -y earlyoom && \
	  if command -v systemctl >/dev/null && systemctl is-active --quiet earlyoom 2>/dev/null; then \
	    echo "bench-jetsam: stopping the earlyoom service the package started (the benchmark runs its own)"; \
	    systemctl disable --now earlyoom; fi; }
	$(SWIFT) build -c release --product appexd
	$(SWIFT) build -c release --product appex-sandbox-init
	$(SWIFT) build -c release --product appex-probe-extension
	cd Benchmarks && $(SWIFT) build -c release --product jetsam-bench && \
	  $(SWIFT) build -c release --product earlyoom-trial && \
	  $(SWIFT) build -c release --product psi-thrash && \
	  APPEX_SANDBOX_INIT=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appex-sandbox-init \
	  APPEXD=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appexd \
	  APPEX_PROBE=$$(cd .. && $(SWIFT) build -c release --show-bin-path)/appex-probe-extension \
	  EARLYOOM=$$(command -v earlyoom) \
	  $$($(SWIFT) build -c release --show-bin-path)/jetsam-bench $(BENCH_ARGS)

# A Swift libFuzzer harness: $(call swift-fuzz,name,module,sources,libFuzzer flags) builds
# the sources with Fuzz/FuzzEntry.swift into .build/fuzz-name/fuzz-name and runs it for
# FUZZ_SECONDS from the corpus there, which the harness's seeds start.
FUZZ_SECONDS ?= 300
# A fifth argument names modules the sources import, built first as objects beside it.
define swift-fuzz
	mkdir -p .build/fuzz-$(1)/corpus .build/fuzz-$(1)/modules
	$(foreach m,$(5),swiftc -O -sanitize=fuzzer,address -parse-as-library -wmo -module-name $(m) \
	  -emit-module -emit-module-path .build/fuzz-$(1)/modules/$(m).swiftmodule \
	  -emit-object -o .build/fuzz-$(1)/modules/$(m).o Sources/$(m)/*.swift &&) true
	swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name $(2) -I .build/fuzz-$(1)/modules \
	  $(foreach m,$(5),.build/fuzz-$(1)/modules/$(m).o) $(3) Fuzz/FuzzEntry.swift -o .build/fuzz-$(1)/fuzz-$(1)
	APPEX_FUZZ_SEEDS=.build/fuzz-$(1)/corpus .build/fuzz-$(1)/fuzz-$(1) -max_total_time=$(FUZZ_SECONDS) \
	  $(4) -artifact_prefix=.build/fuzz-$(1)/ .build/fuzz-$(1)/corpus
endef

# libFuzzer run of the wire decoder (Docs/protocol.md, "Fuzzing"); not part of `make test`.
fuzz-wire:
	$(call swift-fuzz,wire,AppexWireFuzz,Sources/AppexWire/*.swift Fuzz/WireDecoderFuzz.swift,-max_len=4096,AppexKillReason)

# libFuzzer run of the ELF reader (Docs/extension-safe-api.md, "The ELF reader"); not part of
# `make test` (ELFFuzzTests runs seeded mutations there).
fuzz-elf:
	$(call swift-fuzz,elf,AppexELFFuzz,Sources/AppexELF/*.swift Fuzz/ELFReaderFuzz.swift,-max_len=4096)

# libappex (Docs/libappex.md): the C library, static and shared, with pkg-config's file made
# at install. Built with the C compiler alone, from the same sources as the CAppex target.
LIBAPPEX     := .build/libappex
LIBAPPEX_SRC := $(wildcard Sources/CAppex/*.c)
LIBAPPEX_CFLAGS := -std=gnu11 -O2 -g -fPIC -fvisibility=hidden -Wall -Wextra -ISources/CAppex/include -ISources/CAppex
libappex:
	mkdir -p $(LIBAPPEX)/obj
	for src in $(LIBAPPEX_SRC); do $(CC) $(LIBAPPEX_CFLAGS) -c $$src -o $(LIBAPPEX)/obj/$$(basename $$src .c).o || exit 1; done
	rm -f $(LIBAPPEX)/libappex.a && ar rcs $(LIBAPPEX)/libappex.a $(LIBAPPEX)/obj/*.o
	$(CC) -shared -Wl,-soname,libappex.so.1 -o $(LIBAPPEX)/libappex.so.1 $(LIBAPPEX)/obj/*.o -lpthread
	ln -sf libappex.so.1 $(LIBAPPEX)/libappex.so

# libappex's unit tests (Tests/libappex/unit.c) under AddressSanitizer and
# UndefinedBehaviorSanitizer; part of `make test`.
test-libappex:
	mkdir -p $(LIBAPPEX)/asan
	clang -std=gnu11 -g -O1 -fuse-ld=lld -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
	  -Wall -Wextra -ISources/CAppex/include -ISources/CAppex $(LIBAPPEX_SRC) Tests/libappex/unit.c -lpthread \
	  -o $(LIBAPPEX)/asan/unit
	$(LIBAPPEX)/asan/unit
	@# No thread-local storage: every program linking libappex (the Swift test bundle too) would
	@# carry it in each thread's stack, and threads that ask for small stacks fail (EINVAL).
	@for src in $(LIBAPPEX_SRC); do $(CC) $(LIBAPPEX_CFLAGS) -c $$src -o $(LIBAPPEX)/asan/tls-check.o || exit 1; \
	  if readelf -SW $(LIBAPPEX)/asan/tls-check.o | grep -q '\.tbss\|\.tdata'; then \
	    echo "$$src: thread-local storage in libappex"; exit 1; fi; done; echo "libappex: no thread-local storage"

# libFuzzer run of libappex's decoder (Fuzz/LibAppexDecodeFuzz.c); not part of `make test`.
FUZZ_LIBAPPEX := .build/fuzz-libappex
fuzz-libappex: test-libappex
	mkdir -p $(FUZZ_LIBAPPEX)/corpus
	LIBAPPEX_SEEDS=$(FUZZ_LIBAPPEX)/corpus $(LIBAPPEX)/asan/unit
	clang -std=gnu11 -g -O1 -fuse-ld=lld -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -ISources/CAppex/include -ISources/CAppex $(LIBAPPEX_SRC) Fuzz/LibAppexDecodeFuzz.c -lpthread \
	  -o $(FUZZ_LIBAPPEX)/fuzz-libappex
	$(FUZZ_LIBAPPEX)/fuzz-libappex -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	  -artifact_prefix=$(FUZZ_LIBAPPEX)/ $(FUZZ_LIBAPPEX)/corpus

# libFuzzer run of the property-list readers (Docs/bundles.md, "Limits on a property list").
PLIST_SOURCES := $(addprefix Sources/AppexBundle/,PropertyListReader.swift PropertyListBudget.swift \
  BinaryPropertyListParser.swift XMLPropertyListParser.swift OpenStepPropertyListParser.swift \
  PlistValue.swift PlistDate.swift Base64.swift)
fuzz-plist:
	$(call swift-fuzz,plist,AppexPlistFuzz,$(PLIST_SOURCES) Tests/AppexTestSupport/BinaryPlistBuilder.swift Fuzz/PropertyListFuzz.swift,-max_len=8192 -rss_limit_mb=512)

# Installation (Docs/deployment.md, "Installing"): release builds, the Swift runtime linked
# statically, laid out under DESTDIR/PREFIX where each executable finds the rest relative to
# its own file. The variables are scripts/install.sh's.
PREFIX      ?= /usr/local
DESTDIR     ?=
SYSCONFDIR  ?= /etc
RELEASE_BIN  = $(shell $(SWIFT) build -c release --show-bin-path)
INSTALL_VARS = PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) SYSCONFDIR=$(SYSCONFDIR)

.PHONY: release man install uninstall deb test-package test-systemd

# The init as bench-launch builds it (no Swift runtime at all); the rest with it linked in.
# What CI builds besides the tests (.ci/run): the release executables the README's figures are
# measured on (static runtime, link order), the Benchmarks package, and a short run of each
# decoder's fuzzer, so none of them rots between the sessions that measure.
CI_FUZZ_SECONDS ?= 30
ci-build: release
	cd Benchmarks && $(SWIFT) build -c release
	$(MAKE) fuzz-wire FUZZ_SECONDS=$(CI_FUZZ_SECONDS)
	$(MAKE) fuzz-plist FUZZ_SECONDS=$(CI_FUZZ_SECONDS)
	$(MAKE) fuzz-elf FUZZ_SECONDS=$(CI_FUZZ_SECONDS)
	$(MAKE) fuzz-libappex FUZZ_SECONDS=$(CI_FUZZ_SECONDS)

release: deps
	$(SWIFT) build -c release --product appex-sandbox-init
	$(SWIFT) build -c release --static-swift-stdlib --product appex
	$(SWIFT) build -c release --static-swift-stdlib --product appex-commands
	$(SWIFT) build -c release --static-swift-stdlib --product appexd
	$(SWIFT) build -c release --static-swift-stdlib --product appex-transfer

# Man pages from the command definitions (argument-parser's generate-manual plugin) into
# .build/man; install.sh installs what is there.
man: release
	@scripts/make-man.sh .build/man

install: release man libappex
	$(INSTALL_VARS) scripts/install.sh install $(RELEASE_BIN)

uninstall:
	$(INSTALL_VARS) scripts/install.sh uninstall

# A Debian package (dpkg-deb) of the installed tree, PREFIX /usr, in .build/deb/.
deb: release man libappex
	@scripts/make-deb.sh $(RELEASE_BIN) .build/deb

# Installs the package on this machine, checks it, removes and purges it (root; slow: release
# builds). Not part of `make test`.
test-package: deb
	@scripts/test-package.sh .build/deb

# The package on a fresh Debian 12 booted in QEMU with systemd as PID 1 (Docs/deployment.md,
# "Tried under systemd"): install, systemctl start/reload/stop, delegation, doctor, requests to
# the examples, the watchdog, the journal, purge. Root; debootstraps its root file system once
# into .build/systemd-guest. Not part of `make test`.
test-systemd: deb examples
	@scripts/test-systemd.sh .build/deb $(EXAMPLES)/ExampleHost.app

clean:
	rm -rf .build Benchmarks/.build
