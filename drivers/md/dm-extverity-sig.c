// SPDX-License-Identifier: GPL-2.0
/*
 * dm-extverity: signed root digests (table option root_hash_sig_key_desc,
 * module parameter require_signatures; docs/signing.md).
 *
 * The signature is a detached PKCS#7 message over the root digest written
 * as lowercase hex ASCII, no newline: the string `extverity format` prints
 * and `veritysetup` users already sign.  It is taken from a "user" key in
 * the keyrings of the task loading the table and checked against the
 * secondary trusted keyring (which includes the builtin one), before the
 * hash device is read at all: a table whose root digest is not vouched for
 * never gets to parse attacker-chosen metadata.
 */
#include <linux/ctype.h>
#include <linux/key.h>
#include <linux/module.h>
#include <linux/verification.h>
#include <keys/user-type.h>

#include "dm-extverity.h"

/*
 * Read-only once loaded: a switch that root could turn off at run time
 * would not be much of a policy.  Set it with modprobe, or with
 * dm_extverity.require_signatures=1 on the command line when built in.
 */
static bool require_signatures;
module_param(require_signatures, bool, 0444);
MODULE_PARM_DESC(require_signatures,
		 "Refuse tables without a valid root digest signature");

/* Longest key description accepted; the kernel's own limit is 4095. */
#define EXTVERITY_SIG_DESC_MAX	255

/*
 * The description must survive the round trip through the status line
 * (split on white space, '\\' escapes) and the IMA record (',' and ';'
 * separate fields there).
 */
static bool is_valid_desc(const char *desc)
{
	size_t len = strnlen(desc, EXTVERITY_SIG_DESC_MAX + 1);
	size_t i;

	if (!len || len > EXTVERITY_SIG_DESC_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isascii(desc[i]) || !isgraph(desc[i]) ||
		    strchr(",;\\", desc[i]))
			return false;
	return true;
}

int extverity_sig_parse_opt(struct extverity_target *v, const char *desc,
			    char **error)
{
	if (!is_valid_desc(desc)) {
		*error = "Invalid signature key description";
		return -EINVAL;
	}
	v->sig_key_desc = kstrdup(desc, GFP_KERNEL);
	if (!v->sig_key_desc) {
		*error = "Cannot allocate memory";
		return -ENOMEM;
	}
	return 0;
}

/*
 * A copy of the payload of the user key @desc: the key is only read-locked
 * for the copy, not across the signature check.
 */
static void *read_sig(const char *desc, size_t *len)
{
	const struct user_key_payload *payload;
	struct key *key;
	void *sig;

	key = request_key(&key_type_user, desc, NULL);
	if (IS_ERR(key))
		return ERR_CAST(key);
	down_read(&key->sem);
	payload = user_key_payload_locked(key);
	if (!payload) {
		sig = ERR_PTR(-EKEYREVOKED);	/* revoked after the lookup */
	} else {
		*len = payload->datalen;
		sig = kmemdup(payload->data, payload->datalen, GFP_KERNEL);
		if (!sig)
			sig = ERR_PTR(-ENOMEM);
	}
	up_read(&key->sem);
	key_put(key);
	return sig;
}

int extverity_sig_check(struct extverity_target *v, char **error)
{
	char hex[2 * EXTVERITY_MAX_DIGEST_SIZE];
	u32 ds = extverity_digest_size(v->p.hash_algorithm);
	size_t len;
	void *sig;
	int err;

	if (!v->sig_key_desc) {
		if (!require_signatures)
			return 0;
		*error = "Root digest signature required (require_signatures) but not given";
		return -ENOKEY;
	}
	sig = read_sig(v->sig_key_desc, &len);
	if (IS_ERR(sig)) {
		err = PTR_ERR(sig);
		if (err == -ENOKEY)
			*error = "Root digest signature key not found";
		else if (err == -ENOMEM)
			*error = "Cannot allocate memory";
		else
			*error = "Root digest signature key unusable";
		return err;
	}
	bin2hex(hex, v->root, ds);
	err = verify_pkcs7_signature(hex, 2 * ds, sig, len,
				     VERIFY_USE_SECONDARY_KEYRING,
				     VERIFYING_UNSPECIFIED_SIGNATURE,
				     NULL, NULL);
	kfree(sig);
	switch (err) {
	case 0:
		return 0;
	case -ENOKEY:
		*error = "Root digest signature is not from a trusted key";
		break;
	case -EKEYREJECTED:
		*error = "Root digest signature does not match the root digest";
		break;
	case -ENOPKG:
		*error = "Root digest signature uses an unsupported algorithm";
		break;
	case -ENOMEM:
		*error = "Cannot allocate memory";
		break;
	default:
		*error = "Invalid root digest signature";
		break;
	}
	return err;
}
