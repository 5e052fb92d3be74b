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

.PHONY: all build asan deps check check-unit check-asan check-e2e \
	check-style demo clean

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
	    check-e2e

check-style:
	@tools/check-style.sh

check-unit:
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

check-asan:
	@cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1 \
	    UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure

# The whole suite against the normal build, then the suites that drive our
# C code again against the sanitizer build.
check-e2e:
	@KP_BUILD=$(BUILD) node --test --test-concurrency=1 --test-timeout=180000 tests/e2e/
	@KP_BUILD=$(ASAN) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    node --test --test-concurrency=1 --test-timeout=180000 tests/e2e/core.test.js \
	    tests/e2e/rpc.test.js tests/e2e/publish.test.js \
	    tests/e2e/sandbox.test.js

demo: deps build
	@tools/demo.sh

clean:
	rm -rf $(BUILD) $(ASAN)
