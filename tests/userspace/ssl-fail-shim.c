// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for t-hashfail.sh: OpenSSL failing part-way through.
 * Calls of EVP_DigestFinal_ex() (the last step of every block digest)
 * succeed SHIM_FAIL_AFTER times, then fail.  The first failures wait for
 * one another (up to SHIM_TOGETHER of them, two seconds at most), so that
 * several hashing threads fail at the same moment, as they would when
 * memory runs out under all of them.  With SHIM_COUNT set, the number of
 * calls is printed on stderr at exit, to pick SHIM_FAIL_AFTER.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*final_fn)(void *ctx, unsigned char *md, unsigned int *size);

static atomic_long calls;
static atomic_int failing;

static void wait_for_others(void)
{
	const char *s = getenv("SHIM_TOGETHER");
	int together = s ? atoi(s) : 1, i;
	struct timespec ms = { 0, 1000000 };

	atomic_fetch_add(&failing, 1);
	for (i = 0; i < 2000 && atomic_load(&failing) < together; i++)
		nanosleep(&ms, NULL);
}

int EVP_DigestFinal_ex(void *ctx, unsigned char *md, unsigned int *size)
{
	static final_fn real;
	const char *after = getenv("SHIM_FAIL_AFTER");

	if (!real)
		real = (final_fn)dlsym(RTLD_NEXT, "EVP_DigestFinal_ex");
	if (after && atomic_fetch_add(&calls, 1) >= atol(after)) {
		wait_for_others();
		return 0;
	}
	if (!after)
		atomic_fetch_add(&calls, 1);
	return real(ctx, md, size);
}

static __attribute__((destructor)) void count(void)
{
	if (getenv("SHIM_COUNT"))
		fprintf(stderr, "shim: %ld calls\n", atomic_load(&calls));
}
