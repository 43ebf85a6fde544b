// SPDX-License-Identifier: GPL-2.0
/*
 * t-fec.sh's driver of tools/lib/fec.c:
 *
 *   fec-encode BLOCK_SIZE ROOTS THREADS OUT FILE[@START[+LEN]]...
 *
 * writes to OUT the parity of the files (from byte START, LEN bytes or to
 * the end), concatenated in that order.  Exit 0, or 1 with the error.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fec.h"

#define MAX_INPUTS 4

int main(int argc, char **argv)
{
	struct ev_fec_input in[MAX_INPUTS];
	const char *why = NULL;
	int i, out, err;

	if (argc < 6 || argc - 5 > MAX_INPUTS) {
		fprintf(stderr, "usage: fec-encode BLOCK_SIZE ROOTS THREADS OUT FILE[@START[+LEN]]...\n");
		return 2;
	}
	for (i = 5; i < argc; i++) {
		struct ev_fec_input *x = &in[i - 5];
		char *at = strchr(argv[i], '@'), *plus = NULL;
		struct stat st;

		if (at) {
			*at++ = '\0';
			plus = strchr(at, '+');
		}
		x->fd = open(argv[i], O_RDONLY);
		if (x->fd < 0 || fstat(x->fd, &st)) {
			perror(argv[i]);
			return 1;
		}
		x->start = at ? strtoull(at, NULL, 0) : 0;
		x->len = plus ? strtoull(plus + 1, NULL, 0) :
			 (u64)st.st_size - x->start;
	}
	out = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		perror(argv[4]);
		return 1;
	}
	err = ev_fec_encode(in, argc - 5, atoi(argv[1]), atoi(argv[2]), out,
			    0, atoi(argv[3]), &why);
	if (err) {
		fprintf(stderr, "fec-encode: %s: %s\n", why, strerror(-err));
		return 1;
	}
	if (close(out)) {
		perror(argv[4]);
		return 1;
	}
	return 0;
}
