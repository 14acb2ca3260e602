# flowchat — the two commands a new user runs are `make run` and `make test`;
# `make install` puts the app on the PATH and in the desktop's menu.
#
# Both install what they need: Debian packages for Fyne's cgo driver (when
# run as root on Debian/Ubuntu and they are missing) and Go modules (through
# the Go module proxy). The GUI is built with -tags x11, which drops the
# Wayland development packages (it runs under XWayland on Wayland desktops).

GO      ?= go
TAGS    ?= x11
BIN     ?= flowchat
APT_PKGS := gcc pkg-config libgl1-mesa-dev libx11-dev libxext-dev libxcursor-dev \
            libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev
# The GUI end-to-end test drives the real binary under Xvfb with xdotool and
# takes a screenshot with xwd; it skips (saying so) where these are missing.
# desktop-file-validate checks the installed .desktop file.
TEST_PKGS := xvfb xdotool x11-apps desktop-file-utils
ENGINE_PKGS := ./engine/... ./native/... ./specs/...
# `flowchat --version` prints these (Go's own VCS stamp is off where
# GOFLAGS has -buildvcs=false).
VERSION ?= $(shell sed -n 's/^ *Version *= *"\(.*\)"/\1/p' FyneApp.toml)
COMMIT  ?= $(shell git describe --always --dirty --abbrev=12 --exclude '*' 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: all run build deps test-deps nvrtc hiprtc apt test test-gpu gpu-pack gpu-compile test-arm64 test-tiers fuzz vet bench bench-kernels clean install install-files uninstall desktop-caches

# Fuzz targets for every parser of outside bytes, run briefly by `make test`
# (their seed corpora also run as plain tests). Each target has a budget in
# executions (`Nx`), sized to about 4 s on this project's 2-core machines
# (measured: execs in 8 s, halved). A count, not a duration, because Go
# 1.26's fuzz coordinator can fail a target with a bare "context deadline
# exceeded" when a -fuzztime duration ends while a worker is mid-input
# (golang/go#75804, fixed in Go 1.27; CI hit it on ./engine:FuzzLoad with no
# crasher written). FUZZTIME=1m (or 100000x) overrides every budget for a
# longer run.
FUZZTIME ?=
FUZZ_TARGETS := \
	./engine/gguf:FuzzParse:200000x \
	./engine/safetensors:FuzzParse:200000x \
	./engine/pickle:FuzzLoad:120000x \
	./engine/tokenizer:FuzzHFJSON:120000x \
	./engine/tokenizer:FuzzEncode:12000x \
	./engine/spec:FuzzParse:25000x \
	./engine/chat:FuzzRender:2500x \
	./engine/grammar:FuzzParse:100000x \
	./engine:FuzzLoad:150x \
	./engine:FuzzScheduler:400x \
	./engine/eval:FuzzBaseHeader:60000x \
	./app/hub:FuzzParseHeader:10000x \
	./app/hub:FuzzParseFileName:30000x \
	./app/hub:FuzzResponseHeaders:50000x \
	./app/store:FuzzImportJSON:40000x

all: build

run: build
	./$(BIN) $(ARGS)

# The first build compiles GLFW and Fyne's OpenGL driver (C, through cgo):
# a few minutes on a small machine. Go caches the result; later builds
# take seconds.
build: deps
	@[ -e $(BIN) ] || echo "first build: compiling the GUI toolkit's C code (GLFW, OpenGL) takes a few minutes; later builds reuse Go's build cache and take seconds"
	$(GO) build -tags $(TAGS) -ldflags "$(LDFLAGS)" -o $(BIN) ./app

# deps installs missing Debian packages (root only; others get a hint) and
# downloads Go modules.
deps:
	@$(MAKE) --no-print-directory apt PKGS="$(APT_PKGS)"
	$(GO) mod download

test-deps: deps
	@$(MAKE) --no-print-directory apt PKGS="$(TEST_PKGS)" OPTIONAL=1
	@$(MAKE) --no-print-directory nvrtc
	@$(MAKE) --no-print-directory hiprtc

# nvrtc installs NVIDIA's runtime compiler (CUDA 11.8, Debian bookworm's
# non-free libnvrtc11.2), with which native/cuda's tests compile every
# kernel for sm_80 and sm_90; no GPU is needed. It runs only as root on
# bookworm, reuses the Debian mirror the system is configured with, and
# enables non-free for this install only: apt reads a sources file and a
# package-list directory of its own (under /var/cache/flowchat-nvrtc), so
# the system's sources stay as they are. Optional: on failure it says so
# and the kernel-compile tests skip.
NVRTC_PKGS := libnvrtc11.2 libnvrtc-builtins11.8
NVRTC_APT  := /var/cache/flowchat-nvrtc
nvrtc:
	@if ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so'; then exit 0; fi; \
	. /etc/os-release 2>/dev/null; \
	if [ "$$(id -u)" != 0 ] || [ "$$VERSION_CODENAME" != bookworm ] || ! command -v apt-get >/dev/null 2>&1; then \
	  echo "nvrtc: libnvrtc not found; kernel-compile tests will skip (as root on Debian bookworm, make test-deps installs $(NVRTC_PKGS) from non-free)"; exit 0; \
	fi; \
	mirror=$$(grep -hoE '^(URIs:|deb) *(\[[^]]*\] *)?https?://[^ ]+/debian/?( |$$)' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
	  | grep -oE 'https?://[^ ]+' | head -n1); \
	mirror=$${mirror:-http://deb.debian.org/debian}; \
	mkdir -p $(NVRTC_APT)/lists/partial; \
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $$mirror bookworm main non-free" > $(NVRTC_APT)/sources.list; \
	opts="-o Dir::Etc::SourceList=$(NVRTC_APT)/sources.list -o Dir::Etc::SourceParts=/nonexistent -o Dir::State::Lists=$(NVRTC_APT)/lists"; \
	echo "installing $(NVRTC_PKGS) from $$mirror (non-free, for this install only)"; \
	(apt-get $$opts update && DEBIAN_FRONTEND=noninteractive apt-get $$opts install -y --no-install-recommends $(NVRTC_PKGS)) >$(NVRTC_APT)/apt.log 2>&1 \
	  || echo "nvrtc: installing $(NVRTC_PKGS) failed (see $(NVRTC_APT)/apt.log); kernel-compile tests will skip"

# hiprtc installs AMD's runtime compiler (ROCm 5.2, from bookworm's main
# component: hipRTC lives inside libamdhip64-5), with which native/hip's
# tests compile every kernel for gfx906, gfx90a and gfx1030; no GPU is
# needed. Optional: where it cannot be installed the tests skip, saying so.
HIPRTC_PKGS := libamdhip64-5 libhiprtc-builtins5 libamd-comgr2 rocm-device-libs
hiprtc:
	@if ldconfig -p 2>/dev/null | grep -qE 'libhiprtc\.so|libamdhip64\.so'; then exit 0; fi; \
	. /etc/os-release 2>/dev/null; \
	if [ "$$VERSION_CODENAME" != bookworm ]; then \
	  echo "hiprtc: no libamdhip64/libhiprtc found; HIP kernel-compile tests will skip (install ROCm, or on Debian bookworm run make test-deps as root)"; exit 0; \
	fi; \
	$(MAKE) --no-print-directory apt PKGS="$(HIPRTC_PKGS)" OPTIONAL=1

apt:
	@missing=""; \
	if command -v dpkg-query >/dev/null 2>&1; then \
	  for p in $(PKGS); do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	  done; \
	fi; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing:$$missing"; \
	    (apt-get install -y --no-install-recommends $$missing || (apt-get update && apt-get install -y --no-install-recommends $$missing)) >/dev/null \
	      || [ -n "$(OPTIONAL)" ] || exit 1; \
	  else \
	    echo "missing Debian packages:$$missing — run: sudo apt-get install$$missing"; [ -n "$(OPTIONAL)" ] || exit 1; \
	  fi; \
	fi

vet: test-deps
	$(GO) vet -tags $(TAGS) ./...

# test runs vet and every test; the engine also without cgo and with the
# plain-Go kernels (noasm), since those are the reference implementations.
# The noasm pass runs -short: the plain-Go kernels run 5-20x slower, and
# -short skips only tests whose subject is not a kernel, each of which the
# first pass runs (speculative decoding's 20,000-generation distribution
# check, ~6 of its 8 minutes on the Intel Xeon VM; the 13-fixture thread
# invariance sweep; the CPU-shim forward pass). Even so ./engine took
# 401 s there beside the other packages (200 s alone), so the pass has 20
# minutes a package instead of go test's 10.
# tools/testsum runs go test -json and prints go test's closing line per
# package, failing tests' output, and every skipped test with its reason;
# it exits with go test's status.
GOTEST ?= GO=$(GO) $(GO) run ./tools/testsum
test: vet
	$(GOTEST) -tags $(TAGS) -count=1 ./...
	CGO_ENABLED=0 $(GOTEST) -count=1 $(ENGINE_PKGS)
	CGO_ENABLED=0 $(GOTEST) -count=1 -short -timeout 20m -tags noasm $(ENGINE_PKGS)
	$(MAKE) --no-print-directory test-tiers
	$(MAKE) --no-print-directory gpu-compile
	$(MAKE) --no-print-directory fuzz
	$(MAKE) --no-print-directory test-arm64

# test-tiers runs the kernel and model tests again on the x86 tiers below
# this CPU's, with its features masked (GODEBUG): the AVX2 tier (Zen 2/3,
# Haswell to Comet Lake) and, where the CPU has AVX-VNNI, the AVX-VNNI
# tier (Alder Lake and newer desktops), each with the tile layout of
# Q4_0 and Q8_0 that engine/ggml/r16_amd64.go installs there. A CPU
# without AVX2 has no such tiers to test.
test-tiers:
	@if [ "$$(uname -m)" = x86_64 ] && grep -qw avx2 /proc/cpuinfo; then \
	  echo "GODEBUG=cpu.avx512f=off,cpu.avxvnni=off (the AVX2 tier)"; \
	  GODEBUG=cpu.avx512f=off,cpu.avxvnni=off $(GOTEST) -count=1 ./engine/ggml ./engine/model || exit 1; \
	  if grep -qw avx_vnni /proc/cpuinfo; then \
	    echo "GODEBUG=cpu.avx512f=off (the AVX-VNNI tier)"; \
	    GODEBUG=cpu.avx512f=off $(GOTEST) -count=1 ./engine/ggml ./engine/model || exit 1; \
	  else echo "test-tiers: the AVX-VNNI tier skipped: this CPU has no AVX-VNNI"; fi; \
	else echo "test-tiers: skipped: not an x86-64 CPU with AVX2, so there is no lower x86 tier to mask down to"; fi

# gpu-compile compiles every kernel source for Volta … Hopper with the
# NVRTC installed by test-deps (and for gfx906, gfx90a, gfx1030 with
# ROCm 5.2's hipRTC), through the same command users run: flowchat gpu
# compile, which exits non-zero with the compiler's log on any failure.
# No GPU is needed. Where a compiler is missing it says so and skips it.
GPU_ARCHS := sm_70,sm_80,sm_86,sm_89,sm_90
HIP_ARCHS := gfx906,gfx90a,gfx1030
# test-gpu runs the tests only a GPU can run (each skips with its reason
# where there is none): every kernel against its twin on the device, the
# device fixtures' logits against the CPU engine fully offloaded and split
# at several layer counts, the memory an offload takes, the CLI's GPU
# commands. Run it on a machine with an NVIDIA or AMD GPU.
test-gpu:
	$(GO) test -count=1 -v -tags $(TAGS) -run 'GPU' ./native/cuda ./native/hip ./engine/device ./engine/model ./app

# gpu-pack prepares .devx/ (ignored) for a session on a lent GPU machine:
# the app and make test-gpu's test binaries built here, llama.cpp's source
# (LLAMA_SRC) to build there, and tools/gpusession/run.sh, which runs the
# GPU tests, the partitions and the benchmarks side by side with
# llama-bench. Then: the device tool's run, `bash .devx/run.sh`, carry
# [".devx"]. See tools/gpusession/pack.sh.
gpu-pack:
	tools/gpusession/pack.sh

gpu-compile:
	@if ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so'; then \
	  echo "flowchat gpu compile --arch $(GPU_ARCHS)"; \
	  $(GO) run -tags $(TAGS) ./app gpu compile --arch $(GPU_ARCHS) || exit 1; \
	else echo "gpu-compile: skipped for CUDA: libnvrtc not found (as root on Debian bookworm, make test-deps installs it)"; fi
	@if ldconfig -p 2>/dev/null | grep -qE 'libhiprtc\.so|libamdhip64\.so'; then \
	  echo "flowchat gpu compile --hip-arch $(HIP_ARCHS)"; \
	  $(GO) run -tags $(TAGS) ./app gpu compile --hip-arch $(HIP_ARCHS) || exit 1; \
	else echo "gpu-compile: skipped for ROCm: no libhiprtc/libamdhip64 found (make test-deps installs ROCm 5.2's on Debian bookworm)"; fi

# test-arm64 runs the arm64 (NEON) kernels under QEMU user emulation: vet
# of the engine built for arm64, the ggml tests on a CPU with dotprod
# (QEMU_CPU=max) and its kernel tests on one without (cortex-a53, the
# baseline path). It installs qemu-user when root on Debian/Ubuntu; where
# qemu-aarch64 is still missing it says so and skips.
QEMU_ARM64 ?= qemu-aarch64
ARM64_KERNEL_TESTS := 'NEON|Kernel|Dot|MatVec|MatMul|ShortRow|Lanes|Float|Fixtures'
test-arm64:
	@command -v $(QEMU_ARM64) >/dev/null 2>&1 || $(MAKE) --no-print-directory apt PKGS=qemu-user OPTIONAL=1
	@if ! command -v $(QEMU_ARM64) >/dev/null 2>&1; then \
	  echo "test-arm64: $(QEMU_ARM64) not found (Debian: apt-get install qemu-user); arm64 kernel tests skipped"; \
	else \
	  set -ex; \
	  GOARCH=arm64 CGO_ENABLED=0 $(GO) vet $(ENGINE_PKGS); \
	  QEMU_CPU=max GOARCH=arm64 CGO_ENABLED=0 $(GO) test -count=1 -exec $(QEMU_ARM64) ./engine/ggml; \
	  QEMU_CPU=cortex-a53 GOARCH=arm64 CGO_ENABLED=0 $(GO) test -count=1 -exec $(QEMU_ARM64) -run $(ARM64_KERNEL_TESTS) ./engine/ggml; \
	fi

fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; rest=$${t#*:}; fn=$${rest%%:*}; budget=$${rest#*:}; \
	  [ -z "$(FUZZTIME)" ] || budget="$(FUZZTIME)"; \
	  echo "fuzz $$pkg $$fn ($$budget)"; \
	  $(GO) test -tags $(TAGS) -run '^$$' -fuzz "^$$fn\$$" -fuzztime $$budget -fuzzminimizetime 2s $$pkg >/tmp/flowchat-fuzz.log 2>&1 || { cat /tmp/flowchat-fuzz.log; exit 1; }; \
	done

# bench writes issue 6's random-weight models (our GGUF writer and
# quantizer, llama-quantize's tensor mix), measures them with flowchat bench
# (1 and 2 threads, median of 5) and the machine's read bandwidth, and writes
# the table into docs/PERFORMANCE.md (about 15 minutes on 2 cores; run it on
# a quiet machine). BENCH_ARGS narrows it, e.g. BENCH_ARGS="--only tinyllama".
bench: build
	./$(BIN) bench --suite issue6 --report docs/PERFORMANCE.md $(BENCH_ARGS)

# bench-kernels: the kernel and pool micro-benchmarks.
bench-kernels:
	$(GO) test -run '^$$' -bench . -benchtime 200ms ./engine/ggml/ ./engine/parallel/

# install puts the binary, a .desktop file and the icon under PREFIX
# (DESTDIR is prepended for packaging), so that `flowchat` is on the PATH
# and the app is in the desktop's menu; uninstall removes them.
# PREFIX=$$HOME/.local installs for one user without root.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
APP_ID  := io.flowchat.app
INSTALLED := $(DESTDIR)$(BINDIR)/flowchat \
	$(DESTDIR)$(DATADIR)/applications/$(APP_ID).desktop \
	$(DESTDIR)$(DATADIR)/icons/hicolor/512x512/apps/$(APP_ID).png

install: build
	@$(MAKE) --no-print-directory install-files

install-files:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR)/applications $(DESTDIR)$(DATADIR)/icons/hicolor/512x512/apps
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/flowchat
	sed 's|@BINDIR@|$(BINDIR)|' assets/$(APP_ID).desktop > $(DESTDIR)$(DATADIR)/applications/$(APP_ID).desktop
	chmod 644 $(DESTDIR)$(DATADIR)/applications/$(APP_ID).desktop
	install -m 644 assets/icon.png $(DESTDIR)$(DATADIR)/icons/hicolor/512x512/apps/$(APP_ID).png
	@$(MAKE) --no-print-directory desktop-caches
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "note: $(BINDIR) is not on your PATH";; esac

uninstall:
	rm -f $(INSTALLED)
	@$(MAKE) --no-print-directory desktop-caches

# desktop-caches refreshes the menu and icon caches where the tools exist
# (not when staging into DESTDIR).
desktop-caches:
	@if [ -z "$(DESTDIR)" ]; then \
	  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q $(DATADIR)/applications || true; \
	  command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t $(DATADIR)/icons/hicolor || true; \
	fi

clean:
	rm -f $(BIN)
