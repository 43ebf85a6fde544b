// SPDX-License-Identifier: GPL-2.0
/*
 * t-fec.sh's driver of tools/lib/fec.c:
 *
 *   fec-encode BLOCK_SIZE ROOTS THREADS OUT FILE[@START[+LEN]]...
 *	writes to OUT the parity of the files (from byte START, LEN bytes
 *	or to the end), concatenated in that order
 *   fec-encode -c BLOCK_SIZE ROOTS PARITY BLOCK OUT FILE[@START[+LEN]]...
 *	writes to OUT that block of the area, corrected with PARITY, and
 *	prints how many symbols its round needed corrected
 *
 * Exit 0, or 1 with the error.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fec.h"

#define MAX_INPUTS 4

static int inputs(struct ev_fec_input *in, int argc, char **argv)
{
	int i;

	if (argc < 1 || argc > MAX_INPUTS)
		return -1;
	for (i = 0; i < argc; i++) {
		char *at = strchr(argv[i], '@'), *plus = NULL;
		struct stat st;

		if (at) {
			*at++ = '\0';
			plus = strchr(at, '+');
		}
		in[i].mem = NULL;
		in[i].fd = open(argv[i], O_RDONLY);
		if (in[i].fd < 0 || fstat(in[i].fd, &st)) {
			perror(argv[i]);
			exit(1);
		}
		in[i].start = at ? strtoull(at, NULL, 0) : 0;
		in[i].len = plus ? strtoull(plus + 1, NULL, 0) :
			    (u64)st.st_size - in[i].start;
	}
	return argc;
}

static int correct(int argc, char **argv)
{
	struct ev_fec_input in[MAX_INPUTS];
	unsigned int bs = atoi(argv[2]), fixed = 0;
	const char *why = NULL;
	int n = inputs(in, argc - 7, argv + 7), parity, out, err;
	u8 *buf = malloc(bs);

	parity = open(argv[4], O_RDONLY);
	if (n < 0 || !buf || parity < 0) {
		fprintf(stderr, "fec-encode -c: bad arguments\n");
		return 1;
	}
	err = ev_fec_correct_block(in, n, bs, atoi(argv[3]), parity, 0,
				   strtoull(argv[5], NULL, 0), buf, &fixed,
				   &why);
	if (err) {
		fprintf(stderr, "fec-encode: %s: %s\n", why, strerror(-err));
		free(buf);
		return 1;
	}
	out = open(argv[6], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0 || write(out, buf, bs) != (ssize_t)bs || close(out)) {
		perror(argv[6]);
		free(buf);
		return 1;
	}
	printf("corrected %u\n", fixed);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	struct ev_fec_input in[MAX_INPUTS];
	const char *why = NULL;
	int n, out, err;

	if (argc >= 8 && !strcmp(argv[1], "-c"))
		return correct(argc, argv);
	n = argc >= 6 ? inputs(in, argc - 5, argv + 5) : -1;
	if (n < 0) {
		fprintf(stderr, "usage: fec-encode BLOCK_SIZE ROOTS THREADS OUT FILE[@START[+LEN]]...\n"
			"       fec-encode -c BLOCK_SIZE ROOTS PARITY BLOCK OUT FILE[@START[+LEN]]...\n");
		return 2;
	}
	out = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		perror(argv[4]);
		return 1;
	}
	err = ev_fec_encode(in, n, atoi(argv[1]), atoi(argv[2]), out, 0,
			    atoi(argv[3]), &why);
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
