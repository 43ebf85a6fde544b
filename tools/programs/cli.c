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
	 * getopt_long() (opterr off) returns '?' with optopt 0 for an option
	 * it does not know, and with optopt the option's value for one whose
	 * argument is missing or not allowed; either way argv[optind - 1] is
	 * the word as given.
	 */
	for (o = longopts; optopt && o->name && o->val != optopt; o++)
		;
	if (!optopt || !o->name)
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

void ev_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

int ev_root_hash_file_read(const char *path, char *hex, size_t size)
{
	bool more;
	size_t n;
	FILE *f;

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
