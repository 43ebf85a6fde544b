// SPDX-License-Identifier: GPL-2.0
/*
 * extverity: build and check the hash area of the extverity device-mapper
 * target.  This file dispatches to one cmd_<verb>.c per command.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "extverity.h"

static const struct ev_command commands[] = {
	{ "format", ev_cmd_format,
	  "Hash a filesystem image and write its hash area",
	  "    extverity format [--hash=sha256|sha512] [--data-block-size=N]\n"
	  "                     [-s, --salt=HEX|-|random] [--uuid=UUID]\n"
	  "                     [--hash-offset=BYTES] [--root-hash-file=FILE]\n"
	  "                     [--threads=N]\n"
	  "                     [--fs=auto|ext4|fiemap|raw] [--json] [--progress]\n"
	  "                     [--fec-device=FILE [--fec-offset=BYTES] [--fec-roots=N]]\n"
	  "                     IMAGE HASHFILE\n" },
	{ "dump", ev_cmd_dump,
	  "Show the parameters of a hash area, or its files' fs-verity digests",
	  "    extverity dump [--files] [--json] [--hash-offset=BYTES]\n"
	  "                   [--root-digest=HEX|--root-hash-file=FILE] HASHFILE\n" },
	{ "verify", ev_cmd_verify,
	  "Check a whole image against its hash area",
	  "    extverity verify [--hash-offset=BYTES] [--json] [--progress]\n"
	  "                     [--fec-device=FILE] IMAGE HASHFILE ROOT_DIGEST\n"
	  "    extverity verify [OPTION...] --root-hash-file=FILE IMAGE HASHFILE\n" },
	{ "repair", ev_cmd_repair,
	  "Write a copy of an image with the blocks its FEC parity corrects",
	  "    extverity repair [--hash-offset=BYTES] --fec-device=FILE\n"
	  "                     [--hash-output=FILE] IMAGE HASHFILE ROOT_DIGEST OUTPUT\n"
	  "    extverity repair [OPTION...] --root-hash-file=FILE IMAGE HASHFILE OUTPUT\n" },
	{ "which", ev_cmd_which,
	  "Name the file (and byte offset), metadata or free space of data blocks",
	  "    extverity which [--hash-offset=BYTES] [--json]\n"
	  "                    --root-digest=HEX|--root-hash-file=FILE\n"
	  "                    HASHFILE BLOCK...\n" },
	{ "measure", ev_cmd_measure,
	  "Print the fs-verity digests the kernel gives files on extverity devices",
	  "    extverity measure [--json] FILE...\n" },
	{ "table", ev_cmd_table,
	  "Print the device-mapper table line",
	  "    extverity table [--hash-offset=BYTES]\n"
	  "                    [--ignore-corruption|--restart-on-corruption|--panic-on-corruption]\n"
	  "                    [--restart-on-error|--panic-on-error] [--check-at-most-once]\n"
	  "                    [--use-tasklets] [--root-hash-signature-key=DESC]\n"
	  "                    [--fec-device=FEC_DEV] DATA_DEV HASH_DEV ROOT_DIGEST\n"
	  "    extverity table [OPTION...] --root-hash-file=FILE DATA_DEV HASH_DEV\n" },
	{ "open", ev_cmd_open,
	  "Create a verified device-mapper device (loop devices for files)",
	  "    extverity open [--hash-offset=BYTES]\n"
	  "                   [--ignore-corruption|--restart-on-corruption|--panic-on-corruption]\n"
	  "                   [--restart-on-error|--panic-on-error] [--check-at-most-once]\n"
	  "                   [--use-tasklets] [--root-hash-signature=FILE] [--json]\n"
	  "                   [--fec-device=FEC] DATA NAME HASH ROOT_DIGEST\n"
	  "    extverity open [OPTION...] --root-hash-file=FILE DATA NAME HASH\n" },
	{ "close", ev_cmd_close,
	  "Remove a device created by open",
	  "    extverity close [--deferred] NAME\n" },
	{ "status", ev_cmd_status,
	  "Show the state of an extverity device",
	  "    extverity status [--json] [--hash-device=PATH [--hash-offset=BYTES]] NAME\n" },
	{ "sign", ev_cmd_sign,
	  "Sign a root digest for the kernel (PKCS#7)",
	  "    extverity sign --key=KEY.pem --cert=CERT.pem ROOT_DIGEST OUT.p7s\n" },
};

static void usage_all(FILE *fp)
{
	size_t i;

	fputs("Usage: extverity COMMAND [OPTION...] ARG...\n\nCommands:\n", fp);
	for (i = 0; i < EV_ARRAY_SIZE(commands); i++)
		fprintf(fp, "  %-8s %s\n", commands[i].name,
			commands[i].short_desc);
	fputs("\n", fp);
	for (i = 0; i < EV_ARRAY_SIZE(commands); i++)
		fputs(commands[i].usage, fp);
	fputs("\nEvery command: -v, --verbose (\"Command successful.\"); --debug\n"
	      "(also what is done, as \"# \" lines on standard error).\n"
	      "Other: extverity -?, --help | -V, --version | COMMAND -?, --help\n"
	      "Exit codes: 0 ok, 1 usage or root digest mismatch, 2 corruption "
	      "found,\n3 out of memory, 4 I/O error or device not found, 5 busy.\n", fp);
}

/*
 * Flush standard output and fail @rc if it could not be written: a root
 * digest or a digest list lost to a full disk or a closed pipe must not
 * exit 0.  The hash file itself was written and checked by then.
 */
static int close_stdout(int rc)
{
	bool failed = ferror(stdout);

	errno = 0;
	if (fclose(stdout))
		failed = true;
	if (!failed)
		return rc;
	if (errno)
		ev_error("cannot write standard output: %s", strerror(errno));
	else
		ev_error("cannot write standard output");
	return rc ? rc : EV_EIO;
}

static int run(int argc, char *argv[])
{
	size_t i;
	int k;

	opterr = 0;	/* our own messages start with "extverity: " */
	if (argc < 2) {
		usage_all(stderr);
		return EV_EUSAGE;
	}
	/* -? and -V as veritysetup's; -h was help before it could be --hash. */
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-?") ||
	    !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage_all(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("extverity %s (on-disk format 1)\n", EXTVERITY_VERSION);
		return 0;
	}
	for (i = 0; i < EV_ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		for (k = 2; k < argc && strcmp(argv[k], "--"); k++) {
			if (!strcmp(argv[k], "--help") ||
			    !strcmp(argv[k], "-?")) {
				ev_usage(&commands[i], stdout);
				return 0;
			}
		}
		return commands[i].func(&commands[i], argc - 1, argv + 1);
	}
	ev_error("unknown command '%s'", argv[1]);
	usage_all(stderr);
	return EV_EUSAGE;
}

/*
 * Take the options every command has, as veritysetup's, out of @argv (up to
 * "--"): -v/--verbose says "Command successful." at the end, --debug also
 * prints what is done, and libdevmapper's messages, as "# " lines.  Returns
 * the new argc.
 */
static int global_options(int argc, char *argv[], bool *json)
{
	int i, n = 1;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < argc)
				argv[n++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			if (!ev_verbosity)
				ev_verbosity = 1;
			continue;
		}
		if (!strcmp(argv[i], "--debug")) {
			ev_verbosity = 2;
			continue;
		}
		*json |= !strcmp(argv[i], "--json");
		argv[n++] = argv[i];
	}
	argv[n] = NULL;
	return n;
}

int main(int argc, char *argv[])
{
	bool json = false;
	int rc;

	argc = global_options(argc, argv, &json);
	rc = run(argc, argv);
	/* Not after JSON, which must stay one object. */
	if (!rc && ev_verbosity && !json)
		puts("Command successful.");
	return close_stdout(rc);
}
