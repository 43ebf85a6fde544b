// SPDX-License-Identifier: GPL-2.0
/*
 * Reed-Solomon parity in dm-verity's FEC layout, and its decoding; see
 * fec.h.
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

/* a / b, b nonzero */
static u8 gf_div(u8 a, u8 b)
{
	return a ? gf_exp[gf_log[a] + EV_FEC_RSM - gf_log[b]] : 0;
}

struct fec_encoder {
	const struct ev_fec_input *in;
	size_t n_in;
	/* in[i] starts at byte base[i] of the area; base[n_in] is its end */
	u64 *base;
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

/* Read @len bytes at @off: 0, -EIO if the file ends first, or -errno. */
static int pread_all(int fd, u8 *buf, size_t len, u64 off)
{
	while (len) {
		ssize_t r = pread(fd, buf, len, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return -EIO;
		buf += r;
		off += r;
		len -= r;
	}
	return 0;
}

/* Read @len bytes of the area from @off; past its end, zeros. */
static int read_area(struct fec_encoder *e, u64 off, u8 *buf, size_t len)
{
	while (len) {
		const struct ev_fec_input *in;
		size_t i = 0, hi = e->n_in, n;
		u64 base;
		int err = 0;

		if (off >= e->area) {
			memset(buf, 0, len);
			return 0;
		}
		/*
		 * The input holding @off: base[i] <= @off < base[hi] (a hash
		 * area has an input per tree with lower levels).
		 */
		while (hi - i > 1) {
			size_t mid = i + (hi - i) / 2;

			if (e->base[mid] <= off)
				i = mid;
			else
				hi = mid;
		}
		base = e->base[i];
		in = &e->in[i];
		n = len;
		if (n > base + in->len - off)
			n = base + in->len - off;
		if (in->mem)
			memcpy(buf, in->mem + in->start + (off - base), n);
		else
			err = pread_all(in->fd, buf, n,
					in->start + (off - base));
		if (err) {
			fec_fail(e, err, err == -EIO ?
				 "the area FEC covers ends early" :
				 "cannot read the area FEC covers");
			return -1;
		}
		buf += n;
		off += n;
		len -= n;
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

/*
 * Fill in @e's area, its shape and the field tables, from the inputs and
 * parameters: 0, or a negative errno with @why set.  The lock is left to
 * the caller.
 */
static int fec_setup(struct fec_encoder *e, const struct ev_fec_input *in,
		     size_t n_in, unsigned int block_size, unsigned int roots,
		     const char **why)
{
	size_t i;

	e->in = in;
	e->n_in = n_in;
	e->area = 0;
	e->base = malloc((n_in + 1) * sizeof(*e->base));
	if (!e->base) {
		*why = "out of memory";
		return -ENOMEM;
	}
	for (i = 0; i < n_in; i++) {
		e->base[i] = e->area;
		if (in[i].len > EV_FEC_MAX_AREA - e->area) {
			*why = "the area FEC covers is too large";
			return -EFBIG;
		}
		e->area += in[i].len;
	}
	e->base[n_in] = e->area;
	e->rounds = ev_fec_rounds(e->area, block_size, roots);
	if (!e->rounds) {
		*why = !e->area ? "the area FEC covers is empty" :
		       "FEC roots or block size out of range";
		return -EINVAL;
	}
	pthread_once(&gf_once, gf_init);
	e->block_size = block_size;
	e->roots = roots;
	e->rsn = EV_FEC_RSM - roots;
	return 0;
}

int ev_fec_encode(const struct ev_fec_input *in, size_t n_in,
		  unsigned int block_size, unsigned int roots, int out,
		  u64 out_start, unsigned int threads, const char **why)
{
	struct fec_encoder *e;
	pthread_t *tid;
	unsigned int t, started = 0;
	int err;

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
	err = fec_setup(e, in, n_in, block_size, roots, why);
	if (err) {
		free(e->base);
		free(e);
		free(tid);
		return err;
	}
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
	free(e->base);
	free(tid);
	free(e);
	return err;
}

/*
 * Decoding, errors only, of one codeword: EV_FEC_RSM symbols, the message
 * then the parity, received as r(x) with symbol 0 the coefficient of x^254.
 * The syndromes S_i = r(a^i) find the error locator L(x) by
 * Berlekamp-Massey; its roots (Chien search) are the inverses of the error
 * locations X = a^(254 - j), and Forney's formula gives each error's value,
 * X * W(1/X) / L'(1/X) with W(x) = S(x) L(x) mod x^roots (first root a^0).
 */
static int fec_decode(u8 *cw, unsigned int roots)
{
	u8 s[EV_FEC_MAX_ROOTS], lambda[EV_FEC_MAX_ROOTS + 1] = { 1 };
	u8 prev[EV_FEC_MAX_ROOTS + 1] = { 1 }, tmp[EV_FEC_MAX_ROOTS + 1];
	u8 omega[EV_FEC_MAX_ROOTS], last = 1, any = 0;
	unsigned int i, j, k, len = 0, shift = 1, found = 0;
	unsigned int where[EV_FEC_MAX_ROOTS / 2];
	u8 what[EV_FEC_MAX_ROOTS / 2];

	for (i = 0; i < roots; i++) {
		u8 v = 0;

		for (j = 0; j < EV_FEC_RSM; j++)
			v = gf_mul(v, gf_exp[i]) ^ cw[j];
		s[i] = v;
		any |= v;
	}
	if (!any)
		return 0;

	for (k = 0; k < roots; k++) {
		u8 d = s[k], c;

		for (i = 1; i <= len; i++)
			d ^= gf_mul(lambda[i], s[k - i]);
		if (!d) {
			shift++;
			continue;
		}
		memcpy(tmp, lambda, sizeof(tmp));
		c = gf_div(d, last);
		for (i = 0; i + shift <= roots; i++)
			lambda[i + shift] ^= gf_mul(c, prev[i]);
		if (2 * len <= k) {
			len = k + 1 - len;
			memcpy(prev, tmp, sizeof(prev));
			last = d;
			shift = 1;
		} else {
			shift++;
		}
	}
	if (2 * len > roots)
		return -1;

	for (i = 0; i < roots; i++) {
		omega[i] = 0;
		for (k = 0; k <= i && k <= len; k++)
			omega[i] ^= gf_mul(s[i - k], lambda[k]);
	}
	for (j = 0; j < EV_FEC_RSM; j++) {
		/* 1/X for the symbol j: X = a^(254 - j) */
		u8 xinv = gf_exp[(j + 1) % EV_FEC_RSM], p = 1;
		u8 l = 0, dl = 0, w = 0;

		for (i = 0; i <= len; i++, p = gf_mul(p, xinv)) {
			l ^= gf_mul(lambda[i], p);
			/* L'(x): the odd terms, one power lower */
			if (i & 1)
				dl ^= gf_mul(lambda[i], gf_div(p, xinv));
		}
		if (l)
			continue;
		if (found == len || !dl)
			return -1;
		for (i = 0, p = 1; i < roots; i++, p = gf_mul(p, xinv))
			w ^= gf_mul(omega[i], p);
		where[found] = j;
		what[found++] = gf_mul(gf_exp[EV_FEC_RSM - 1 - j],
				       gf_div(w, dl));
	}
	/* A locator whose roots are not all distinct positions: too many errors. */
	if (found != len)
		return -1;
	for (i = 0; i < found; i++)
		cw[where[i]] ^= what[i];
	return found;
}

/*
 * Read round @round of @e's area into @rows (@e->rsn blocks) and its parity
 * into @par, and decode each of its codewords, corrections written back
 * into @rows; @changed[i] is set for each row a correction changed, and
 * *@fixed counts the symbols corrected.  0, -EBADMSG when a codeword has
 * too many errors (then @rows is partly corrected), or another negative
 * errno; @why is set on error.
 */
static int decode_round(struct fec_encoder *e, u64 round, u8 *rows, u8 *par,
			int parity, u64 parity_start, bool *changed,
			unsigned int *fixed, const char **why)
{
	size_t bs = e->block_size;
	unsigned int roots = e->roots, i, b;
	u8 cw[EV_FEC_RSM];
	int err;

	for (i = 0; i < e->rsn; i++)
		if (read_area(e, (round + (u64)i * e->rounds) * bs,
			      rows + i * bs, bs)) {
			*why = e->why;
			return e->err;
		}
	err = pread_all(parity, par, bs * roots,
			parity_start + round * bs * roots);
	if (err) {
		*why = err == -EIO ? "the FEC parity ends early" :
		       "cannot read the FEC parity";
		return err;
	}
	memset(changed, 0, e->rsn * sizeof(*changed));
	*fixed = 0;
	for (b = 0; b < bs; b++) {
		int r;

		for (i = 0; i < e->rsn; i++)
			cw[i] = rows[i * bs + b];
		memcpy(cw + e->rsn, par + (size_t)b * roots, roots);
		r = fec_decode(cw, roots);
		if (r < 0) {
			*why = "too many errors to correct";
			return -EBADMSG;
		}
		*fixed += r;
		for (i = 0; r && i < e->rsn; i++) {
			if (rows[i * bs + b] == cw[i])
				continue;
			rows[i * bs + b] = cw[i];
			changed[i] = true;
		}
	}
	return 0;
}

int ev_fec_correct_block(const struct ev_fec_input *in, size_t n_in,
			 unsigned int block_size, unsigned int roots,
			 int parity, u64 parity_start, u64 block, u8 *out,
			 unsigned int *fixed, const char **why)
{
	struct fec_encoder e = { 0 };
	bool changed[EV_FEC_RSM];
	u8 *rows = NULL, *par = NULL;
	u64 round;
	unsigned int pos;
	int err;

	err = fec_setup(&e, in, n_in, block_size, roots, why);
	if (err) {
		free(e.base);
		return err;
	}
	if (block >= (e.area + block_size - 1) / block_size) {
		*why = "the block is past the area FEC covers";
		free(e.base);
		return -EINVAL;
	}
	pthread_mutex_init(&e.lock, NULL);
	round = block % e.rounds;
	pos = block / e.rounds;
	rows = malloc((size_t)e.rsn * block_size);
	par = malloc((size_t)block_size * roots);
	if (!rows || !par) {
		err = -ENOMEM;
		*why = "out of memory";
		goto out;
	}
	err = decode_round(&e, round, rows, par, parity, parity_start, changed,
			   fixed, why);
	if (!err)
		memcpy(out, rows + (size_t)pos * block_size, block_size);
out:
	pthread_mutex_destroy(&e.lock);
	free(e.base);
	free(rows);
	free(par);
	return err;
}

int ev_fec_repair(const struct ev_fec_input *in, size_t n_in,
		  unsigned int block_size, unsigned int roots, int parity,
		  u64 parity_start, ev_fec_fixed_fn fixed, void *arg,
		  u64 *bad_rounds, const char **why)
{
	struct fec_encoder e = { 0 };
	bool changed[EV_FEC_RSM];
	u8 *rows = NULL, *par = NULL;
	unsigned int i, n;
	u64 round, blocks;
	int err;

	*bad_rounds = 0;
	err = fec_setup(&e, in, n_in, block_size, roots, why);
	if (err) {
		free(e.base);
		return err;
	}
	pthread_mutex_init(&e.lock, NULL);
	blocks = (e.area + block_size - 1) / block_size;
	rows = malloc((size_t)e.rsn * block_size);
	par = malloc((size_t)block_size * roots);
	if (!rows || !par) {
		err = -ENOMEM;
		*why = "out of memory";
		goto out;
	}
	for (round = 0; round < e.rounds; round++) {
		err = decode_round(&e, round, rows, par, parity, parity_start,
				   changed, &n, why);
		/* A round with a codeword past repair is left as it is. */
		if (err == -EBADMSG) {
			(*bad_rounds)++;
			err = 0;
			continue;
		}
		if (err)
			break;
		for (i = 0; i < e.rsn && !err; i++) {
			u64 block = round + (u64)i * e.rounds;

			if (changed[i] && block < blocks)
				err = fixed(block, rows + (size_t)i * block_size,
					    arg);
		}
		if (err) {
			*why = "cannot write a corrected block";
			break;
		}
	}
out:
	pthread_mutex_destroy(&e.lock);
	free(e.base);
	free(rows);
	free(par);
	return err;
}
