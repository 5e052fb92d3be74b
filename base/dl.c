/*
 * dl.c - load a library by soname and resolve its functions (dl.h).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kubeletplugin.h"
#include "base/dl.h"

/*
 * The working directory is "/" while the loader searches: an empty or
 * relative LD_LIBRARY_PATH entry (":/opt/lib") means the working
 * directory, which may be one the nodeserver can write (the driver's own
 * directory): a library planted there would run before the sandbox, in
 * the process holding the credentials. The callers are single-threaded
 * here, so the directory is back before anything else looks at it.
 */
static void *
dl_open_at_root(const char *soname)
{
	void	*h;
	int	 cwd, saved;

	if ((cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    chdir("/") == -1) {
		if (cwd != -1)
			(void)close(cwd);
		return (NULL);	/* no search from an unknown directory */
	}
	h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	saved = fchdir(cwd);
	(void)close(cwd);
	if (saved == -1 && h != NULL)
		return (NULL);	/* the process's paths would be wrong */
	return (h);
}

int
dl_load(const char *soname, const char *why, const struct dl_sym *fn,
    size_t n, void *table, size_t tablesize, char *err, size_t errsize)
{
	char	 t[512];
	void	*h, *p;
	size_t	 i;

	if (tablesize > sizeof(t)) {
		snprintf(err, errsize, "%s: table of %zu bytes", soname,
		    tablesize);
		return (KP_ENOTSUP);
	}
	if ((h = dl_open_at_root(soname)) == NULL) {
		const char	*e = dlerror();

		snprintf(err, errsize, "%s cannot be loaded (%s): %s", soname,
		    why, e != NULL ? e : "the working directory could not be "
		    "set to / and back for the search");
		return (KP_ENOTSUP);
	}
	memset(t, 0, sizeof(t));
	for (i = 0; i < n; i++) {
		if (fn[i].off + sizeof(p) > tablesize ||
		    (p = dlsym(h, fn[i].name)) == NULL) {
			snprintf(err, errsize, "%s: no symbol %s", soname,
			    fn[i].name);
			(void)dlclose(h);
			return (KP_ENOTSUP);
		}
		memcpy(t + fn[i].off, &p, sizeof(p));
	}
	/* Never closed: the process uses it until it exits. */
	memcpy(table, t, tablesize);
	return (0);
}
