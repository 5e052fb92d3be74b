#!/bin/sh
# fuzz-libs.sh - protobuf-c and jansson, the two libraries that parse a
# child's bytes in the supervisor, built from Debian's source packages of
# the versions installed (apt-get source, from the mirror the system's
# apt sources name) with clang, ASan, UBSan and libFuzzer's coverage
# hooks, as static libraries for the fuzz build (make fuzz-build links
# them instead of the system's uninstrumented shared ones).
#
# Usage: tools/fuzz-libs.sh DIR
# Leaves DIR/prefix/{include,lib}: libprotobuf-c.a, libjansson.a and their
# headers. DIR/src holds the downloaded and unpacked sources (never
# committed). A prefix built from the same versions with the same flags is
# kept: a warm run only compares DIR/prefix/.stamp.
#
# apt runs with a private configuration under DIR/apt (deb-src entries made
# from the system's Debian entries, its own lists and cache): the system's
# apt state is not touched, and sources are verified like any package
# (signed Release, hashes).
set -eu

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
mkdir -p "$1"
dir=$(cd "$1" && pwd)
prefix=$dir/prefix
CC=${CC:-clang}
CFLAGS="-O1 -g -fPIC -fno-omit-frame-pointer -fsanitize=address,undefined \
-fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link"

srcver() {
	dpkg-query -W -f='${source:Package}=${source:Version}' "$1"
}
# package=[epoch:]version -> package_version.dsc
dsc() {
	echo "$1" | sed 's/=\([0-9]*:\)\{0,1\}/_/; s/$/.dsc/'
}
pc=$(srcver libprotobuf-c-dev)
js=$(srcver libjansson-dev)
stamp="$pc $js $CC $CFLAGS patch-1"
if [ -f "$prefix/.stamp" ] && [ "$(cat "$prefix/.stamp")" = "$stamp" ]; then
	exit 0
fi
echo "fuzz-libs: building instrumented $pc $js in $prefix"

# The system's Debian sources, as deb-src (deb822 stanzas and one-line
# entries both), in a private apt tree.
apt=$dir/apt
mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial"
: >"$apt/sources.list"
rm -f "$apt/parts/"*.sources
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	awk 'BEGIN { RS = ""; ORS = "\n\n" }
	    /URIs:[^\n]*debian/ { sub(/Types:[^\n]*/, "Types: deb-src"); print }' \
	    "$f" >"$apt/parts/$(basename "$f")"
done
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] || continue
	sed -n 's/^deb \(.*debian.*\)/deb-src \1/p' "$f" >>"$apt/sources.list"
done
APT="apt-get -q -o Dir::Etc::SourceList=$apt/sources.list
    -o Dir::Etc::SourceParts=$apt/parts -o Dir::State::Lists=$apt/lists
    -o Dir::Cache=$apt/cache -o APT::Get::List-Cleanup=0"
[ "$(id -u)" -ne 0 ] || APT="$APT -o APT::Sandbox::User=root"

src=$dir/src
mkdir -p "$src"
cd "$src"
for p in $pc $js; do
	[ -f "$(dsc "$p")" ] && continue
	# An index older than the package (or none yet): fetch the index.
	$APT source --download-only "$p" >/dev/null 2>&1 || {
		$APT update >apt-update.log 2>&1 || cat apt-update.log >&2
		$APT source --download-only "$p" >apt-source.log 2>&1 || {
			cat apt-source.log >&2
			echo "fuzz-libs: cannot fetch the source of $p" >&2
			exit 1
		}
	}
done
rm -rf protobuf-c jansson jansson-*.o "$prefix"
# (apt checked the files against the signed index; dpkg-source's own
# check of the .dsc signature needs debian-keyring: its output is kept.)
dpkg-source -x "$(dsc "$pc")" protobuf-c >unpack.log 2>&1 &&
    dpkg-source -x "$(dsc "$js")" jansson >>unpack.log 2>&1 || {
	cat unpack.log >&2
	exit 1
}
mkdir -p "$prefix/lib" "$prefix/include/protobuf-c"

# protobuf-c: the runtime is one file (protoc-c, the compiler, is not
# needed: the system's generates the code). One change: unpacking a
# message without fields (Stop, RegStatusQuery: every such frame) computes
# NULL + 0, undefined in C and without effect on any compiler, which UBSan
# would report on the first such frame; the pointer is taken as is.
# (parse_tag_and_wiretype's signed shift is not patched: ipc/frame.c's
# walk keeps its inputs away, and the fuzzers check that it does.)
sed -i 's/\(\*last_field = desc->fields\) + 0;/\1;/' \
    protobuf-c/protobuf-c/protobuf-c.c
$CC $CFLAGS -c protobuf-c/protobuf-c/protobuf-c.c -o protobuf-c.o
ar rcs "$prefix/lib/libprotobuf-c.a" protobuf-c.o
cp protobuf-c/protobuf-c/protobuf-c.h "$prefix/include/protobuf-c/"

# jansson: its sources with the configuration Debian's build found (the
# installed jansson_config.h of the same version) and what its configure
# finds on glibc (the project's only platform), without running a
# configure (half a minute of CPU: the whole build is a few seconds).
cp jansson/src/jansson.h "$(dpkg -L libjansson-dev | grep '/jansson_config\.h$')" \
    "$prefix/include/"
cat >jansson_private_config.h <<EOF
#define HAVE_ENDIAN_H 1
#define HAVE_FCNTL_H 1
#define HAVE_SCHED_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_PARAM_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_STDINT_H 1
#define HAVE_CLOSE 1
#define HAVE_GETPID 1
#define HAVE_GETTIMEOFDAY 1
#define HAVE_OPEN 1
#define HAVE_READ 1
#define HAVE_SCHED_YIELD 1
#define HAVE_SYNC_BUILTINS 1
#define HAVE_ATOMIC_BUILTINS 1
#define HAVE_LOCALE_H 1
#define HAVE_SETLOCALE 1
#define USE_URANDOM 1
#define INITIAL_HASHTABLE_ORDER 3
EOF
for f in jansson/src/*.c; do
	$CC $CFLAGS -DHAVE_CONFIG_H -I. -I"$prefix/include" -c "$f" \
	    -o "jansson-$(basename "$f" .c).o"
done
ar rcs "$prefix/lib/libjansson.a" jansson-*.o
echo "$stamp" >"$prefix/.stamp"
