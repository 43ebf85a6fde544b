/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Signed root digests (docs/signing.md): making the detached PKCS#7
 * signature the kernel checks, and handing one to the kernel through a
 * "user" key for the table option root_hash_sig_key_desc.
 */
#ifndef EXTVERITY_SIG_H
#define EXTVERITY_SIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util.h"

/* The table option that names the key. */
#define EV_SIG_TABLE_OPT	"root_hash_sig_key_desc"
/* Longest key description the kernel module accepts. */
#define EV_SIG_DESC_MAX		255
/* Largest payload of a "user" key, so the largest signature. */
#define EV_SIG_MAX_SIZE		32767

/*
 * True when the kernel module takes @desc as a key description: 1 to
 * EV_SIG_DESC_MAX printable ASCII characters, none of space , ; \.
 */
bool ev_sig_valid_desc(const char *desc);

/*
 * The key description open uses for device @name: "extverity:" and the
 * name, each character the kernel would refuse replaced by '_'.  Allocated.
 */
char *ev_sig_desc_for(const char *name);

/**
 * ev_sig_sign() - write the signature of a root digest
 * @key: PEM private key file
 * @cert: PEM certificate of that key (trusted by the kernel, or its CA is)
 * @root_hex: the root digest, 64 or 128 hex digits, either case
 * @out: the DER PKCS#7 file to write
 *
 * Signs the lowercase hex digits of @root_hex (no newline) with a detached
 * PKCS#7 signature without certificates or signed attributes, the form the
 * kernel verifies.
 *
 * Return: 0 or an exit code, with the error printed.
 */
int ev_sig_sign(const char *key, const char *cert, const char *root_hex,
		const char *out);

/**
 * ev_sig_load() - put a signature file into the calling thread's keyring
 * @file: the DER PKCS#7 signature
 * @desc: the key's description (ev_sig_valid_desc())
 * @serial: set to the new key's serial number
 *
 * The thread keyring is searched by the kernel when this thread loads a
 * table, and dies with the thread: no key outlives the command.
 *
 * Return: 0 or an exit code, with the error printed.
 */
int ev_sig_load(const char *file, const char *desc, int32_t *serial);

/* Remove the key ev_sig_load() added (the table load has read it). */
void ev_sig_unload(int32_t serial);

#endif /* EXTVERITY_SIG_H */
