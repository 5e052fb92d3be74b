#!/bin/sh
# image.sh - build a driver's container image offline (make image): the
# driver binary (libkubeletplugin linked in statically) as
# /usr/local/bin/<name>, its entrypoint, and tools/kubeletplugin-probe
# (the exec probe), stripped, with the shared libraries ldd resolves for
# them at the same paths, in a scratch image (deploy/image/Containerfile,
# its entrypoint renamed) built by podman. Prints the image's size.
#
#   tools/image.sh [--build DIR] [--driver PATH] [--name NAME]
#                  [--image REF] [--add PATH]...
#   tools/image.sh [BUILD_DIR [IMAGE]]        (the example, as before)
#
# --build: the build tree (build); --driver: the driver binary
# (<build>/examples/pci-driver); --name: its name in the image and the
# image's (the binary's file name); --image: the image reference
# ($KP_IMAGE, else localhost/kubeletplugin/<name>:0.1.0); --add: one more
# binary into /usr/local/bin with its libraries (a test's attack binary,
# a helper your driver execs).
set -eu
cd "$(dirname "$0")/.."

usage() {
	sed -n '9,10p' "$0" | sed 's/^#  *//' >&2
	exit 64
}

build=build
driver=
name=
image=${KP_IMAGE:-}
extra=
npos=0
while [ $# -gt 0 ]; do
	case $1 in
	--build|--driver|--name|--image|--add)
		[ $# -ge 2 ] || usage
		case $1 in
		--build)	build=$2 ;;
		--driver)	driver=$2 ;;
		--name)		name=$2 ;;
		--image)	image=$2 ;;
		--add)		extra="$extra $2" ;;
		esac
		shift 2 ;;
	--help|-h)
		usage ;;
	-*)
		echo "image: unknown option $1" >&2
		usage ;;
	*)
		# The old positional form: BUILD_DIR, then IMAGE.
		npos=$((npos + 1))
		case $npos in
		1)	build=$1 ;;
		2)	image=$1 ;;
		*)	usage ;;
		esac
		shift ;;
	esac
done
driver=${driver:-$build/examples/pci-driver}
name=${name:-$(basename "$driver")}
# The name is a file name in the image and part of the image reference.
case $name in
''|*[!A-Za-z0-9._-]*|.*)
	echo "image: --name $name: letters, digits, '.', '_', '-' only," \
	    "not starting with '.'" >&2
	exit 64 ;;
esac
image=${image:-localhost/kubeletplugin/$name:0.1.0}
bins="$driver $build/tools/kubeletplugin-probe$extra"
# One context a driver name: two images built at once (make check runs
# two test files at a time) never share a directory.
ctx=$build/image/$name
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
strip -o "$root/usr/local/bin/$name" "$driver"
for b in $build/tools/kubeletplugin-probe $extra; do
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
# The Containerfile names the example; its entrypoint becomes the driver.
sed "s|/usr/local/bin/pci-driver\"|/usr/local/bin/$name\"|" \
    deploy/image/Containerfile > "$ctx/Containerfile"

start=$(date +%s)
podman build --quiet -f "$ctx/Containerfile" -t "$image" "$ctx" >/dev/null
end=$(date +%s)
size=$(podman image inspect --format '{{.Size}}' "$image")
echo "image: $image, $((size / 1024 / 1024)) MiB" \
    "($(find "$root" -type f | wc -l) files), built in $((end - start)) s"
