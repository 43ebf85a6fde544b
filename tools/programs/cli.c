// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers the commands share: usage errors, repeated options, --hash-offset,
 * the table options, JSON strings.  Kept apart from main() so that the fuzz
 * harnesses (tests/fuzz) can link the commands without it.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "extverity.h"
#include "table.h"

void ev_usage(const struct ev_command *cmd, FILE *fp)
{
	fprintf(fp, "Usage:\n%s", cmd->usage);
}

int ev_usage_error(const struct ev_command *cmd)
{
	ev_error("%s: unknown option or wrong number of arguments",
		 cmd->name);
	ev_usage(cmd, stderr);
	return EV_EUSAGE;
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
