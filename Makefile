# GPU Canary. Quick start on Debian/Ubuntu: `make run`, `make test`.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell scripts/version.sh)
LDFLAGS := -s -w -X main.version=$(VERSION)
export CGO_ENABLED := 1
# go-nvml's cgo preamble names every NVML symbol, deprecated ones too; a
# cold build would print a page of warnings for each.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations
FUZZTIME ?= 50000x

.PHONY: all deps deps-test build cli windows run test vet unit fuzz e2e screenshots bench soak test-gpu gpu-kit clean
.PHONY: test-windows bench-windows gpu-kit-windows

all: build cli

deps:
	@scripts/deps.sh build

deps-test:
	@scripts/deps.sh test

## build: bin/gpucanary, the tray app with every command
# The first build compiles the C code of the GUI toolkit (GLFW, OpenGL)
# and of NVML's binding: minutes with nothing printed. Say so first, when
# Go's build cache does not hold them yet.
build: deps
	@if $(GO) list -trimpath -deps -f '{{if .CgoFiles}}{{.Stale}}{{end}}' ./cmd/gpucanary 2>/dev/null | grep -q true; then \
		echo "build: compiling the GUI toolkit's C code (GLFW, OpenGL): several minutes on 2 cores the first time, with nothing printed until it is done; later builds take seconds."; \
	fi
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/gpucanary ./cmd/gpucanary

## cli: bin/gpucanary-cli, every command (the agent, kb refresh and check
## --format prom included) without GUI code: no libGL/libX11
cli:
	$(GO) build -trimpath -tags nogui -ldflags '$(LDFLAGS)' -o bin/gpucanary-cli ./cmd/gpucanary
	@if ldd bin/gpucanary-cli 2>/dev/null | grep -Eq 'libGL|libX11'; then \
		echo "cli: bin/gpucanary-cli links GUI libraries"; ldd bin/gpucanary-cli; exit 1; fi

## windows: cross-built with mingw-w64 (slow cold: Fyne's C parts): bin/gpucanary.exe
## for the console (every command), bin/gpucanaryw.exe for the tray (no console window),
## each with its icon, version information and manifest (scripts/winres.sh)
windows:
	@scripts/deps.sh windows
	VERSION='$(VERSION)' scripts/winres.sh console
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=x86_64-w64-mingw32-gcc $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/gpucanary.exe ./cmd/gpucanary
	VERSION='$(VERSION)' scripts/winres.sh gui
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=x86_64-w64-mingw32-gcc $(GO) build -trimpath -ldflags '$(LDFLAGS) -H windowsgui' -o bin/gpucanaryw.exe ./cmd/gpucanary
	rm -f cmd/gpucanary/rsrc_windows_amd64.syso

## run: install what is missing, build, start the tray (or `watch` without a display)
run: build
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		echo "No display (DISPLAY and WAYLAND_DISPLAY are unset): running 'gpucanary watch' in this terminal instead of the tray."; \
		exec bin/gpucanary watch; \
	fi; \
	exec bin/gpucanary

## test: install what is missing, vet, race tests, fuzz briefly, desktop end to end,
## Windows under wine, Prometheus, install and packages
# The stages run one after another (scripts/stages.sh), each timed, with
# a table of where the time went printed at the end.
TEST_STAGES := deps deps-test vet unit cli fuzz e2e test-windows test-prom test-install test-packages
test:
	@scripts/stages.sh $(TEST_STAGES)

# deadcode (golang.org/x/tools, pinned) lists the functions nothing reaches
# from main or a test; more than DEADCODE_MAX of them fails vet.
DEADCODE := bin/tools/deadcode
DEADCODE_MAX ?= 12
vet:
	$(GO) vet ./...
	$(GO) vet -tags nogui ./...
	@[ -x $(DEADCODE) ] || GOBIN=$(CURDIR)/bin/tools $(GO) install golang.org/x/tools/cmd/deadcode@v0.52.0
	@$(DEADCODE) -test ./... >bin/deadcode.txt; n=$$(grep -c . bin/deadcode.txt || true); \
	cat bin/deadcode.txt; echo "deadcode: $$n unreachable functions (at most $(DEADCODE_MAX))"; [ "$$n" -le $(DEADCODE_MAX) ]

# -timeout is a guard against a hang, not a budget: the packages that run
# real pip (fix, engine, cmd) take about 2 minutes on a loaded 2-core
# machine, and Go's default 10 minutes per package is too near on a
# machine loaded far beyond that.
# GPUCANARY_NPM_LIBS: monitor/fatbin's test reads the real CUDA libraries
# npm serves (fetched once into the user's cache folder; skipped, saying
# so, when npm does not answer).
unit:
	GPUCANARY_NPM_LIBS=1 $(GO) test -race -count=1 -timeout 25m ./...

.PHONY: test-loaded
## test-loaded: make test RUNS times (5) in a row on a fresh clone of HEAD
## while a busy loop per core loads the machine
test-loaded:
	@scripts/test-loaded.sh

fuzz:
	@FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

.PHONY: test-prom
## test-prom: promtool checks and unit tests of the alert rules, then a real
## Prometheus scraping a real agent while real pip overwrites a CUDA torch
test-prom:
	@scripts/test-prom.sh

## e2e: the real binary on Xvfb with a session bus, a tray watcher and dunst
e2e:
	scripts/e2e-desktop.sh

## screenshots: e2e, saving the windows it opens into docs/screenshots
screenshots:
	GPUCANARY_SCREENSHOTS=docs/screenshots scripts/e2e-desktop.sh

## bench: the benchmarks, each beside the peer it is compared with
bench: cli
	@scripts/bench.sh

## soak: watch over 100 environments while real pip flips torch in 5 for
## 10 minutes: every flip caught, RSS flat after 2 minutes (issue 41)
soak:
	@scripts/soak.sh

## test-gpu: on a machine with an NVIDIA GPU and a CUDA torch; runs the carried bin/gpucanary-cli
test-gpu:
	@scripts/test-gpu.sh

## gpu-kit: what test-gpu runs on a GPU machine without Go: the CLI and the
## test binaries of the NVML backend and the process scanner (carry bin/)
gpu-kit: cli
	$(GO) test -c -tags nogui -o bin/gpu.test ./monitor/gpu
	$(GO) test -c -tags nogui -o bin/procs.test ./monitor/procs

## test-windows: the Windows build under wine: the Windows test binaries of the
## GPU backend (with a stand-in nvml.dll), the state store and the process
## scanner (with stand-in workloads), and the CLI end to end (check, ps, watch)
test-windows:
	scripts/test-windows.sh

## bench-windows: under wine, one NVML snapshot through the Windows backend and
## the stand-in, and one process refresh with about 100 processes alive
bench-windows:
	@scripts/test-windows.sh bench

## gpu-kit-windows: what a Windows machine (with an NVIDIA driver) runs, no Go
## needed (docs/testing.md, "What needs a real Windows machine"): the GPU backend's and the process scanner's
## tests, the stand-ins the latter loads (bin/winstub), and the CLI, all without cgo
gpu-kit-windows:
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) test -c -o bin/gpu.test.exe ./monitor/gpu
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) test -c -o bin/procs.test.exe ./monitor/procs
	mkdir -p bin/winstub
	x86_64-w64-mingw32-gcc -std=c11 -O2 -shared -o bin/winstub/runtime.dll monitor/procs/testdata/winstub/runtime.c
	x86_64-w64-mingw32-gcc -std=c11 -O2 -municode -o bin/winstub/workload.exe monitor/procs/testdata/winstub/workload.c
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GO) build -trimpath -tags nogui -ldflags '$(LDFLAGS)' -o bin/gpucanary-cli.exe ./cmd/gpucanary

clean:
	rm -rf bin

## ---- install, packages, release archives ----
# The version stamps: scripts/version.sh (from the newest vX.Y.Z tag), the
# commit, and the build date (SOURCE_DATE_EPOCH when set, for reproducible
# builds); `gpucanary --version` prints all three.
VERSION := $(VERSION)
COMMIT := $(shell git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)
BUILD_DATE := $(shell date -u -d @$${SOURCE_DATE_EPOCH:-$$(date +%s)} +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS += -X main.commit=$(COMMIT) -X main.buildDate=$(BUILD_DATE)
# PREFIX (make install PREFIX=DIR, or in the environment) reaches
# scripts/install.sh unexpanded; unset, it installs in ~/.local, or in
# /usr/local as root.
DIST ?= dist
MAINTAINER ?= GPU Canary maintainers <maintainers@gpucanary.invalid>
export GO VERSION COMMIT BUILD_DATE LDFLAGS MAINTAINER

.PHONY: install uninstall dist test-install test-packages

# `sudo make install` installs what `make` built as you (root's PATH often
# has no Go): as root with both binaries there, nothing is rebuilt.
INSTALL_NEEDS := $(if $(and $(filter 0,$(shell id -u)),$(wildcard bin/gpucanary),$(wildcard bin/gpucanary-cli)),,build cli)

## install: the tray and the CLI in ~/.local/bin, the menu entry and icons in
## ~/.local/share (PREFIX=DIR elsewhere; `sudo make install`: /usr/local)
install: $(INSTALL_NEEDS)
	@scripts/install.sh install

## uninstall: remove exactly what install put (its manifest); settings and history stay
uninstall:
	@scripts/install.sh uninstall

## dist: dist/gpucanary-VERSION-linux-amd64.tar.gz, the two .debs, .rpms and Arch packages, the Windows zip
## (when a dist-windows target exists) with its winget and Scoop manifests (URLs under
## RELEASE_URL=…, default the GitHub release of vVERSION), SHA256SUMS
dist: deps
	rm -rf $(DIST)
	scripts/dist.sh $(DIST)
	@if grep -q '^dist-windows:' Makefile; then $(MAKE) dist-windows DIST=$(DIST); fi
	@if command -v lintian >/dev/null; then lintian --fail-on error,warning --suppress-tags no-manual-page,initial-upload-closes-no-bugs $(DIST)/*.deb; fi
	cd $(DIST) && sha256sum $$(ls *.tar.gz *.deb *.rpm *.pkg.tar.zst *.zip *.msi 2>/dev/null) >SHA256SUMS
	@cat $(DIST)/SHA256SUMS

.PHONY: dist-windows
## dist-windows: $(DIST)/gpucanary-VERSION-windows-amd64.zip: both exes, README, docs/,
## LICENSE and the Windows build's third-party licences (make dist includes it)
dist-windows: windows
	scripts/dist-windows.sh $(DIST)

## test-install: make install and make uninstall into a throwaway HOME
test-install:
	scripts/test-install.sh

## test-packages: the release pipeline, the .debs installed into a throwaway
## root with dpkg and removed, the menu entry launched, lintian, a minimal root
test-packages: cli
	scripts/test-packages.sh

