/* SPDX-License-Identifier: GPL-2.0 */
/* The extverity command-line tool: commands and their shared helpers. */
#ifndef EXTVERITY_PROGRAM_H
#define EXTVERITY_PROGRAM_H

#include <getopt.h>
#include <stdio.h>
#include "util.h"

struct ev_command;

/* Each command returns its exit code. */
int ev_cmd_format(const struct ev_command *cmd, int argc, char *argv[]);
int ev_cmd_dump(const struct ev_command *cmd, int argc, char *argv[]);
int ev_cmd_verify(const struct ev_command *cmd, int argc, char *argv[]);
int ev_cmd_table(const struct ev_command *cmd, int argc, char *argv[]);
int ev_cmd_open(const struct ev_command *cmd, int argc, char *argv[]);
int ev_cmd_close(const struct ev_command *cmd, int argc, char *argv[]);
int ev_cmd_status(const struct ev_command *cmd, int argc, char *argv[]);
int ev_cmd_sign(const struct ev_command *cmd, int argc, char *argv[]);

/**
 * struct ev_command - one entry of the dispatcher table
 * @name: the verb
 * @func: its implementation
 * @short_desc: one line for the global help
 * @usage: its synopsis
 */
struct ev_command {
	const char *name;
	int (*func)(const struct ev_command *cmd, int argc, char *argv[]);
	const char *short_desc;
	const char *usage;
};

/* Print @cmd's usage to @fp. */
void ev_usage(const struct ev_command *cmd, FILE *fp);
/*
 * After getopt_long() returned '?': name the unknown option, or the option
 * whose value is missing or not allowed, print usage, return EV_EUSAGE.
 */
int ev_option_error(const struct ev_command *cmd, char *argv[],
		    const struct option *longopts);
/*
 * Check that the arguments left after the options are @names (words
 * separated by spaces, e.g. "IMAGE HASHFILE"); false after naming the
 * missing or unexpected ones and printing usage.
 */
bool ev_operands(const struct ev_command *cmd, int argc, char *argv[],
		 const char *names);
/* Reject an option given twice; returns false after printing an error. */
bool ev_once(bool *seen, const char *opt);
/* Parse --hash-offset; false after printing an error. */
bool ev_parse_offset(const char *arg, u64 *off);
/*
 * Fill @opts[0..EV_NR_TABLE_OPTS) with the table options (--ignore-corruption
 * ...), option i returning @base + i from getopt_long().
 */
void ev_table_longopts(struct option *opts, int base);
/*
 * The root digest in --root-hash-file @path (hex digits, a newline after
 * them allowed, as veritysetup's) into @hex of @size bytes, which must hold
 * the longest digest, a newline and a NUL: 0 or an exit code with the
 * error printed.
 */
int ev_root_hash_file_read(const char *path, char *hex, size_t size);
/*
 * Write @hex alone to regular file @path, as veritysetup does, through a
 * new file renamed over it: nothing half-written on failure.
 */
int ev_root_hash_file_write(const char *path, const char *hex);
/* Size of the buffer ev_root_hash_file_read() needs. */
#define EV_ROOT_HEX_SIZE (2 * EXTVERITY_MAX_DIGEST_SIZE + 2)
/* Print @s as a JSON string (quoted, escaped) to stdout. */
void ev_json_string(const char *s);

#endif /* EXTVERITY_PROGRAM_H */
