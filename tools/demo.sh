#!/bin/sh
# demo.sh - the example driver end to end on this machine: it registers
# with the kubelet simulator (as kubelet 1.34 would), answers a
# NodePrepareResources and a NodeUnprepareResources call, shows its
# processes, and stops cleanly. `make demo` runs it after the build.
set -eu
cd "$(dirname "$0")/.."
BUILD=${KP_BUILD:-build}
DRIVER=pci.example.com
root=$(mktemp -d /tmp/kp-demo.XXXXXX)
reg=$root/plugins_registry
plug=$root/plugins/$DRIVER
mkdir -p "$reg" "$plug"
log=$root/driver.log
pid=

cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$root"
}
trap cleanup EXIT INT TERM

section() { printf '\n== %s\n' "$1"; }

section "starting $BUILD/examples/pci-driver (kubelet root: $root)"
"$BUILD/examples/pci-driver" --driver-name $DRIVER \
    --registrar-socket "$reg/$DRIVER-reg.sock" \
    --plugin-socket "$plug/dra.sock" -v 1 2>"$log" &
pid=$!
for i in $(seq 1 100); do
	[ -S "$reg/$DRIVER-reg.sock" ] && break
	sleep 0.1
done
[ -S "$reg/$DRIVER-reg.sock" ] || { cat "$log"; exit 1; }
ls -l "$reg" "$plug" | sed 's/^/  /'

section "kubelet (simulated, 1.34): registration, prepare, unprepare"
uid=$(cat /proc/sys/kernel/random/uuid)
node tests/kubelet-sim/cli.js --registry "$reg" --version 1.34 \
    --prepare "default/demo-claim/$uid" --unprepare "default/demo-claim/$uid"

section "processes of the plugin"
printf '  %-8s %-8s %-6s %-18s %s\n' PID PPID UID CAPEFF ROLE
for p in $pid $(pgrep -P $pid) $(for c in $(pgrep -P $pid); do pgrep -P "$c"; done); do
	[ -r /proc/$p/status ] || continue
	printf '  %-8s %-8s %-6s %-18s %s\n' "$p" \
	    "$(awk '/^PPid:/{print $2}' /proc/$p/status)" \
	    "$(awk '/^Uid:/{print $2}' /proc/$p/status)" \
	    "$(awk '/^CapEff:/{print $2}' /proc/$p/status)" \
	    "$(cat /proc/$p/comm)"
done

section "stopping (SIGTERM)"
kill -TERM $pid
wait $pid && echo "  driver exited 0"
pid=
[ ! -e "$reg/$DRIVER-reg.sock" ] && [ ! -e "$plug/dra.sock" ] &&
    echo "  socket files removed"
section "driver log"
sed 's/^/  /' "$log"
