/*
 * json_guard.c - a byte-level pass over a response before jansson sees
 * it. jansson's tree costs ~150 bytes per value, so 63 MiB of "[]," came
 * to ~3 GiB; counting the values first bounds what a parse can allocate,
 * whatever the API server (or whoever answers in its place) sends.
 */
#include <stdio.h>

#include "kubeletplugin.h"
#include "publisher/publisher.h"

/*
 * 0 when buf (len bytes) has at most JSON_GUARD_VALUES containers and
 * members ('[' '{' ',' outside strings) and nests at most
 * JSON_GUARD_DEPTH deep; else KP_EIO with err naming the request as
 * "<method> <path, 80 bytes at most>" (path NULL: the method alone, e.g.
 * "watch"), formatted only then. Not a validator: jansson still parses it.
 */
int
json_guard(const char *buf, size_t len, const char *method, const char *path,
    char *err, size_t errsize)
{
	size_t	 i, values = 0, depth = 0;
	int	 in_str = 0, esc = 0;

	for (i = 0; i < len; i++) {
		char	 ch = buf[i];

		if (in_str) {
			if (esc)
				esc = 0;
			else if (ch == '\\')
				esc = 1;
			else if (ch == '"')
				in_str = 0;
			continue;
		}
		switch (ch) {
		case '"':
			in_str = 1;
			break;
		case '[':
		case '{':
			if (++depth > JSON_GUARD_DEPTH) {
				snprintf(err, errsize, "%s%s%.80s: response "
				    "nests deeper than %d: refused", method,
				    path != NULL ? " " : "",
				    path != NULL ? path : "", JSON_GUARD_DEPTH);
				return (KP_EIO);
			}
			values++;
			break;
		case ']':
		case '}':
			if (depth > 0)
				depth--;
			break;
		case ',':
			values++;
			break;
		default:
			continue;
		}
		if (values > JSON_GUARD_VALUES) {
			snprintf(err, errsize, "%s%s%.80s: response has more "
			    "than %d JSON values: refused", method,
			    path != NULL ? " " : "", path != NULL ? path : "",
			    JSON_GUARD_VALUES);
			return (KP_EIO);
		}
	}
	return (0);
}
