# kubeletplugin - the human entry point. CMake does the building.
#   make          configure and build (build/)
#   make check    deps, build, unit tests, ASan+UBSan build and its tests,
#                 end-to-end tests against the independent test peers
#   make deps     install missing Debian and npm packages
#   make demo     deps, build, run the example driver end to end
BUILD	?= build
ASAN	?= build-asan
JOBS	?= 2
CMAKE	?= cmake
# cmake --build runs make again, a sub-make here: without this each of
# its levels prints "Entering/Leaving directory" for every target.
MAKEFLAGS += --no-print-directory

.PHONY: all build asan deps check check-unit check-asan check-e2e \
	check-style demo clean fuzz fuzz-build check-fuzz check-valgrind

all: build

build:
	@$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@$(CMAKE) --build $(BUILD) -j $(JOBS)

asan:
	@CC=clang $(CMAKE) -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug \
	    -DKP_SANITIZE=ON >/dev/null
	@$(CMAKE) --build $(ASAN) -j $(JOBS)

deps:
	@tools/deps.sh

check: deps
	@$(MAKE) --no-print-directory build asan
	@$(MAKE) --no-print-directory check-style check-unit check-asan \
	    check-valgrind check-fuzz check-e2e

check-style:
	@tools/check-style.sh

check-unit:
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Every unit test under valgrind memcheck: no error, no definite leak
# (about 20 s). Not test_seccomp: it loads the real seccomp filters, which
# do not allow valgrind's own syscalls. The end-to-end suites' children
# sandbox themselves the same way, so they run under ASan instead.
check-valgrind:
	@cd $(BUILD)/tests && for t in test_*; do \
	    case $$t in test_seccomp|*.*) continue;; esac; \
	    valgrind -q --error-exitcode=99 --leak-check=full \
	        --errors-for-leak-kinds=definite ./$$t >$$t.valgrind.log \
	        2>&1 || { tail -40 $$t.valgrind.log; exit 1; }; \
	done; echo "check-valgrind: ok"

check-asan:
	@cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1 \
	    UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure

# The whole suite against the normal build, then the suites that drive our
# C code again against the sanitizer build. A per-test timeout where the
# node has one (20.11+; Debian 12's node 18 does not): a hung peer then
# cannot hang CI.
#
# Two files at a time (E2E_JOBS): a file spends most of its time waiting
# on the plugin's timers (heartbeats, backoffs, sync delays), a few percent
# of a core, and each has its own directories, sockets and ports (0); a
# test that changes machine-wide state takes a lock (tests/e2e/lib/plugin.js
# machineLock). tools/e2e-run.js starts them in the order given, unlike
# node --test: the slowest first (E2E_SLOW, E2E_ASAN: about the order of
# their times), so that no long one starts last; every other file follows
# in name order. E2E_JOBS=1 runs them one by one.
NODE_TIMEOUT	:= $(shell node --test-timeout=1 -e 0 >/dev/null 2>&1 && \
		    echo --test-timeout=300000)
E2E_JOBS	?= 2
# The sanitizer list one at a time: each of its files is about twice as
# slow when two run (ASan's CPU), so two gain little there.
E2E_ASAN_JOBS	?= 1
E2E_SLOW	 = slices chaos hostile faults observer health lifecycle \
		   publish redteam exhaustion http core channels
E2E_ASAN	 = hostile observer lifecycle publish core channels \
		   pci-driver sandbox rpc isolation rolling attack connections \
		   metadata toolkit files claiminfo libraries confine cancel \
		   journal-rolling redteam-issue27 redteam-session35
e2e_files	 = $(patsubst %,tests/e2e/%.test.js,$(1))
E2E_ALL		 = $(call e2e_files,$(E2E_SLOW)) $(filter-out \
		   $(call e2e_files,$(E2E_SLOW)),$(sort $(wildcard tests/e2e/*.test.js)))
check-e2e:
	@KP_BUILD=$(BUILD) node $(NODE_TIMEOUT) tools/e2e-run.js $(E2E_JOBS) \
	    $(E2E_ALL)
	@KP_BUILD=$(ASAN) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    node $(NODE_TIMEOUT) tools/e2e-run.js $(E2E_ASAN_JOBS) \
	    $(call e2e_files,$(E2E_ASAN))

# libFuzzer targets (tests/fuzz/fuzz_*.c), a third build directory with
# only them built. Each reads its seeds in tests/fuzz/corpus/<target> and
# writes what it finds to $(FUZZ)/corpus/<target>, never to the seeds.
# They link protobuf-c and jansson built with ASan, UBSan and coverage from
# Debian's sources (tools/fuzz-libs.sh, into $(FUZZ)/libs once: about 10 s
# of CPU and a 10 MB source index; nothing when built).
FUZZ		?= build-fuzz
FUZZ_SECONDS	?= 60
FUZZERS		 = $(basename $(notdir $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_RUN	 = ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1

fuzz-build:
	@tools/fuzz-libs.sh $(FUZZ)/libs
	@CC=clang $(CMAKE) -S . -B $(FUZZ) -DCMAKE_BUILD_TYPE=Debug \
	    -DKP_FUZZ=ON -DKP_SANITIZE=ON \
	    -DKP_FUZZ_LIBS=$(abspath $(FUZZ))/libs/prefix >/dev/null
	@$(CMAKE) --build $(FUZZ) -j $(JOBS) --target $(FUZZERS)

# Each target for FUZZ_SECONDS; its log is $(FUZZ)/<target>.log.
fuzz: fuzz-build
	@for t in $(FUZZERS); do \
	    seeds=tests/fuzz/corpus/$$t; [ -d $$seeds ] || seeds=; \
	    mkdir -p $(FUZZ)/corpus/$$t; \
	    echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	    $(FUZZ_RUN) $(FUZZ)/tests/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) \
	        -timeout=25 -print_final_stats=1 \
	        -artifact_prefix=$(FUZZ)/$$t- $(FUZZ)/corpus/$$t $$seeds \
	        >$(FUZZ)/$$t.log 2>&1 || { tail -60 $(FUZZ)/$$t.log; \
	        exit 1; }; \
	    printf '  %s, peak RSS %s MB\n' \
	        "$$(sed -n 's/^Done //p' $(FUZZ)/$$t.log)" \
	        "$$(sed -n 's/^stat::peak_rss_mb: *//p' $(FUZZ)/$$t.log)"; \
	done

# The smoke pass of make check: every seed plus 2000 mutations a target,
# 20 s at most each (the slowest, fuzz_sup_handlers, takes 4 to 12 s).
check-fuzz: fuzz-build
	@for t in $(FUZZERS); do \
	    seeds=tests/fuzz/corpus/$$t; [ -d $$seeds ] || seeds=; \
	    rm -rf $(FUZZ)/smoke/$$t; mkdir -p $(FUZZ)/smoke/$$t; \
	    $(FUZZ_RUN) $(FUZZ)/tests/fuzz/$$t -runs=2000 -seed=1 -timeout=25 \
	        -max_total_time=20 \
	        -artifact_prefix=$(FUZZ)/$$t- $(FUZZ)/smoke/$$t $$seeds \
	        >$(FUZZ)/$$t.smoke.log 2>&1 || { \
	        tail -60 $(FUZZ)/$$t.smoke.log; exit 1; }; \
	done; echo "check-fuzz: ok ($(FUZZERS))"

demo: deps build
	@tools/demo.sh

# Speed and memory against a bare gRPC C-core server, printed as a table
# (bench/run.js; no timing is asserted). BENCH_FLAGS scales it, e.g.
# BENCH_FLAGS="--rounds 5 --secs 5 --concurrency 16".
.PHONY: bench
bench: build
	@KP_BUILD=$(BUILD) node bench/run.js $(BENCH_FLAGS)

clean:
	rm -rf $(BUILD) $(ASAN)

# A driver's container image, built offline with podman from this
# machine's files (tools/image.sh; deploy/image/Containerfile): DRIVER is
# the binary (the example's by default), NAME its name in the image (the
# binary's file name), IMAGE the reference
# (localhost/kubeletplugin/<NAME>:0.1.0), e.g.
#   make image DRIVER=build/examples/minimal-driver \
#       IMAGE=registry.example.com/minimal-driver:1.0
DRIVER	?= $(BUILD)/examples/pci-driver
NAME	?= $(notdir $(DRIVER))
IMAGE	?= localhost/kubeletplugin/$(NAME):0.1.0
.PHONY: image
image: build
	@tools/image.sh --build $(BUILD) --driver $(DRIVER) --name $(NAME) \
	    --image $(IMAGE)
