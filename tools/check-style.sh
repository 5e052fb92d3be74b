#!/bin/sh
# check-style.sh - project rules a grep can enforce (STYLE.md 13 and 22,
# docs/design.md "Layout"): one internal interface per foreign library,
# the include graph of the process folders, and no banned calls in the
# library's code.
set -eu
cd "$(dirname "$0")/.."
fail=0
LIBDIRS="api base monitor supervisor ipc rpc registrar nodeserver publisher
observer policy"

only() {	# only <pattern> <allowed file regex> <what>
	bad=$(grep -rlE "$1" $LIBDIRS --include='*.c' --include='*.h' |
	    grep -vE "$2" || true)
	if [ -n "$bad" ]; then
		echo "check-style: $3 outside its adapter: $bad" >&2
		fail=1
	fi
}
only '#include <grpc/' '^rpc/grpc_core\.c$' '<grpc/...> included'
only '\bgrpc_[a-z_]+\(' '^rpc/' 'grpc_* called'
only '#include <curl/' '^publisher/(http(_auth|_watch)?\.c|http_int\.h|curl_dl\.h)$' \
    '<curl/...> included'
only '#include <seccomp\.h>' '^policy/' '<seccomp.h> included'
only '#include <cap-ng\.h>' '^policy/' '<cap-ng.h> included'
only '#include <microhttpd\.h>' '^observer/mhd_dl\.h$' '<microhttpd.h> included'
# libcurl and libmicrohttpd are loaded by their role alone, by soname,
# before its sandbox (docs/security.md), through base/dl.c: no other dlopen.
only '\bdlopen\(' '^base/dl\.c$' 'dlopen called'
only '\bdl_load\(' '^(base/dl|publisher/curl_dl|observer/mhd_dl)\.[ch]$' 'dl_load called'
only '#include <openssl/' '^api/rolling_name\.c$' '<openssl/...> included'
only '#include <zlib\.h>' '^nodeserver/journal\.c$' '<zlib.h> included'

# The include graph (docs/design.md): base/ at the bottom; ipc/, policy/
# and rpc/ above it; each role folder on top of those and never another
# role's; the supervisor never sees gRPC, libcurl or a role's internals;
# api/ (the driver process) is the only folder that starts the supervisor.
# Proto output (*.pb-c.h) and the public header are allowed everywhere.
includes() {	# includes <folder> <allowed folders, space separated>
	allowed=$(printf '%s|' $2 "$1")
	bad=$(grep -HnE '#include "[a-z_]+/' "$1"/*.c "$1"/*.h 2>/dev/null |
	    grep -vE "#include \"(${allowed%|})/" || true)
	if [ -n "$bad" ]; then
		echo "check-style: $1/ includes outside its layer:" >&2
		echo "$bad" >&2
		fail=1
	fi
}
includes base ""
includes ipc "base"
includes policy "base ipc"
includes rpc "base ipc"
includes monitor "base ipc policy"
includes supervisor "base ipc policy"
includes registrar "base ipc policy rpc"
includes nodeserver "base ipc policy rpc"
includes publisher "base ipc policy"
includes observer "base ipc policy"
includes api "base ipc policy supervisor monitor"

banned=$(grep -rnE '(^|[^_a-z])(exit|abort|assert|sprintf|vsprintf|strcpy|strcat|atoi|atol|system|gets)\(' \
    $LIBDIRS --include='*.c' | grep -v 'check-style: allow' || true)
if [ -n "$banned" ]; then
	echo "check-style: banned calls (see STYLE.md 22):" >&2
	echo "$banned" >&2
	fail=1
fi
# The monitor's size (issue 24): its files, listed in docs/security.md.
tools/monitor-lines.sh >/dev/null || fail=1
[ $fail -eq 0 ] && echo "check-style: ok"
exit $fail
