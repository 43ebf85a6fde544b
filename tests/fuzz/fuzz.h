/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the libFuzzer harnesses of tests/fuzz (docs/testing.md,
 * "Fuzzing").  Each harness checks invariants, and a broken one must stop
 * the fuzzer like a sanitizer report does: the message goes through the
 * sanitizer's report descriptor, which libFuzzer keeps open even when
 * -close_fd_mask=3 silences the tool's own "extverity: ..." errors.
 */
#ifndef EXTVERITY_FUZZ_H
#define EXTVERITY_FUZZ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sanitizer/common_interface_defs.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static inline __attribute__((format(printf, 3, 4), noreturn)) void
fuzz_fail(const char *file, int line, const char *fmt, ...)
{
	char msg[1024];
	int n;
	va_list ap;

	n = snprintf(msg, sizeof(msg), "extverity fuzz: invariant broken at "
		     "%s:%d: ", file, line);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	__sanitizer_report_error_summary(msg);
	abort();
}

/* FUZZ_CHECK(cond, "printf format", ...): the invariant @cond must hold. */
#define FUZZ_CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			fuzz_fail(__FILE__, __LINE__, __VA_ARGS__);	\
	} while (0)

/* A NUL-terminated copy of the input, for the string parsers; free() it. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	for (size_t i = 0; i < size; i++)
		s[i] = data[i];
	s[size] = '\0';
	return s;
}

#endif /* EXTVERITY_FUZZ_H */
