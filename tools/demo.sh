#!/bin/sh
# demo.sh - the example driver end to end on this machine (`make demo`
# runs it after the set-up and the build): the kube-apiserver emulator with
# a Node, build/examples/pci-driver publishing this machine's real PCI
# devices, the kubelet simulator registering it and preparing a claim
# allocated to one of them (CDI spec file included), the plugin's processes
# and their sandbox, and a clean stop. The steps live in tools/demo.js.
#
# Environment: KP_BUILD (build directory, default build), KP_DEMO_KEEP=1
# keeps the temporary kubelet root.
set -eu
cd "$(dirname "$0")/.."
BUILD=${KP_BUILD:-build}
if [ ! -x "$BUILD/examples/pci-driver" ]; then
	echo "demo: $BUILD/examples/pci-driver is missing; run make (or make demo)" >&2
	exit 1
fi
if [ ! -d node_modules/@grpc/grpc-js ]; then
	echo "demo: node_modules missing; run tools/deps.sh (or make demo)" >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: NOTE: not root: the plugin's sandbox is reduced (see below)." >&2
fi
KP_BUILD=$BUILD exec node tools/demo.js
