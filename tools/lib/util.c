// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the extverity tool.  See util.h.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

void ev_error(const char *fmt, ...)
{
	va_list ap;

	/* On a line of its own, not glued to a progress line being drawn. */
	ev_progress_clear();
	va_start(ap, fmt);
	fputs("extverity: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int ev_verbosity;

void ev_debug(const char *fmt, ...)
{
	va_list ap;

	if (ev_verbosity < 2)
		return;
	ev_progress_clear();
	va_start(ap, fmt);
	fputs("# ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/*
 * The one place the library exits (util.h says why): every allocation of
 * the tool's own bookkeeping comes through here.
 */
static void *check_alloc(void *p)
{
	if (!p) {
		ev_error("out of memory");
		exit(EV_ENOMEM);
	}
	return p;
}

void *xmalloc(size_t size)
{
	return check_alloc(malloc(size ? size : 1));
}

void *xzalloc(size_t size)
{
	return check_alloc(calloc(1, size ? size : 1));
}

void *xcalloc(size_t n, size_t size)
{
	return check_alloc(calloc(n ? n : 1, size ? size : 1));
}

void *xrealloc(void *p, size_t size)
{
	return check_alloc(realloc(p, size ? size : 1));
}

char *xstrdup(const char *s)
{
	return check_alloc(strdup(s));
}

void xgrow(void **p, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap;

	if (n <= c)
		return;
	if (c < 16)
		c = 16;
	while (c < n) {
		if (c > SIZE_MAX / 2 / size)
			check_alloc(NULL);
		c *= 2;
	}
	*p = xrealloc(*p, c * size);
	*cap = c;
}

int ev_pread(int fd, void *buf, size_t len, u64 off)
{
	u8 *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

int ev_pread_padded(int fd, void *buf, size_t len, u64 off)
{
	u8 *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		p += n;
		len -= n;
		off += n;
	}
	memset(p, 0, len);
	return 0;
}

int ev_pwrite(int fd, const void *buf, size_t len, u64 off)
{
	const u8 *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)	/* never for files; would loop forever */
			return -EIO;
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

void ev_bin2hex(const u8 *bin, size_t len, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		hex[2 * i] = digits[bin[i] >> 4];
		hex[2 * i + 1] = digits[bin[i] & 15];
	}
	hex[2 * len] = '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int ev_hex2bin(const char *hex, u8 *bin, size_t max, size_t *len)
{
	size_t n = strlen(hex), i;

	if (n % 2 || n / 2 > max)
		return -EINVAL;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		bin[i] = hi << 4 | lo;
	}
	*len = n / 2;
	return 0;
}

int ev_parse_u64(const char *s, u64 *v)
{
	char *end;
	unsigned long long x;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

int ev_parse_block_size(const char *s, unsigned int *log_blocksize)
{
	u64 v;

	if (ev_parse_u64(s, &v))
		return -EINVAL;
	switch (v) {
	case 1024:
		*log_blocksize = 10;
		return 0;
	case 2048:
		*log_blocksize = 11;
		return 0;
	case 4096:
		*log_blocksize = 12;
		return 0;
	}
	return -EINVAL;
}

int ev_parse_salt(const char *s, u8 *salt, size_t max, size_t *len)
{
	if (!strcmp(s, "-") || !*s) {
		*len = 0;
		return 0;
	}
	return ev_hex2bin(s, salt, max, len);
}

int ev_parse_uuid(const char *s, u8 uuid[16])
{
	static const int dash[] = { 8, 13, 18, 23 };
	char hex[33];
	size_t i, j = 0, d = 0, len;

	if (strlen(s) != 36)
		return -EINVAL;
	for (i = 0; i < 36; i++) {
		if (d < 4 && (int)i == dash[d]) {
			if (s[i] != '-')
				return -EINVAL;
			d++;
			continue;
		}
		hex[j++] = s[i];
	}
	hex[j] = '\0';
	return ev_hex2bin(hex, uuid, 16, &len);
}

void ev_format_uuid(const u8 uuid[16], char out[37])
{
	char hex[33];

	ev_bin2hex(uuid, 16, hex);
	snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8,
		 hex + 12, hex + 16, hex + 20);
}

int ev_random(void *buf, size_t len)
{
	u8 *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

bool ev_is_zero(const void *buf, size_t len)
{
	const u8 *p = buf;

	/* Compare the buffer with itself shifted by one byte. */
	return !len || (!p[0] && !memcmp(p, p + 1, len - 1));
}
