#!/bin/sh
# monitor-lines.sh - the lines of the monitor (docs/security.md, "The
# monitor's code"): the files listed there between the monitor-files
# markers, counted without blank lines and comments, at most LIMIT
# (issue 24: a security team reads every one of them as root code).
# Prints the count per file and the total; fails above the limit or when
# a file of monitor/ is missing from the list.
set -eu
cd "$(dirname "$0")/.."
LIMIT=${LIMIT:-2500}
files=$(sed -n '/<!-- monitor-files -->/,/<!-- \/monitor-files -->/p' \
    docs/security.md | sed -n 's/^- `\([^`]*\)`.*/\1/p')
[ -n "$files" ] || { echo "monitor-lines: no file list in docs/security.md" >&2; exit 1; }
for f in monitor/*.c monitor/*.h; do
	echo "$files" | grep -qx "$f" || {
		echo "monitor-lines: $f is not listed in docs/security.md" >&2
		exit 1
	}
done
total=0
for f in $files; do
	# strip /* ... */ comments (the project's only kind) and blank lines
	n=$(awk '
	{
		line = $0; out = ""
		while (length(line) > 0) {
			if (inc) {
				i = index(line, "*/")
				if (i == 0) { line = ""; break }
				line = substr(line, i + 2); inc = 0
			} else {
				i = index(line, "/*")
				if (i == 0) { out = out line; line = ""; break }
				out = out substr(line, 1, i - 1)
				line = substr(line, i + 2); inc = 1
			}
		}
		if (out ~ /[^ \t]/) n++
	}
	END { print n + 0 }' "$f")
	printf '%6d %s\n' "$n" "$f"
	total=$((total + n))
done
printf '%6d total (limit %d)\n' "$total" "$LIMIT"
[ "$total" -le "$LIMIT" ] || { echo "monitor-lines: over the limit" >&2; exit 1; }
