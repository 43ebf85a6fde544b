// SPDX-License-Identifier: GPL-2.0
/*
 * The table line and status line parsers of tools/lib/table.c (what
 * `extverity status` reads back from the kernel) and the table line
 * formatter (`extverity table`, `open`).  The first input byte picks:
 *   0  parse the rest as a table line; if accepted, format and parse again:
 *      the same values, and formatting is stable;
 *   1  the same for a status line;
 *   2  build a table line from the bytes (device names and key description
 *      may hold anything but NUL, spaces and backslashes included), format
 *      it, split it the way the kernel's dm_split_args() does, and parse
 *      it: the same values back.
 */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "sig.h"
#include "table.h"

static bool same_line(const struct ev_table_line *a,
		      const struct ev_table_line *b)
{
	return a->version == b->version && !strcmp(a->data, b->data) &&
	       !strcmp(a->hash, b->hash) && a->hash_sector == b->hash_sector &&
	       !strcmp(a->alg, b->alg) && !strcmp(a->root, b->root) &&
	       a->flags == b->flags &&
	       !a->sig_key == !b->sig_key &&
	       (!a->sig_key || !strcmp(a->sig_key, b->sig_key)) &&
	       !a->fec_dev == !b->fec_dev &&
	       (!a->fec_dev || !strcmp(a->fec_dev, b->fec_dev)) &&
	       a->fec_roots == b->fec_roots && a->fec_blocks == b->fec_blocks &&
	       a->fec_start == b->fec_start;
}

static void check_bounds(const struct ev_table_line *t, const char *line)
{
	FUZZ_CHECK(*t->data && *t->hash && *t->alg && *t->root &&
		   strlen(t->root) % 2 == 0 &&
		   !(t->flags & ~((1U << EV_NR_TABLE_OPTS) - 1)) &&
		   (!t->sig_key || *t->sig_key) &&
		   (t->fec_dev ? *t->fec_dev && t->fec_roots && t->fec_blocks :
		    !t->fec_roots && !t->fec_blocks && !t->fec_start),
		   "'%s' parsed to out-of-range values", line);
}

static void round_trip(const struct ev_table_line *t, const char *what)
{
	struct ev_table_line t2;
	char *line = ev_table_format(t), *line2;

	FUZZ_CHECK(!ev_table_parse(line, &t2), "%s: formatted line '%s' "
		   "does not parse", what, line);
	FUZZ_CHECK(same_line(t, &t2), "%s: '%s' parsed to other values",
		   what, line);
	check_bounds(&t2, line);
	line2 = ev_table_format(&t2);
	FUZZ_CHECK(!strcmp(line, line2), "%s: '%s' formatted as '%s'", what,
		   line, line2);
	free(line2);
	ev_table_line_free(&t2);
	free(line);
}

static void parse_table(const char *s)
{
	struct ev_table_line t;

	if (!ev_table_parse(s, &t)) {
		check_bounds(&t, s);
		round_trip(&t, "parsed");
	}
	ev_table_line_free(&t);
}

static void parse_status(const char *s)
{
	struct ev_target_status st, st2;
	char line[160];

	if (ev_status_parse(s, &st))
		return;
	FUZZ_CHECK(st.health == 'V' || st.health == 'C', "'%s': health %c",
		   s, st.health);
	snprintf(line, sizeof(line), "%c %llu %llu %llu", st.health,
		 (unsigned long long)st.verified,
		 (unsigned long long)st.corrupt, (unsigned long long)st.zero);
	if (st.has_corrected)
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 " %llu", (unsigned long long)st.corrected);
	if (st.has_paired)
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 " %llu", (unsigned long long)st.paired);
	if (st.has_split)
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 " %llu", (unsigned long long)st.split);
	FUZZ_CHECK(!ev_status_parse(line, &st2) &&
		   !memcmp(&st, &st2, sizeof(st)), "'%s' reads back as other "
		   "values from '%s'", s, line);
}

/* Take @n bytes (at most) from the input as a string without NUL. */
static char *take(const uint8_t **data, size_t *size, size_t n)
{
	char *s;
	size_t i, k = 0;

	if (n > *size)
		n = *size;
	s = malloc(n + 1);
	for (i = 0; i < n; i++)
		if ((*data)[i])
			s[k++] = (*data)[i];
	s[k] = '\0';
	*data += n;
	*size -= n;
	return s;
}

static void build(const uint8_t *data, size_t size)
{
	static const char *const algs[] = { "sha256", "sha512" };
	struct ev_table_line t;
	u8 hdr[12] = { 0 };
	char *root;

	memcpy(hdr, data, size < sizeof(hdr) ? size : sizeof(hdr));
	data += size < sizeof(hdr) ? size : sizeof(hdr);
	size -= size < sizeof(hdr) ? size : sizeof(hdr);
	memset(&t, 0, sizeof(t));
	t.version = hdr[0] % 3;
	memcpy(&t.hash_sector, hdr + 1, 8);
	t.flags = hdr[9] & ((1U << EV_NR_TABLE_OPTS) - 1);
	strcpy(t.alg, algs[hdr[10] & 1]);
	root = take(&data, &size, 1 + hdr[11] % 64);
	ev_bin2hex((const u8 *)root, strlen(root), t.root);
	free(root);
	t.data = take(&data, &size, 1 + (size ? data[0] % 32 : 0));
	t.hash = take(&data, &size, 1 + (size ? data[0] % 32 : 0));
	if (size && data[0] & 2) {
		/* Roots and blocks are never 0 on a line that parses. */
		t.fec_roots = 1 + hdr[9];
		t.fec_blocks = 1 + hdr[1];
		t.fec_start = hdr[2];
		t.fec_dev = take(&data, &size, 1 + data[0] % 32);
	}
	if (size && data[0] & 1)
		t.sig_key = take(&data, &size, size);
	if (*t.root && *t.data && *t.hash && (!t.sig_key || *t.sig_key) &&
	    (!t.fec_dev || *t.fec_dev))
		round_trip(&t, "built");
	ev_table_line_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (!size)
		return 0;
	switch (data[0] % 3) {
	case 0:
		s = fuzz_string(data + 1, size - 1);
		parse_table(s);
		free(s);
		break;
	case 1:
		s = fuzz_string(data + 1, size - 1);
		parse_status(s);
		free(s);
		break;
	case 2:
		build(data + 1, size - 1);
		break;
	}
	return 0;
}
