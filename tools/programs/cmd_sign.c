// SPDX-License-Identifier: GPL-2.0
/*
 * extverity sign: make the detached PKCS#7 signature of a root digest that
 * `extverity open --root-hash-signature` hands to the kernel.
 */
#include <getopt.h>

#include "extverity.h"
#include "sig.h"

enum { OPT_KEY = 256, OPT_CERT };

int ev_cmd_sign(const struct ev_command *cmd, int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "key", required_argument, NULL, OPT_KEY },
		{ "cert", required_argument, NULL, OPT_CERT },
		{ NULL, 0, NULL, 0 },
	};
	const char *key = NULL, *cert = NULL;
	bool seen_key = false, seen_cert = false;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == OPT_KEY) {
			if (!ev_once(&seen_key, "key"))
				return EV_EUSAGE;
			key = optarg;
		} else if (c == OPT_CERT) {
			if (!ev_once(&seen_cert, "cert"))
				return EV_EUSAGE;
			cert = optarg;
		} else {
			return ev_option_error(cmd, argv, longopts);
		}
	}
	if (!ev_operands(cmd, argc, argv, "ROOT_DIGEST OUT.p7s"))
		return EV_EUSAGE;
	if (!key || !cert) {
		ev_error("sign needs --key and --cert");
		ev_usage(cmd, stderr);
		return EV_EUSAGE;
	}
	return ev_sig_sign(key, cert, argv[optind], argv[optind + 1]);
}
