// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for t-fiemap.sh: a kernel before 5.8, which has no
 * LOOP_CONFIGURE, so the tool must fall back to LOOP_SET_FD and
 * LOOP_SET_STATUS64.  After LOOP_SET_STATUS64, what the device then holds
 * is printed on stderr as "shim: flags F sizelimit N" (F: the read-only
 * and autoclear bits), so the test can check the fallback set everything
 * LOOP_CONFIGURE would have.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/loop.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	struct loop_info64 info;
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real)
		real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT,
							      "ioctl");
	if (req == LOOP_CONFIGURE) {
		errno = EINVAL;
		return -1;
	}
	ret = real(fd, req, arg);
	if (req == LOOP_SET_STATUS64 && !ret) {
		memset(&info, 0, sizeof(info));
		if (!real(fd, LOOP_GET_STATUS64, &info))
			fprintf(stderr, "shim: flags %u sizelimit %llu\n",
				info.lo_flags & (LO_FLAGS_READ_ONLY |
						 LO_FLAGS_AUTOCLEAR),
				(unsigned long long)info.lo_sizelimit);
	}
	return ret;
}
