// SPDX-License-Identifier: GPL-2.0
/*
 * Signed root digests.  See sig.h and docs/signing.md.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/keyctl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>

#include "dm-extverity-format.h"
#include "sig.h"

static bool desc_char_ok(char c)
{
	return c > ' ' && c < 0x7f && c != ',' && c != ';' && c != '\\';
}

bool ev_sig_valid_desc(const char *desc)
{
	size_t len = strlen(desc), i;

	if (!len || len > EV_SIG_DESC_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!desc_char_ok(desc[i]))
			return false;
	return true;
}

char *ev_sig_desc_for(const char *name)
{
	static const char prefix[] = "extverity:";
	size_t n = strnlen(name, EV_SIG_DESC_MAX - (sizeof(prefix) - 1)), i;
	char *desc = xmalloc(sizeof(prefix) + n);

	memcpy(desc, prefix, sizeof(prefix) - 1);
	for (i = 0; i < n; i++)
		desc[sizeof(prefix) - 1 + i] = desc_char_ok(name[i]) ?
					       name[i] : '_';
	desc[sizeof(prefix) - 1 + n] = '\0';
	return desc;
}

/* The last OpenSSL error, for a message. */
static const char *ssl_reason(void)
{
	const char *r = ERR_reason_error_string(ERR_peek_last_error());

	return r ? r : "unknown OpenSSL error";
}

static EVP_PKEY *read_key(const char *path, int *err)
{
	EVP_PKEY *pkey = NULL;
	BIO *in = BIO_new_file(path, "r");

	if (!in) {
		ev_error("cannot read key '%s': %s", path, strerror(errno));
		*err = EV_EIO;
		return NULL;
	}
	pkey = PEM_read_bio_PrivateKey(in, NULL, NULL, NULL);
	BIO_free(in);
	if (!pkey) {
		ev_error("'%s' is not a PEM private key: %s", path,
			 ssl_reason());
		*err = EV_EUSAGE;
	}
	return pkey;
}

static X509 *read_cert(const char *path, int *err)
{
	X509 *cert = NULL;
	BIO *in = BIO_new_file(path, "r");

	if (!in) {
		ev_error("cannot read certificate '%s': %s", path,
			 strerror(errno));
		*err = EV_EIO;
		return NULL;
	}
	cert = PEM_read_bio_X509(in, NULL, NULL, NULL);
	BIO_free(in);
	if (!cert) {
		ev_error("'%s' is not a PEM certificate: %s", path,
			 ssl_reason());
		*err = EV_EUSAGE;
	}
	return cert;
}

int ev_sig_sign(const char *key, const char *cert, const char *root_hex,
		const char *out)
{
	/*
	 * No certificates: the kernel finds the signer among its trusted
	 * keys by issuer and serial number.  No signed attributes: nothing
	 * but the digest string is signed.  Binary: the string as is, not
	 * converted to canonical MIME text.
	 */
	const int flags = PKCS7_DETACHED | PKCS7_BINARY | PKCS7_NOATTR |
			  PKCS7_NOCERTS;
	u8 root[EXTVERITY_MAX_DIGEST_SIZE];
	char hex[2 * EXTVERITY_MAX_DIGEST_SIZE + 1];
	EVP_PKEY *pkey = NULL;
	X509 *x509 = NULL;
	PKCS7 *p7 = NULL;
	BIO *data = NULL, *bout = NULL;
	size_t len;
	int err = 0;

	if (ev_hex2bin(root_hex, root, sizeof(root), &len) ||
	    (len != 32 && len != 64)) {
		ev_error("invalid root digest '%s' (expected 64 or 128 hex "
			 "digits)", root_hex);
		return EV_EUSAGE;
	}
	ev_bin2hex(root, len, hex);
	pkey = read_key(key, &err);
	if (pkey)
		x509 = read_cert(cert, &err);
	if (!x509)
		goto out;
	if (!X509_check_private_key(x509, pkey)) {
		ev_error("key '%s' does not belong to certificate '%s'", key,
			 cert);
		err = EV_EUSAGE;
		goto out;
	}
	data = BIO_new_mem_buf(hex, 2 * len);
	if (!data) {
		ev_error("out of memory");
		err = EV_ENOMEM;
		goto out;
	}
	p7 = PKCS7_sign(x509, pkey, NULL, data, flags);
	if (!p7) {
		ev_error("cannot sign with '%s': %s", key, ssl_reason());
		err = EV_EUSAGE;
		goto out;
	}
	bout = BIO_new_file(out, "wb");
	if (!bout) {
		ev_error("cannot create '%s': %s", out, strerror(errno));
		err = EV_EIO;
		goto out;
	}
	if (!i2d_PKCS7_bio(bout, p7) || BIO_flush(bout) != 1) {
		ev_error("cannot write '%s'", out);
		err = EV_EIO;
	}
	if (BIO_free(bout) != 1 && !err) {
		ev_error("cannot write '%s'", out);
		err = EV_EIO;
	}
	if (err)
		unlink(out);
out:
	PKCS7_free(p7);
	BIO_free(data);
	X509_free(x509);
	EVP_PKEY_free(pkey);
	return err;
}

int ev_sig_load(const char *file, const char *desc, int32_t *serial)
{
	char *buf = xmalloc(EV_SIG_MAX_SIZE + 1);
	ssize_t n;
	size_t len = 0;
	long id;
	int fd, err = 0;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ev_error("cannot read signature '%s': %s", file,
			 strerror(errno));
		free(buf);
		return EV_EIO;
	}
	/* One byte more than a key can hold tells a file that is too big. */
	while (len <= EV_SIG_MAX_SIZE &&
	       (n = read(fd, buf + len, EV_SIG_MAX_SIZE + 1 - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ev_error("cannot read signature '%s': %s", file,
				 strerror(errno));
			err = EV_EIO;
			break;
		}
		len += n;
	}
	close(fd);
	if (!err && (!len || len > EV_SIG_MAX_SIZE)) {
		ev_error("signature '%s' is %s (1 to %d bytes)", file,
			 len ? "too large" : "empty", EV_SIG_MAX_SIZE);
		err = EV_EUSAGE;
	}
	if (!err) {
		id = syscall(SYS_add_key, "user", desc, buf, len,
			     KEY_SPEC_THREAD_KEYRING);
		if (id < 0) {
			ev_error("cannot add the signature to the kernel "
				 "keyring: %s", strerror(errno));
			err = EV_EIO;
		} else {
			*serial = id;
		}
	}
	free(buf);
	return err;
}

void ev_sig_unload(int32_t serial)
{
	syscall(SYS_keyctl, KEYCTL_UNLINK, serial, KEY_SPEC_THREAD_KEYRING);
}
