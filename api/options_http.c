/*
 * options_http.c - the observer's endpoint (issue 14): where /healthz,
 * /readyz and /metrics are served. Parsed here, bound by kp_start()
 * (api/api.c) so that an address in use fails the start, not a child.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

/* "PORT" after the colon: 1..65535, digits only. -1 if not. */
static int
http_port(const char *s)
{
	long	 v = 0;

	if (*s == '\0' || strlen(s) > 5)
		return (-1);
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return (-1);
		v = v * 10 + (*s - '0');
	}
	return (v >= 1 && v <= 65535 ? (int)v : -1);
}

int
kp_http_endpoint(struct kp_options *opts, const char *addr)
{
	char			 q[OPT_QUOTE_SIZE], host[64];
	struct sockaddr_in	 sin;
	struct sockaddr_in6	 sin6;
	const char		*colon;
	size_t			 hl;
	int			 port;

	if (!opt_valid_handle(opts))
		return (KP_EINVAL);
	if (addr == NULL || addr[0] == '\0') {
		opts->http_len = 0;
		opts->http_endpoint[0] = '\0';
		return (0);
	}
	if (strlen(addr) >= sizeof(opts->http_endpoint) ||
	    (colon = strrchr(addr, ':')) == NULL)
		return (opt_fail(opts, KP_EINVAL, "%s: %s: want IPV4:PORT, "
		    "[IPV6]:PORT or :PORT", OPT_HTTP, opt_quote(addr, q,
		    sizeof(q))));
	if ((port = http_port(colon + 1)) == -1)
		return (opt_fail(opts, KP_EINVAL, "%s: %s: the port must be "
		    "a number from 1 to 65535", OPT_HTTP, opt_quote(addr, q,
		    sizeof(q))));
	hl = (size_t)(colon - addr);
	memset(&sin, 0, sizeof(sin));
	memset(&sin6, 0, sizeof(sin6));
	if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
		memcpy(host, addr + 1, hl - 2);
		host[hl - 2] = '\0';
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &sin6.sin6_addr) != 1)
			return (opt_fail(opts, KP_EINVAL, "%s: %s: not an IPv6 "
			    "address literal", OPT_HTTP, opt_quote(addr, q,
			    sizeof(q))));
		memcpy(&opts->http_addr, &sin6, sizeof(sin6));
		opts->http_len = sizeof(sin6);
	} else {
		memcpy(host, addr, hl);
		host[hl] = '\0';
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)port);
		if (hl == 0)
			sin.sin_addr.s_addr = htonl(INADDR_ANY);
		else if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
			return (opt_fail(opts, KP_EINVAL, "%s: %s: not an IPv4 "
			    "address literal (names are not resolved)",
			    OPT_HTTP, opt_quote(addr, q, sizeof(q))));
		memcpy(&opts->http_addr, &sin, sizeof(sin));
		opts->http_len = sizeof(sin);
	}
	memcpy(opts->http_endpoint, addr, strlen(addr) + 1);
	return (0);
}
