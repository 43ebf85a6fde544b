// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers the commands share: usage errors, repeated options, --hash-offset,
 * the table options, JSON strings.  Kept apart from main() so that the fuzz
 * harnesses (tests/fuzz) can link the commands without it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>

#include "extverity.h"
#include "table.h"
#include "write.h"

void ev_usage(const struct ev_command *cmd, FILE *fp)
{
	fprintf(fp, "Usage:\n%s", cmd->usage);
}

int ev_option_error(const struct ev_command *cmd, char *argv[],
		    const struct option *longopts)
{
	const struct option *o;

	/*
	 * getopt_long() (opterr off) returns '?' with optopt 0 for a long
	 * option it does not know, the letter for a short one, and the
	 * option's value for one whose argument is missing or not allowed
	 * (a short option's value is its letter); argv[optind - 1] is the
	 * word as given, but for a letter inside a group (-xs).
	 */
	for (o = longopts; optopt && o->name && o->val != optopt; o++)
		;
	if (optopt && !o->name)
		ev_error("%s: unknown option '-%c'", cmd->name, optopt);
	else if (!optopt)
		ev_error("%s: unknown option '%s'", cmd->name, argv[optind - 1]);
	else if (o->has_arg == required_argument)
		ev_error("%s: option --%s needs a value", cmd->name, o->name);
	else
		ev_error("%s: option --%s takes no value", cmd->name, o->name);
	ev_usage(cmd, stderr);
	return EV_EUSAGE;
}

bool ev_operands(const struct ev_command *cmd, int argc, char *argv[],
		 const char *names)
{
	int want = 0, got = argc - optind, i;
	const char *p, *missing = NULL;

	for (p = names; *p; p += strcspn(p, " "), p += strspn(p, " ")) {
		if (want++ == got)
			missing = p;
	}
	if (got == want)
		return true;
	if (missing)
		ev_error("%s: missing %s (expected %s)", cmd->name, missing,
			 names);
	else
		for (i = optind + want; i < argc; i++)
			ev_error("%s: unexpected argument '%s' (expected %s)",
				 cmd->name, argv[i], names);
	ev_usage(cmd, stderr);
	return false;
}

bool ev_once(bool *seen, const char *opt)
{
	if (*seen) {
		ev_error("option --%s given more than once", opt);
		return false;
	}
	*seen = true;
	return true;
}

bool ev_parse_offset(const char *arg, u64 *off)
{
	if (ev_parse_u64(arg, off)) {
		ev_error("invalid --hash-offset '%s' (a byte count)", arg);
		return false;
	}
	return true;
}

void ev_table_longopts(struct option *opts, int base)
{
	int i;

	for (i = 0; i < EV_NR_TABLE_OPTS; i++) {
		opts[i].name = ev_table_opts[i].option;
		opts[i].has_arg = no_argument;
		opts[i].flag = NULL;
		opts[i].val = base + i;
	}
}

/*
 * json-c reports a failed allocation by returning NULL (or -1 from the
 * adders); as with xmalloc(), the command cannot go on without it.
 */
static void *json_check(void *p)
{
	if (!p) {
		ev_error("out of memory");
		exit(EV_ENOMEM);
	}
	return p;
}

/* Length of the valid UTF-8 sequence at @s (RFC 3629), 0 if none. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;	/* continuation byte, overlong C0/C1, > F4 */
	/* The second byte's range rules out overlongs, surrogates, > 10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

bool ev_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	for (; *p; p += n) {
		n = utf8_len(p);
		if (!n)
			return false;
	}
	return true;
}

/* @s with every byte outside a valid UTF-8 sequence as U+FFFD. */
static char *utf8_fix(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = xmalloc(3 * strlen(s) + 1), *o = out;
	size_t n;

	for (; *p; p += n) {
		n = utf8_len(p);
		if (n) {
			memcpy(o, p, n);
			o += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			n = 1;
		}
	}
	*o = '\0';
	return out;
}

struct json_object *ev_json_object(void)
{
	return json_check(json_object_new_object());
}

struct json_object *ev_json_array(void)
{
	return json_check(json_object_new_array());
}

struct json_object *ev_json_new_string(const char *s)
{
	struct json_object *v;
	char *fixed;

	if (ev_utf8_valid(s))
		return json_check(json_object_new_string(s));
	fixed = utf8_fix(s);
	v = json_check(json_object_new_string(fixed));
	free(fixed);
	return v;
}

void ev_json_add(struct json_object *obj, const char *key,
		 struct json_object *val)
{
	if (json_object_object_add(obj, key, val))
		json_check(NULL);
}

void ev_json_append(struct json_object *arr, struct json_object *val)
{
	if (json_object_array_add(arr, val))
		json_check(NULL);
}

void ev_json_add_u64(struct json_object *obj, const char *key, u64 val)
{
	ev_json_add(obj, key, json_check(json_object_new_uint64(val)));
}

void ev_json_add_bool(struct json_object *obj, const char *key, bool val)
{
	ev_json_add(obj, key, json_check(json_object_new_boolean(val)));
}

void ev_json_add_str(struct json_object *obj, const char *key, const char *s)
{
	char *hex, *hex_key;
	size_t len;

	if (!s) {
		ev_json_add(obj, key, NULL);
		return;
	}
	ev_json_add(obj, key, ev_json_new_string(s));
	if (ev_utf8_valid(s))
		return;
	/* The exact bytes, which the replaced string above lost. */
	len = strlen(s);
	hex = xmalloc(2 * len + 1);
	ev_bin2hex((const u8 *)s, len, hex);
	hex_key = xmalloc(strlen(key) + 5);
	sprintf(hex_key, "%s_hex", key);
	ev_json_add(obj, hex_key, json_check(json_object_new_string(hex)));
	free(hex_key);
	free(hex);
}

void ev_json_write(struct json_object *v)
{
	struct json_object_iterator it, end;
	const char *s;
	size_t i, n;

	/*
	 * Containers are laid out here, as {"key": value, "key": value} and
	 * [a, b], the form the tool has always printed and tests and
	 * scripts match; json-c's own spacing ({ "key": value }) differs.
	 * Keys are the tool's own ASCII names, so need no escaping; scalars,
	 * strings above all, are json-c's.
	 */
	switch (json_object_get_type(v)) {
	case json_type_object:
		putchar('{');
		it = json_object_iter_begin(v);
		end = json_object_iter_end(v);
		for (i = 0; !json_object_iter_equal(&it, &end); i++) {
			printf("%s\"%s\": ", i ? ", " : "",
			       json_object_iter_peek_name(&it));
			ev_json_write(json_object_iter_peek_value(&it));
			json_object_iter_next(&it);
		}
		putchar('}');
		break;
	case json_type_array:
		putchar('[');
		n = json_object_array_length(v);
		for (i = 0; i < n; i++) {
			if (i)
				fputs(", ", stdout);
			ev_json_write(json_object_array_get_idx(v, i));
		}
		putchar(']');
		break;
	default:
		s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
						   JSON_C_TO_STRING_NOSLASHESCAPE);
		fputs(json_check((void *)s), stdout);
	}
}

void ev_json_print(struct json_object *v)
{
	ev_json_write(v);
	putchar('\n');
	json_object_put(v);
}

int ev_root_hash_file_read(const char *path, char *hex, size_t size,
			   const char **root)
{
	bool more;
	size_t n;
	FILE *f;

	if (!path)
		return 0;
	f = fopen(path, "r");
	if (!f) {
		ev_error("cannot open %s: %s", path, strerror(errno));
		return EV_EIO;
	}
	/* A digest and a newline at most: anything longer is not one. */
	n = fread(hex, 1, size - 1, f);
	if (ferror(f)) {
		ev_error("cannot read %s: %s", path, strerror(errno));
		fclose(f);
		return EV_EIO;
	}
	more = n == size - 1 && fgetc(f) != EOF;
	fclose(f);
	hex[n] = '\0';
	/* veritysetup writes the digest alone; a newline after it is fine. */
	if (n && hex[n - 1] == '\n')
		hex[--n] = '\0';
	if (!n || more || n > size - 2 ||
	    strspn(hex, "0123456789abcdefABCDEF") != n) {
		ev_error("%s does not hold a root digest (64 or 128 hex "
			 "digits)", path);
		return EV_EUSAGE;
	}
	*root = hex;
	return 0;
}

int ev_root_hash_file_write(const char *path, const char *hex)
{
	struct stat st;

	/* Replaced whole (a new file renamed over it), never written into. */
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		ev_error("cannot write the root digest to %s: not a regular "
			 "file", path);
		return EV_EIO;
	}
	return ev_write_area(path, 0, hex, strlen(hex));
}
