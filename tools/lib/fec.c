// SPDX-License-Identifier: GPL-2.0
/*
 * Reed-Solomon parity in dm-verity's FEC layout; see fec.h.
 *
 * The code: GF(2^8) modulo x^8 + x^4 + x^3 + x^2 + 1 (0x11d), generator
 * g(x) = (x - a^0)(x - a^1)...(x - a^(roots - 1)) with a = 2, systematic:
 * the parity of a message m(x) is m(x) * x^roots mod g(x), most significant
 * coefficient first.  These are the parameters dm-verity passes to the
 * kernel's init_rs() (symbol size 8, 0x11d, first root 0, primitive 1).
 *
 * Each thread takes EV_FEC_BATCH rounds at a time.  Symbol i of the
 * codewords of rounds n..n+EV_FEC_BATCH-1 comes from blocks n + i * rounds
 * onwards, consecutive in the area: one read per symbol row, fed through
 * every codeword's division at once, and the parity of the batch is one
 * contiguous run of the output.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "fec.h"

/* Rounds one thread encodes at a time: (1 + roots) * 8 blocks of buffers. */
#define EV_FEC_BATCH	8U
/* The area stays far from u64 overflow in block and offset arithmetic. */
#define EV_FEC_MAX_AREA	BIT_ULL(56)

static u8 gf_exp[2 * EV_FEC_RSM];
static u8 gf_log[EV_FEC_RSM + 1];
static pthread_once_t gf_once = PTHREAD_ONCE_INIT;

static void gf_init(void)
{
	unsigned int x = 1, i;

	for (i = 0; i < EV_FEC_RSM; i++) {
		gf_exp[i] = x;
		gf_exp[i + EV_FEC_RSM] = x;
		gf_log[x] = i;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11d;
	}
}

static u8 gf_mul(u8 a, u8 b)
{
	return a && b ? gf_exp[gf_log[a] + gf_log[b]] : 0;
}

struct fec_encoder {
	const struct ev_fec_input *in;
	size_t n_in;
	u64 area;
	u64 rounds;
	unsigned int block_size;
	unsigned int roots;
	unsigned int rsn;
	int out;
	u64 out_start;
	/* mul[j][v] = v * g_j, the generator's coefficients but the leading 1 */
	u8 mul[EV_FEC_MAX_ROOTS][256];
	pthread_mutex_t lock;
	u64 next_round;
	int err;
	const char *why;
};

u64 ev_fec_rounds(u64 area_bytes, unsigned int block_size,
		  unsigned int roots)
{
	u64 blocks, rsn;

	if (roots < EV_FEC_MIN_ROOTS || roots > EV_FEC_MAX_ROOTS ||
	    block_size < 512 || block_size > 65536 ||
	    (block_size & (block_size - 1)) || !area_bytes ||
	    area_bytes > EV_FEC_MAX_AREA)
		return 0;
	blocks = (area_bytes + block_size - 1) / block_size;
	rsn = EV_FEC_RSM - roots;
	return (blocks + rsn - 1) / rsn;
}

static void fec_fail(struct fec_encoder *e, int err, const char *why)
{
	pthread_mutex_lock(&e->lock);
	if (!e->err) {
		e->err = err;
		e->why = why;
	}
	pthread_mutex_unlock(&e->lock);
}

/* Read @len bytes of the area from @off; past its end, zeros. */
static int read_area(struct fec_encoder *e, u64 off, u8 *buf, size_t len)
{
	u64 base = 0;
	size_t i = 0;

	while (len) {
		const struct ev_fec_input *in;
		size_t n;
		ssize_t r;

		if (off >= e->area) {
			memset(buf, 0, len);
			return 0;
		}
		while (off >= base + e->in[i].len)
			base += e->in[i++].len;
		in = &e->in[i];
		n = len;
		if (n > base + in->len - off)
			n = base + in->len - off;
		r = pread(in->fd, buf, n, in->start + (off - base));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fec_fail(e, -errno, "cannot read the area FEC covers");
			return -1;
		}
		if (!r) {
			fec_fail(e, -EIO, "the area FEC covers ends early");
			return -1;
		}
		buf += r;
		off += r;
		len -= r;
	}
	return 0;
}

static int write_all(struct fec_encoder *e, const u8 *buf, size_t len,
		     u64 off)
{
	while (len) {
		ssize_t r = pwrite(e->out, buf, len, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fec_fail(e, r < 0 ? -errno : -EIO,
				 "cannot write the FEC parity");
			return -1;
		}
		buf += r;
		off += r;
		len -= r;
	}
	return 0;
}

/*
 * Feed block row @row (@len bytes, one symbol of each codeword) through
 * the codewords' division by g(x); @par holds each codeword's remainder,
 * @roots bytes apiece, most significant first.
 */
static void fec_feed(const struct fec_encoder *e, const u8 *row, size_t len,
		     u8 *par)
{
	unsigned int roots = e->roots, j;
	size_t x;

	for (x = 0; x < len; x++, par += roots) {
		u8 fb = row[x] ^ par[0];

		for (j = 0; j + 1 < roots; j++)
			par[j] = par[j + 1] ^ e->mul[roots - 1 - j][fb];
		par[roots - 1] = e->mul[0][fb];
	}
}

static void *fec_worker(void *arg)
{
	struct fec_encoder *e = arg;
	size_t bs = e->block_size;
	u8 *buf = malloc(EV_FEC_BATCH * bs);
	u8 *par = malloc(EV_FEC_BATCH * bs * e->roots);

	if (!buf || !par) {
		fec_fail(e, -ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		u64 first, n;
		size_t len;
		unsigned int i;

		pthread_mutex_lock(&e->lock);
		first = e->next_round;
		n = e->rounds - first;
		if (n > EV_FEC_BATCH)
			n = EV_FEC_BATCH;
		e->next_round += n;
		if (e->err)
			n = 0;
		pthread_mutex_unlock(&e->lock);
		if (!n)
			break;
		len = n * bs;
		memset(par, 0, len * e->roots);
		for (i = 0; i < e->rsn; i++) {
			if (read_area(e, (first + i * e->rounds) * bs, buf, len))
				goto out;
			fec_feed(e, buf, len, par);
		}
		if (write_all(e, par, len * e->roots,
			      e->out_start + first * bs * e->roots))
			goto out;
	}
out:
	free(buf);
	free(par);
	return NULL;
}

/* The generator's coefficients g_0..g_(roots - 1) as multiplication tables. */
static void fec_tables(struct fec_encoder *e)
{
	u8 g[EV_FEC_MAX_ROOTS + 1] = { 1 };
	unsigned int i, k, v;

	/* Multiply g(x) by (x + a^i), one root at a time. */
	for (i = 0; i < e->roots; i++) {
		for (k = i + 1; k > 0; k--)
			g[k] = g[k - 1] ^ gf_mul(g[k], gf_exp[i]);
		g[0] = gf_mul(g[0], gf_exp[i]);
	}
	for (k = 0; k < e->roots; k++)
		for (v = 0; v < 256; v++)
			e->mul[k][v] = gf_mul(v, g[k]);
}

int ev_fec_encode(const struct ev_fec_input *in, size_t n_in,
		  unsigned int block_size, unsigned int roots, int out,
		  u64 out_start, unsigned int threads, const char **why)
{
	struct fec_encoder *e;
	pthread_t *tid;
	unsigned int t, started = 0;
	u64 area = 0;
	size_t i;
	int err;

	for (i = 0; i < n_in; i++) {
		if (in[i].len > EV_FEC_MAX_AREA - area) {
			*why = "the area FEC covers is too large";
			return -EFBIG;
		}
		area += in[i].len;
	}
	if (!ev_fec_rounds(area, block_size, roots)) {
		*why = !area ? "the area FEC covers is empty" :
		       "FEC roots or block size out of range";
		return -EINVAL;
	}
	if (!threads)
		threads = 1;
	e = calloc(1, sizeof(*e));
	tid = calloc(threads, sizeof(*tid));
	if (!e || !tid) {
		free(e);
		free(tid);
		*why = "out of memory";
		return -ENOMEM;
	}
	pthread_once(&gf_once, gf_init);
	e->in = in;
	e->n_in = n_in;
	e->area = area;
	e->rounds = ev_fec_rounds(area, block_size, roots);
	e->block_size = block_size;
	e->roots = roots;
	e->rsn = EV_FEC_RSM - roots;
	e->out = out;
	e->out_start = out_start;
	fec_tables(e);
	pthread_mutex_init(&e->lock, NULL);
	/* This thread is one of them; fewer start if the system says no. */
	for (t = 1; t < threads; t++)
		if (!pthread_create(&tid[started], NULL, fec_worker, e))
			started++;
	fec_worker(e);
	for (t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	err = e->err;
	*why = e->why;
	pthread_mutex_destroy(&e->lock);
	free(tid);
	free(e);
	return err;
}
