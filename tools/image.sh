#!/bin/sh
# image.sh - build the example driver's container image offline (make
# image): the build tree's examples/pci-driver (libkubeletplugin linked in
# statically) and tools/kubeletplugin-probe (the exec probe), stripped,
# with the shared libraries ldd resolves for them at the same paths, in a
# scratch image (deploy/image/Containerfile) built by podman. Prints the
# image's size.
#
#   tools/image.sh [BUILD_DIR] [IMAGE]
#
# BUILD_DIR: build (the default); IMAGE: $KP_IMAGE, else
# localhost/kubeletplugin/pci-driver:0.1.0.
set -eu
cd "$(dirname "$0")/.."

build=${1:-build}
image=${2:-${KP_IMAGE:-localhost/kubeletplugin/pci-driver:0.1.0}}
bins="$build/examples/pci-driver $build/tools/kubeletplugin-probe"
ctx=$build/image
root=$ctx/rootfs

command -v podman >/dev/null 2>&1 || {
	echo "image: podman is missing: run tools/deps.sh" >&2
	exit 1
}
for b in $bins; do
	[ -x "$b" ] || { echo "image: $b missing: run make build" >&2; exit 1; }
done

rm -rf "$ctx"
mkdir -p "$root/usr/local/bin"
for b in $bins; do
	strip -o "$root/usr/local/bin/$(basename "$b")" "$b"
done
# libcurl and libmicrohttpd are loaded by soname at run time (the
# publisher, the observer: docs/security.md "Libraries"), so no binary's
# ldd list has them: found as the loader finds them, with their own lists.
dl=
for so in libcurl.so.4 libmicrohttpd.so.12; do
	p=$(ldconfig -p | awk -v s="$so" '$1 == s { print $NF; exit }')
	[ -n "$p" ] || { echo "image: $so missing: run tools/deps.sh" >&2; exit 1; }
	dl="$dl $p"
done
# Every library at the path the loader found it (ld.so's built-in
# multiarch directories find them again without an ld.so.cache). The
# vDSO has no path; ldd heads each binary's list with "<path>:".
for lib in $(ldd $bins $dl | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
    $1 ~ /^\// && $1 !~ /:$/ { print $1 }' | sort -u) $dl; do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
# Mount points the runtime fills in (a read-only root cannot get them
# later): /tmp is the pod's emptyDir, /var/run/cdi and /var/lib/kubelet
# host directories, /var/run/secrets the service-account token.
mkdir -p "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/run" \
    "$root/etc" "$root/var/lib/kubelet" "$root/var/run/cdi" \
    "$root/var/run/secrets"
chmod 1777 "$root/tmp"

start=$(date +%s)
podman build --quiet -f deploy/image/Containerfile -t "$image" "$ctx" \
    >/dev/null
end=$(date +%s)
size=$(podman image inspect --format '{{.Size}}' "$image")
echo "image: $image, $((size / 1024 / 1024)) MiB" \
    "($(find "$root" -type f | wc -l) files), built in $((end - start)) s"
