#!/bin/sh
# deps.sh - install what building and testing kubeletplugin needs, when it
# is missing: Debian packages (apt-get, as root) and the test peers' npm
# packages (npm ci from the committed lock file). Idempotent and quiet on a
# machine that already has everything.
set -eu
cd "$(dirname "$0")/.."

PKGS="cmake make gcc clang pkg-config libgrpc-dev protobuf-c-compiler
libprotobuf-c-dev libcurl4-openssl-dev libjansson-dev libseccomp-dev
libcap-ng-dev libyaml-dev libmicrohttpd-dev libssl-dev zlib1g-dev
libclang-rt-14-dev openssl strace valgrind iproute2 procps python3-yaml
podman crun runc dpkg-dev apparmor"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
# Node.js may come from elsewhere than Debian (its npm then conflicts with
# Debian's): ask for the packages only when the commands are missing.
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: missing Debian packages:$missing" >&2
		echo "deps: run as root:" >&2
		echo "  apt-get update && DEBIAN_FRONTEND=noninteractive" \
		    "apt-get install -y$missing" >&2
		exit 1
	fi
	echo "deps: installing$missing"
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
fi

# npm ci only when the lock file changed since the last install.
stamp=node_modules/.kp-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
	echo "deps: npm ci"
	npm ci --no-audit --no-fund --loglevel=error
	cp package-lock.json "$stamp"
fi

# A kubectl with kustomize v5 for rendering deploy/ (Debian 12's is 1.20).
tools/kubectl.sh >/dev/null
