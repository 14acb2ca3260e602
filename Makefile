# flowchat — the two commands a new user runs are `make run` and `make test`.
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
TEST_PKGS := xvfb xdotool x11-apps
ENGINE_PKGS := ./engine/... ./native/... ./specs/...

.PHONY: all run build deps test-deps apt test fuzz vet bench clean

# Fuzz targets for every parser of outside bytes, run briefly by `make test`
# (their seed corpora also run as plain tests). FUZZTIME=1m for longer runs.
FUZZTIME ?= 8s
FUZZ_TARGETS := \
	./engine/gguf:FuzzParse \
	./engine/safetensors:FuzzParse \
	./engine/pickle:FuzzLoad \
	./engine/tokenizer:FuzzHFJSON \
	./engine/tokenizer:FuzzEncode \
	./engine/spec:FuzzParse \
	./engine/chat:FuzzRender \
	./engine:FuzzLoad \
	./engine/eval:FuzzBaseHeader \
	./app/hub:FuzzParseHeader \
	./app/hub:FuzzParseFileName \
	./app/hub:FuzzResponseHeaders \
	./app/store:FuzzImportJSON

all: build

run: build
	./$(BIN) $(ARGS)

build: deps
	$(GO) build -tags $(TAGS) -o $(BIN) ./app

# deps installs missing Debian packages (root only; others get a hint) and
# downloads Go modules.
deps:
	@$(MAKE) --no-print-directory apt PKGS="$(APT_PKGS)"
	$(GO) mod download

test-deps: deps
	@$(MAKE) --no-print-directory apt PKGS="$(TEST_PKGS)" OPTIONAL=1

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
test: vet
	$(GO) test -tags $(TAGS) -count=1 ./...
	CGO_ENABLED=0 $(GO) test -count=1 $(ENGINE_PKGS)
	CGO_ENABLED=0 $(GO) test -count=1 -tags noasm $(ENGINE_PKGS)
	$(MAKE) --no-print-directory fuzz

fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "fuzz $$pkg $$fn ($(FUZZTIME))"; \
	  $(GO) test -tags $(TAGS) -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s $$pkg >/tmp/flowchat-fuzz.log 2>&1 || { cat /tmp/flowchat-fuzz.log; exit 1; }; \
	done

# bench runs the kernel benchmarks and the end-to-end llama-bench-style
# benchmark on the demo model. See docs/PERFORMANCE.md for the model-shape
# benchmarks and how they were produced.
bench: build
	$(GO) test -run '^$$' -bench . -benchtime 200ms ./engine/ggml/ ./engine/parallel/
	./$(BIN) bench -p 128 -n 64 -t 1,2 -r 5

clean:
	rm -f $(BIN)
