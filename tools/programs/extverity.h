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
int ev_cmd_which(const struct ev_command *cmd, int argc, char *argv[]);
int ev_cmd_measure(const struct ev_command *cmd, int argc, char *argv[]);
int ev_cmd_repair(const struct ev_command *cmd, int argc, char *argv[]);

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
 * The root digest of --root-hash-file @path (hex digits, a newline after
 * them allowed, as veritysetup's): read into @hex of @size bytes, which
 * must hold the longest digest, a newline and a NUL, and *@root pointed at
 * it.  @path NULL (no such option): *@root is left as it is.  0 or an exit
 * code with the error printed.
 */
int ev_root_hash_file_read(const char *path, char *hex, size_t size,
			   const char **root);
/*
 * Write @hex alone to regular file @path, as veritysetup does, through a
 * new file renamed over it: nothing half-written on failure.
 */
int ev_root_hash_file_write(const char *path, const char *hex);
/* Size of the buffer ev_root_hash_file_read() needs. */
#define EV_ROOT_HEX_SIZE (2 * EXTVERITY_MAX_DIGEST_SIZE + 2)
/*
 * JSON output, built with json-c.  A failed allocation prints "out of
 * memory" and exits 3, as xmalloc() does.  Strings must be UTF-8 in JSON,
 * and file names need not be: ev_json_new_string() replaces every byte
 * that is not part of a valid UTF-8 sequence with U+FFFD, and
 * ev_json_add_str() then also adds "<key>_hex", the exact bytes in hex
 * (docs/cli.md).
 */
struct json_object;
bool ev_utf8_valid(const char *s);
struct json_object *ev_json_object(void);
struct json_object *ev_json_array(void);
struct json_object *ev_json_new_string(const char *s);
/* Add @val (NULL: null) under @key, which must be plain ASCII. */
void ev_json_add(struct json_object *obj, const char *key,
		 struct json_object *val);
void ev_json_append(struct json_object *arr, struct json_object *val);
void ev_json_add_u64(struct json_object *obj, const char *key, u64 val);
void ev_json_add_bool(struct json_object *obj, const char *key, bool val);
/* @s, or null for NULL; with "<key>_hex" when @s is not UTF-8. */
void ev_json_add_str(struct json_object *obj, const char *key,
		     const char *s);
/* Print @v to stdout as {"key": value, ...} on one line, no newline. */
void ev_json_write(struct json_object *v);
/* ev_json_write(), a newline, then free @v. */
void ev_json_print(struct json_object *v);

#endif /* EXTVERITY_PROGRAM_H */
