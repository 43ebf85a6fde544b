// SPDX-License-Identifier: GPL-2.0
/*
 * The table line of an extverity device.  One definition of the options
 * serves the command line (table, open) and the parsing of a loaded
 * table (status).
 */
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sig.h"
#include "table.h"

const struct ev_table_opt_info ev_table_opts[EV_NR_TABLE_OPTS] = {
	[EV_OPT_IGNORE_CORRUPTION] = {
		"ignore-corruption", "ignore_corruption", 1 },
	[EV_OPT_RESTART_ON_CORRUPTION] = {
		"restart-on-corruption", "restart_on_corruption", 1 },
	[EV_OPT_PANIC_ON_CORRUPTION] = {
		"panic-on-corruption", "panic_on_corruption", 1 },
	[EV_OPT_RESTART_ON_ERROR] = {
		"restart-on-error", "restart_on_error", 2 },
	[EV_OPT_PANIC_ON_ERROR] = {
		"panic-on-error", "panic_on_error", 2 },
	[EV_OPT_CHECK_AT_MOST_ONCE] = {
		"check-at-most-once", "check_at_most_once", 0 },
	/* veritysetup's name for it */
	[EV_OPT_USE_TASKLETS] = {
		"use-tasklets", "try_verify_in_tasklet", 0 },
};

int ev_table_add_opt(unsigned int *flags, enum ev_table_opt opt)
{
	unsigned int group = ev_table_opts[opt].group;
	int i;

	if (*flags & (1U << opt)) {
		ev_error("option --%s given more than once",
			 ev_table_opts[opt].option);
		return EV_EUSAGE;
	}
	for (i = 0; group && i < EV_NR_TABLE_OPTS; i++) {
		if ((*flags & (1U << i)) && ev_table_opts[i].group == group) {
			ev_error("--%s and --%s exclude each other",
				 ev_table_opts[opt].option,
				 ev_table_opts[i].option);
			return EV_EUSAGE;
		}
	}
	*flags |= 1U << opt;
	return 0;
}

int ev_table_open_area(struct ev_area *a, const char *hash, u64 offset,
		       const char *root_hex)
{
	int err;

	err = ev_area_open(a, hash, offset);
	if (!err)
		err = ev_area_check_root(a, root_hex);
	if (!err)
		err = ev_area_parse(a);
	if (!err && offset % a->p.block_size) {
		ev_error("--hash-offset %" PRIu64 " is not a multiple of the "
			 "block size %u", offset, a->p.block_size);
		err = EV_EUSAGE;
	}
	return err;
}

int ev_table_fec(struct ev_area *a)
{
	int err = ev_area_load_fec(a);

	if (!err && !a->has_fec) {
		ev_error("%s has no FEC record: format it with --fec-device",
			 a->path);
		err = EV_EUSAGE;
	}
	return err;
}

u64 ev_table_sectors(const struct ev_area *a)
{
	return a->p.data_blocks << (a->p.log_blocksize - 9);
}

/* What the kernel's isspace() and so dm_split_args() take for a separator. */
static bool dm_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

/* Print @word so that dm_split_args() reads it back as one argument. */
static void put_word(FILE *fp, const char *word)
{
	fputc(' ', fp);
	for (; *word; word++) {
		if (dm_space(*word) || *word == '\\')
			fputc('\\', fp);
		fputc(*word, fp);
	}
}

char *ev_table_format(const struct ev_table_line *t)
{
	char *line = NULL;
	size_t size = 0;
	FILE *fp;
	int i, n = 0;

	fp = open_memstream(&line, &size);
	if (!fp) {
		ev_error("out of memory for the table line");
		return NULL;
	}
	fprintf(fp, "%u", t->version);
	put_word(fp, t->data);
	put_word(fp, t->hash);
	fprintf(fp, " %" PRIu64, t->hash_sector);
	put_word(fp, t->alg);
	fprintf(fp, " %s", t->root);
	for (i = 0; i < EV_NR_TABLE_OPTS; i++)
		n += !!(t->flags & (1U << i));
	if (t->sig_key)
		n += 2;
	if (t->fec_dev)
		n += 8;
	if (n)
		fprintf(fp, " %d", n);
	for (i = 0; i < EV_NR_TABLE_OPTS; i++)
		if (t->flags & (1U << i))
			fprintf(fp, " %s", ev_table_opts[i].param);
	/* Last, as the kernel prints it back. */
	if (t->sig_key) {
		fprintf(fp, " %s", EV_SIG_TABLE_OPT);
		put_word(fp, t->sig_key);
	}
	if (t->fec_dev) {
		fprintf(fp, " use_fec_from_device");
		put_word(fp, t->fec_dev);
		fprintf(fp, " fec_roots %" PRIu64 " fec_blocks %" PRIu64
			" fec_start %" PRIu64, t->fec_roots, t->fec_blocks,
			t->fec_start);
	}
	/* A stream in memory fails only when it cannot grow. */
	if (fclose(fp) || !line) {
		ev_error("out of memory for the table line");
		free(line);
		return NULL;
	}
	return line;
}

char *ev_table_params(const struct ev_area *a, const char *data,
		      const char *hash, unsigned int flags,
		      const char *sig_key_desc, const char *fec)
{
	struct ev_table_line t = {
		.version = EXTVERITY_FORMAT_VERSION,
		.data = (char *)data,
		.hash = (char *)hash,
		.hash_sector = a->offset / 512,
		.flags = flags,
		.sig_key = (char *)sig_key_desc,
		.fec_dev = (char *)fec,
	};

	if (fec) {
		t.fec_roots = a->fec.roots;
		t.fec_blocks = a->fec.blocks;
		t.fec_start = a->fec.start;
	}

	snprintf(t.alg, sizeof(t.alg), "%s",
		 extverity_hash_name(a->p.hash_algorithm));
	ev_bin2hex(a->root, a->p.digest_size, t.root);
	return ev_table_format(&t);
}

/*
 * Words a table line can have: six fixed, the count, every option, the
 * signature key's two words and FEC's eight.
 */
#define MAX_WORDS	(6 + 1 + EV_NR_TABLE_OPTS + 2 + 8)

/* The FEC options with a number, in the order the kernel prints them. */
static const char *const fec_num_opts[] = {
	"fec_roots", "fec_blocks", "fec_start",
};

/* FEC option @i of fec_num_opts[] in @t. */
static u64 *fec_num(struct ev_table_line *t, int i)
{
	return i == 0 ? &t->fec_roots : i == 1 ? &t->fec_blocks :
	       &t->fec_start;
}

/*
 * Split @s in place into at most @max words as dm_split_args() does: runs
 * of white space separate them, a backslash makes the next byte literal.
 * Returns the number of words, or -1 when there are more.
 */
static int split_words(char *s, char **words, int max, bool escapes)
{
	char *out;
	int n = 0;

	for (;;) {
		while (dm_space(*s))
			s++;
		if (!*s)
			return n;
		if (n == max)
			return -1;
		out = s;
		words[n++] = s;
		while (*s && !dm_space(*s)) {
			if (escapes && *s == '\\' && s[1])
				s++;
			*out++ = *s++;
		}
		/* The separator (or the end) is past @out: terminate there. */
		if (*s)
			s++;
		*out = '\0';
	}
}

static bool is_hex(const char *s)
{
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return false;
	return true;
}

int ev_table_parse(const char *params, struct ev_table_line *t)
{
	char *copy = xstrdup(params), *w[MAX_WORDS];
	unsigned int fec_seen = 0;
	int n, i, k, err = -EINVAL;
	u64 v;

	memset(t, 0, sizeof(*t));
	n = split_words(copy, w, MAX_WORDS, true);
	if (n < 6)
		goto out;
	if (ev_parse_u64(w[0], &v) || v > UINT_MAX)
		goto out;
	t->version = v;
	t->data = xstrdup(w[1]);
	t->hash = xstrdup(w[2]);
	if (ev_parse_u64(w[3], &t->hash_sector) ||
	    strlen(w[4]) >= sizeof(t->alg) || strlen(w[5]) >= sizeof(t->root) ||
	    strlen(w[5]) % 2 || !is_hex(w[5]))
		goto out;
	/* Both lengths checked above. */
	snprintf(t->alg, sizeof(t->alg), "%s", w[4]);
	snprintf(t->root, sizeof(t->root), "%s", w[5]);
	if (n > 6 && (ev_parse_u64(w[6], &v) || v != (u64)n - 7 || !v))
		goto out;
	for (i = 7; i < n; i++) {
		if (!strcmp(w[i], EV_SIG_TABLE_OPT)) {
			if (t->sig_key || ++i == n)
				goto out;
			t->sig_key = xstrdup(w[i]);
			continue;
		}
		if (!strcmp(w[i], "use_fec_from_device")) {
			if (t->fec_dev || ++i == n)
				goto out;
			t->fec_dev = xstrdup(w[i]);
			continue;
		}
		for (k = 0; k < (int)EV_ARRAY_SIZE(fec_num_opts); k++)
			if (!strcmp(w[i], fec_num_opts[k]))
				break;
		if (k < (int)EV_ARRAY_SIZE(fec_num_opts)) {
			/* Given once each, and never 0. */
			if ((fec_seen & (1U << k)) || ++i == n ||
			    ev_parse_u64(w[i], fec_num(t, k)) ||
			    (!*fec_num(t, k) && k != 2))
				goto out;
			fec_seen |= 1U << k;
			continue;
		}
		for (k = 0; k < EV_NR_TABLE_OPTS; k++)
			if (!strcmp(w[i], ev_table_opts[k].param))
				break;
		if (k == EV_NR_TABLE_OPTS || (t->flags & (1U << k)))
			goto out;
		t->flags |= 1U << k;
	}
	/* All four FEC options, or none. */
	if ((t->fec_dev ? 7U : 0U) != fec_seen)
		goto out;
	err = 0;
out:
	free(copy);
	return err;
}

void ev_table_line_free(struct ev_table_line *t)
{
	free(t->data);
	free(t->hash);
	free(t->sig_key);
	free(t->fec_dev);
	memset(t, 0, sizeof(*t));
}

int ev_status_parse(const char *params, struct ev_target_status *st)
{
	char *copy = xstrdup(params), *w[8];
	int err = -EINVAL, n;

	memset(st, 0, sizeof(*st));
	/*
	 * Targets before FEC (1.3.0) print four words, without the corrected
	 * count; targets before 1.4.0 five, without the paired count; targets
	 * before 1.5.0 six, without the split count.
	 */
	n = split_words(copy, w, 8, false);
	if (n < 4 || n > 7 || strlen(w[0]) != 1 ||
	    (w[0][0] != 'V' && w[0][0] != 'C') ||
	    ev_parse_u64(w[1], &st->verified) ||
	    ev_parse_u64(w[2], &st->corrupt) || ev_parse_u64(w[3], &st->zero) ||
	    (n >= 5 && ev_parse_u64(w[4], &st->corrected)) ||
	    (n >= 6 && ev_parse_u64(w[5], &st->paired)) ||
	    (n == 7 && ev_parse_u64(w[6], &st->split)))
		goto out;
	st->health = w[0][0];
	st->has_corrected = n >= 5;
	st->has_paired = n >= 6;
	st->has_split = n == 7;
	err = 0;
out:
	free(copy);
	return err;
}

int ev_damage_parse(const char *answer, struct ev_damage **v, size_t *n,
		    u64 *more)
{
	char *copy = xstrdup(answer), *line, *next, *w[4];
	size_t cap = 0;
	int nw;

	*v = NULL;
	*n = 0;
	*more = 0;
	for (line = copy; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		nw = split_words(line, w, 4, false);
		if (!nw)
			continue;
		/* "more N" ends the answer. */
		if (*more)
			goto bad;
		if (nw == 2 && !strcmp(w[0], "more")) {
			if (ev_parse_u64(w[1], more) || !*more)
				goto bad;
			continue;
		}
		xgrow((void **)v, &cap, *n + 1, sizeof(**v));
		if (nw != 3 || ev_parse_u64(w[0], &(*v)[*n].inode) ||
		    ev_parse_u64(w[1], &(*v)[*n].offset) ||
		    ev_parse_u64(w[2], &(*v)[*n].blocks) || !(*v)[*n].blocks)
			goto bad;
		(*n)++;
	}
	free(copy);
	return 0;
bad:
	free(copy);
	free(*v);
	*v = NULL;
	*n = 0;
	*more = 0;
	return -EINVAL;
}
