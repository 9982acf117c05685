# cellpath — build, test, demo, install.  Run `sudo make demo` and `sudo make test` first.
SHELL := /bin/bash
PREFIX ?= /usr/local
# The demo world's namespace prefix (`make demo DEMO_PREFIX=lab-`); PREFIX is the install's.
DEMO_PREFIX ?= cpdemo-
DESTDIR ?=
CONFIGURATION ?= release

# `sudo` resets PATH: find the toolchain ourselves.
SWIFT ?= $(or $(shell command -v swift 2>/dev/null),$(wildcard /opt/swift/usr/bin/swift),swift)
# Release builds link the Swift runtime statically: loading its shared libraries was a third of
# cellpath's start-up (docs/benchmarks.md). Debug builds (make test) keep it shared: they link faster.
# lld packs the relative relocations of the static runtime (DT_RELR, glibc >= 2.36): 0.8 MB less
# to read at start-up than gold's table.
SWIFT_BUILD_FLAGS = $(if $(filter release,$(CONFIGURATION)),$(RELEASE_FLAGS))
RELEASE_FLAGS := --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs
BIN_DIR = $(shell $(SWIFT) build -c $(CONFIGURATION) --show-bin-path 2>/dev/null)
CELLPATH = $(BIN_DIR)/cellpath
# The executables that the front `cellpath` hands commands to (docs/architecture.md, Executables):
# next to it in the build directory, in PREFIX/libexec/cellpath once installed.
HELPERS := cellpath-modem cellpath-helper
# Executables of earlier versions, merged into cellpath-helper: install and uninstall remove them.
FORMER_HELPERS := cellpath-sim cellpath-number cellpath-check cellpath-serve
LIBEXEC_DIR = $(PREFIX)/libexec/cellpath
# Where `make deb` builds the packages.
DEB_DIR = .build/deb
DEB_ROOT = $(DEB_DIR)/root
# Where each shell looks for completion scripts: Debian's vendor directories under /usr, and
# the ones Debian's zsh and fish read for a local installation otherwise.
BASH_COMPLETION_DIR = $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETION_DIR = $(if $(filter /usr,$(PREFIX)),/usr/share/zsh/vendor-completions,$(PREFIX)/share/zsh/site-functions)
FISH_COMPLETION_DIR = $(if $(filter /usr,$(PREFIX)),/usr/share/fish/vendor_completions.d,/etc/fish/completions)

# Every Debian package that the build, the tests and the simulator need.
DEB_PACKAGES := pkg-config libglib2.0-dev libmbim-glib-dev libqmi-glib-dev libmm-glib-dev \
	libcurl4-openssl-dev libc-ares-dev libmicrohttpd-dev libnl-3-dev libnl-route-3-dev \
	libphonenumber-dev libprotobuf-dev libicu-dev libssl-dev \
	libmbim-utils libqmi-utils iproute2 dnsmasq-base openssl curl tcpdump ca-certificates python3 python3-venv \
	jq iputils-ping time man-db strace zsh fish dpkg-dev binutils lintian wrk modemmanager polkitd dbus tayga unbound nftables udhcpc \
	libjs-chart.js chromium chromium-driver

# Fuzzing (docs/fuzzing.md): executions per target for `make fuzz`, and for the smoke `make test` runs.
FUZZ_RUNS ?= 1000000
FUZZ_SMOKE_RUNS ?= 20000

.PHONY: all deps provider-sdks build test test-unit test-browser-deps lint format demo bench soak order-file docs install deb install-capability uninstall clean \
	fuzz fuzz-smoke

all: build

## deps: install the Debian packages above (idempotent; quick when all are present). A package whose
## triggers are pending (man-db while another apt runs) is installed; apt waits for another's lock.
deps:
	@missing=$$(dpkg-query -W -f='$${db:Status-Abbrev} $${binary:Package}\n' $(DEB_PACKAGES) 2>/dev/null \
		| awk '$$1 ~ /^i[itW]/ { sub(/:.*/, "", $$2); print $$2 }' | sort -u \
		| comm -13 - <(printf '%s\n' $(DEB_PACKAGES) | sort -u)); \
	if [ -n "$$missing" ]; then \
		echo "deps: installing" $$missing; \
		if [ "$$(id -u)" != 0 ]; then echo "deps: run as root (sudo make deps) to install them" >&2; exit 77; fi; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get -o DPkg::Lock::Timeout=300 update -qq \
			&& apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

## provider-sdks: the providers' own server SDKs (PyPI twilio, vonage) and an OpenAPI schema validator
## (PyPI openapi-schema-validator) in a virtual environment under .build, for the tests that check the
## simulator's fake provider APIs against them (VerifySDKEndToEndTests, CAMARAContractTests)
PROVIDER_SDKS := .build/provider-sdks
PROVIDER_SDK_PACKAGES := 'twilio~=9.13' 'vonage~=4.9' 'openapi-schema-validator~=0.9.0'
provider-sdks: $(PROVIDER_SDKS)/bin/python
	@$(PROVIDER_SDKS)/bin/python -c 'import twilio, vonage, openapi_schema_validator' 2>/dev/null \
		|| $(PROVIDER_SDKS)/bin/python -m pip install --quiet --disable-pip-version-check $(PROVIDER_SDK_PACKAGES)
$(PROVIDER_SDKS)/bin/python:
	/usr/bin/python3 -m venv $(PROVIDER_SDKS).tmp
	$(PROVIDER_SDKS).tmp/bin/python -m pip install --quiet --disable-pip-version-check $(PROVIDER_SDK_PACKAGES)
	rm -rf $(PROVIDER_SDKS) && mv $(PROVIDER_SDKS).tmp $(PROVIDER_SDKS)

## build: compile cellpath and its helpers (release by default; CONFIGURATION=debug for a debug build).
## Product by product: the static Swift runtime has no Testing module, which TestSupport imports.
build:
	for product in cellpath $(HELPERS); do $(SWIFT) build -c $(CONFIGURATION) $(SWIFT_BUILD_FLAGS) --product $$product || exit; done

## test: the Debian package (make deb), unit, end-to-end and (as root) simulator and package tests in parallel, then the fuzz smoke (FUZZ_SMOKE_RUNS per target)
test: deps provider-sdks test-browser-deps
	$(SWIFT) build
	$(MAKE) --no-print-directory deb
	CELLPATH_BIN=$$($(SWIFT) build --show-bin-path)/cellpath CELLPATH_DEB=$$(echo $(CURDIR)/$(DEB_DIR)/cellpath_*.deb) \
		$(SWIFT) test --parallel
	SWIFT=$(SWIFT) FUZZ_RUNS=$(FUZZ_SMOKE_RUNS) ./scripts/fuzz.sh

## test-unit: the tests that need neither root nor a simulated world, in parallel (the root and
## namespace tests skip, also as root: CELLPATH_SKIP_ROOT_TESTS=1)
test-unit: deps
	$(SWIFT) build
	CELLPATH_SKIP_ROOT_TESTS=1 CELLPATH_BIN=$$($(SWIFT) build --show-bin-path)/cellpath $(SWIFT) test --parallel

## test-browser-deps: the browser test's Python client (selenium, from PyPI) in a virtual environment
## under .build (make test installs it; chromium and chromium-driver come from deps)
TEST_PYTHON := .build/test-python
test-browser-deps: deps
	@test -x $(TEST_PYTHON)/bin/python3 || python3 -m venv $(TEST_PYTHON)
	@$(TEST_PYTHON)/bin/python3 -c 'import selenium' 2>/dev/null \
		|| $(TEST_PYTHON)/bin/pip install --quiet --disable-pip-version-check 'selenium>=4.11,<5'

## lint: the style check (swift-format, the toolchain's, with .swift-format): fails on any finding
lint:
	$(SWIFT) format lint --strict --recursive --parallel Package.swift Sources Tests Fuzz

## format: rewrite the sources in the style `make lint` checks
format:
	$(SWIFT) format --in-place --recursive --parallel Package.swift Sources Tests Fuzz

## fuzz: build the fuzz targets (libFuzzer, AddressSanitizer) and run each FUZZ_RUNS times from Tests/FuzzCorpus
fuzz: deps
	SWIFT=$(SWIFT) FUZZ_RUNS=$(FUZZ_RUNS) ./scripts/fuzz.sh

## fuzz-smoke: every fuzz target FUZZ_SMOKE_RUNS times, as `make test` runs them
fuzz-smoke: deps
	SWIFT=$(SWIFT) FUZZ_RUNS=$(FUZZ_SMOKE_RUNS) ./scripts/fuzz.sh

## demo: the main job, end to end, on the built-in simulator
demo: deps build
	@CELLPATH=$(CELLPATH) DEMO_PREFIX=$(DEMO_PREFIX) ./scripts/demo.sh

## bench: benchmarks against peers, as tables of ratios
bench: deps build
	@CELLPATH=$(CELLPATH) ./scripts/bench.sh
	@CELLPATH=$(CELLPATH) ./scripts/bench-bearer.sh
	@CELLPATH=$(CELLPATH) ./scripts/bench-checks.sh
	@CELLPATH=$(CELLPATH) ./scripts/bench-serve.sh
	@CELLPATH=$(CELLPATH) ./scripts/bench-ipv6.sh
	@CELLPATH=$(CELLPATH) ./scripts/bench-radio.sh
	@CELLPATH=$(CELLPATH) ./scripts/bench-report.sh

## soak: the soak tests' long versions (root; docs/benchmarks.md, Soak): field mode on two simulated
## modems for 10,000 checks under faults, and serve at 256 connections for 10 min; prints their
## figures (lines `soak: …`). `make test` runs them short (300 checks; 30 s of load after the
## warm-up); CELLPATH_SOAK_CHECKS and CELLPATH_SOAK_SECONDS set other sizes.
SOAK ?= 1
soak: deps
	$(SWIFT) build --build-tests
	CELLPATH_SOAK=$(SOAK) CELLPATH_REQUIRE_ROOT_TESTS=1 CELLPATH_BIN=$$($(SWIFT) build --show-bin-path)/cellpath \
		$(SWIFT) test --skip-build --no-parallel --filter 'FieldSoakEndToEndTests|ServeLoadTests/soakAt256Connections'

## order-file: lay out the front's functions as a fetch runs them (link/cellpath.order; root, valgrind)
order-file: deps build
	@command -v valgrind >/dev/null || { export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq --no-install-recommends valgrind >/dev/null; }
	@CELLPATH=$(CELLPATH) ./scripts/order-file.sh
	rm -f $(CELLPATH)   # SwiftPM does not see the order file change: link the front again
	$(SWIFT) build -c $(CONFIGURATION) $(SWIFT_BUILD_FLAGS) --product cellpath

## docs: regenerate docs/usage.md and the man page from the commands' --help
docs:
	$(SWIFT) build
	$$($(SWIFT) build --show-bin-path)/cellpath generate-docs --format markdown > docs/usage.md
	$$($(SWIFT) build --show-bin-path)/cellpath generate-docs --format man > docs/cellpath.1

## install: binaries, udev rules and man page under PREFIX
install: build
	install -D -m 0755 $(CELLPATH) $(DESTDIR)$(PREFIX)/bin/cellpath
	for helper in $(HELPERS); do install -D -m 0755 $(BIN_DIR)/$$helper $(DESTDIR)$(LIBEXEC_DIR)/$$helper || exit; done
	rm -f $(addprefix $(DESTDIR)$(LIBEXEC_DIR)/,$(FORMER_HELPERS))
	install -D -m 0644 udev/77-cellpath.rules $(DESTDIR)$(PREFIX)/lib/udev/rules.d/77-cellpath.rules
	install -D -m 0644 docs/cellpath.1 $(DESTDIR)$(PREFIX)/share/man/man1/cellpath.1
	install -d $(DESTDIR)$(BASH_COMPLETION_DIR) $(DESTDIR)$(ZSH_COMPLETION_DIR) $(DESTDIR)$(FISH_COMPLETION_DIR)
	$(CELLPATH) completion bash > $(DESTDIR)$(BASH_COMPLETION_DIR)/cellpath
	$(CELLPATH) completion zsh > $(DESTDIR)$(ZSH_COMPLETION_DIR)/_cellpath
	$(CELLPATH) completion fish > $(DESTDIR)$(FISH_COMPLETION_DIR)/cellpath.fish

## deb: the Debian packages cellpath and cellpath-dbgsym in .build/deb (stripped executables,
## units, completions), from a release build (scripts/build-deb.sh); lintian checks them
deb: build
	rm -rf $(DEB_DIR)
	$(MAKE) --no-print-directory install DESTDIR=$(DEB_ROOT) PREFIX=/usr
	./scripts/build-deb.sh $(DEB_ROOT) $(DEB_DIR)
	lintian --fail-on error,warning $(DEB_DIR)/cellpath_*.deb

## install-capability: the non-root set-up (docs/operations.md): cellpath-modem runnable by the
## `cellpath` group only (root:cellpath 0750) with CAP_NET_ADMIN, and /run/cellpath for the group
install-capability:
	getent group cellpath >/dev/null || groupadd --system cellpath
	chown root:cellpath $(DESTDIR)$(LIBEXEC_DIR)/cellpath-modem
	chmod 0750 $(DESTDIR)$(LIBEXEC_DIR)/cellpath-modem
	setcap cap_net_admin+ep $(DESTDIR)$(LIBEXEC_DIR)/cellpath-modem
	install -D -m 0644 udev/cellpath.tmpfiles.conf $(DESTDIR)$(PREFIX)/lib/tmpfiles.d/cellpath.conf
	systemd-tmpfiles --create $(DESTDIR)$(PREFIX)/lib/tmpfiles.d/cellpath.conf || install -d -m 0770 -g cellpath /run/cellpath

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/cellpath $(DESTDIR)$(PREFIX)/lib/udev/rules.d/77-cellpath.rules \
		$(DESTDIR)$(PREFIX)/lib/tmpfiles.d/cellpath.conf \
		$(DESTDIR)$(PREFIX)/share/man/man1/cellpath.1 $(addprefix $(DESTDIR)$(LIBEXEC_DIR)/,$(HELPERS) $(FORMER_HELPERS)) \
		$(DESTDIR)$(BASH_COMPLETION_DIR)/cellpath $(DESTDIR)$(ZSH_COMPLETION_DIR)/_cellpath \
		$(DESTDIR)$(FISH_COMPLETION_DIR)/cellpath.fish
	rmdir $(DESTDIR)$(LIBEXEC_DIR) 2>/dev/null || true

clean:
	rm -rf .build
