#!/bin/sh
# check-style.sh - project rules a grep can enforce (STYLE.md 13 and 22):
# one internal interface per foreign library, and no banned calls in the
# library's code.
set -eu
cd "$(dirname "$0")/.."
fail=0
LIBDIRS="supervisor ipc rpc registrar nodeserver publisher policy"

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
only '#include <curl/' '^publisher/(http(_auth|_watch)?\.c|http_int\.h)$' \
    '<curl/...> included'
only '#include <seccomp\.h>' '^policy/' '<seccomp.h> included'
only '#include <cap-ng\.h>' '^policy/' '<cap-ng.h> included'

banned=$(grep -rnE '(^|[^_a-z])(exit|abort|assert|sprintf|vsprintf|strcpy|strcat|atoi|atol|system|gets)\(' \
    $LIBDIRS --include='*.c' | grep -v 'check-style: allow' || true)
if [ -n "$banned" ]; then
	echo "check-style: banned calls (see STYLE.md 22):" >&2
	echo "$banned" >&2
	fail=1
fi
[ $fail -eq 0 ] && echo "check-style: ok"
exit $fail
