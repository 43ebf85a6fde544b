/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types and helpers that drivers/md/dm-extverity-format.c
 * uses, for its userspace build.  Nothing else belongs here: the shared code
 * is kept free of locks, I/O and allocation so that this shim stays tiny.
 */
#ifndef EXTVERITY_COMPAT_H
#define EXTVERITY_COMPAT_H

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define BIT_ULL(n)	(1ULL << (n))
#define __printf(a, b)	__attribute__((format(printf, a, b)))

#define le16_to_cpu(x)	le16toh(x)
#define le32_to_cpu(x)	le32toh(x)
#define le64_to_cpu(x)	le64toh(x)
#define cpu_to_le16(x)	htole16(x)
#define cpu_to_le32(x)	htole32(x)
#define cpu_to_le64(x)	htole64(x)

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

#endif /* EXTVERITY_COMPAT_H */
