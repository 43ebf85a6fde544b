// SPDX-License-Identifier: GPL-2.0
/*
 * The tool's argument parsers, each against an oracle written here from
 * its documented grammar: a parser must accept exactly the strings the
 * grammar allows and return the value they spell.  The first input byte
 * picks the parser, the rest (up to a NUL) is the argument.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "extverity.h"
#include "fuzz.h"
#include "sig.h"
#include "table.h"

/* Decimal digits only, no sign, at most UINT64_MAX. */
static bool oracle_u64(const char *s, u64 *v)
{
	u64 x = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (x > (UINT64_MAX - (u64)(*s - '0')) / 10)
			return false;
		x = x * 10 + (u64)(*s - '0');
	}
	*v = x;
	return true;
}

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = tolower((unsigned char)*s);
}

static void check_u64(const char *s)
{
	u64 got = 0, want = 0;
	bool ok = !ev_parse_u64(s, &got);

	FUZZ_CHECK(ok == oracle_u64(s, &want), "ev_parse_u64('%s') %s", s,
		   ok ? "accepted" : "refused");
	FUZZ_CHECK(!ok || got == want, "ev_parse_u64('%s') = %llu", s,
		   (unsigned long long)got);
	ok = ev_parse_offset(s, &got);
	FUZZ_CHECK(ok == oracle_u64(s, &want) && (!ok || got == want),
		   "ev_parse_offset('%s')", s);
}

static void check_block_size(const char *s)
{
	unsigned int log = 99;
	u64 v = 0;
	bool ok = !ev_parse_block_size(s, &log);
	bool want = oracle_u64(s, &v) && (v == 1024 || v == 2048 || v == 4096);

	FUZZ_CHECK(ok == want, "--data-block-size '%s' %s", s,
		   ok ? "accepted" : "refused");
	FUZZ_CHECK(!ok || (log >= EXTVERITY_MIN_LOG_BLOCKSIZE &&
			   log <= EXTVERITY_MAX_LOG_BLOCKSIZE && 1ULL << log == v),
		   "--data-block-size '%s' gave log %u", s, log);
}

/* hex2bin must accept exactly even-length hex within @max, and print back. */
static void check_hex(const char *s, size_t max, bool salt)
{
	u8 bin[EXTVERITY_MAX_DIGEST_SIZE + 1];
	char back[2 * sizeof(bin) + 1], *low;
	size_t n = strlen(s), len = 999;
	bool ok, want;

	if (salt) {
		ok = !ev_parse_salt(s, bin, max, &len);
		want = !strcmp(s, "-") || !n ||
		       (n % 2 == 0 && n / 2 <= max && all_hex(s, n));
	} else {
		ok = !ev_hex2bin(s, bin, max, &len);
		want = n % 2 == 0 && n / 2 <= max && all_hex(s, n);
	}
	FUZZ_CHECK(ok == want, "%s('%s', max %zu) %s",
		   salt ? "ev_parse_salt" : "ev_hex2bin", s, max,
		   ok ? "accepted" : "refused");
	if (!ok)
		return;
	if (salt && !strcmp(s, "-")) {
		FUZZ_CHECK(len == 0, "salt '-' has %zu bytes", len);
		return;
	}
	FUZZ_CHECK(len == n / 2 && len <= max, "'%s' gave %zu bytes", s, len);
	ev_bin2hex(bin, len, back);
	low = fuzz_string((const uint8_t *)s, n);
	lower(low);
	FUZZ_CHECK(!strcmp(back, low), "'%s' printed back as '%s'", s, back);
	free(low);
}

static void check_uuid(const char *s)
{
	u8 uuid[16];
	char back[37], *low;
	size_t n = strlen(s);
	bool ok = !ev_parse_uuid(s, uuid), want = n == 36;

	for (size_t i = 0; want && i < n; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		want = dash ? s[i] == '-' : isxdigit((unsigned char)s[i]);
	}
	FUZZ_CHECK(ok == want, "--uuid '%s' %s", s,
		   ok ? "accepted" : "refused");
	if (!ok)
		return;
	ev_format_uuid(uuid, back);
	low = fuzz_string((const uint8_t *)s, n);
	lower(low);
	FUZZ_CHECK(!strcmp(back, low), "--uuid '%s' printed back as '%s'", s,
		   back);
	free(low);
}

static void check_hash_name(const char *s)
{
	unsigned int alg = extverity_hash_by_name(s);
	bool want = !strcmp(s, "sha256") || !strcmp(s, "sha512");

	FUZZ_CHECK(!!alg == want, "--hash '%s' %s", s,
		   alg ? "accepted" : "refused");
	if (!alg)
		return;
	FUZZ_CHECK(!strcmp(extverity_hash_name(alg), s) &&
		   extverity_digest_size(alg) ==
		   (strcmp(s, "sha256") ? 64U : 32U),
		   "--hash '%s' is algorithm %u", s, alg);
}

static bool oracle_desc(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > EV_SIG_DESC_MAX)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s >= 0x7f || *s == ',' || *s == ';' ||
		    *s == '\\')
			return false;
	return true;
}

/* Every description open makes must be one the kernel takes. */
static void check_sig_desc(const char *s)
{
	bool ok = ev_sig_valid_desc(s);
	char *desc = ev_sig_desc_for(s);

	FUZZ_CHECK(ok == oracle_desc(s), "key description '%s' %s", s,
		   ok ? "accepted" : "refused");
	FUZZ_CHECK(ev_sig_valid_desc(desc) && oracle_desc(desc),
		   "ev_sig_desc_for('%s') = '%s' is not a valid description",
		   s, desc);
	FUZZ_CHECK(!strncmp(desc, "extverity:", 10), "'%s'", desc);
	if (ok && strlen(s) <= EV_SIG_DESC_MAX - 10)
		FUZZ_CHECK(!strcmp(desc + 10, s),
			   "valid name '%s' changed to '%s'", s, desc);
	free(desc);
}

/*
 * A sequence of table options (--ignore-corruption ...), a byte each: the
 * set must refuse a repeated option and two of one group, nothing else.
 */
static void check_table_opts(const uint8_t *data, size_t size)
{
	unsigned int flags = 0, before;

	for (size_t i = 0; i < size; i++) {
		int opt = data[i] % EV_NR_TABLE_OPTS, k;
		bool want = !(flags & (1U << opt)), ok;

		for (k = 0; k < EV_NR_TABLE_OPTS; k++)
			if ((flags & (1U << k)) && ev_table_opts[opt].group &&
			    ev_table_opts[k].group == ev_table_opts[opt].group)
				want = false;
		before = flags;
		ok = !ev_table_add_opt(&flags, opt);
		FUZZ_CHECK(ok == want, "option %d after set %#x %s", opt,
			   before, ok ? "accepted" : "refused");
		FUZZ_CHECK(flags == (ok ? before | 1U << opt : before),
			   "option %d: set %#x became %#x", opt, before,
			   flags);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (!size)
		return 0;
	s = fuzz_string(data + 1, size - 1);
	switch (data[0] % 8) {
	case 0:
		check_u64(s);
		break;
	case 1:
		check_block_size(s);
		break;
	case 2:
		check_hex(s, EXTVERITY_MAX_DIGEST_SIZE, false);
		break;
	case 3:
		check_hex(s, EXTVERITY_MAX_SALT_SIZE, true);
		break;
	case 4:
		check_uuid(s);
		break;
	case 5:
		check_hash_name(s);
		break;
	case 6:
		check_sig_desc(s);
		break;
	case 7:
		check_table_opts(data + 1, size - 1);
		break;
	}
	free(s);
	return 0;
}
