// SPDX-License-Identifier: GPL-2.0
/*
 * extverity-generator: a systemd generator (systemd.generator(7)) that turns
 * the verified volumes of the kernel command line and of /etc/extveritytab
 * into extverity@NAME.service units, as systemd-veritysetup-generator does
 * for dm-verity (docs/boot.md, extverity-generator(8), extveritytab(5)).
 *
 * In the initrd (/etc/initrd-release exists):
 *   extverity.root=DATA,HASH,DIGEST[,OPTION...]   volume "vroot"
 *   extverity.usr=DATA,HASH,DIGEST[,OPTION...]    volume "vusr"
 *   and the /etc/extveritytab lines marked x-initrd.attach.
 * On the running system: every other /etc/extveritytab line.  A volume
 * opened in the initrd stays open across the switch to the real root; the
 * running system neither opens it again nor closes it at shutdown.
 *
 * The generator only writes units: the volume is opened by `extverity
 * open`, which authenticates the hash area against the digest, when the
 * unit starts.  A line it cannot understand is reported on stderr (the
 * journal, or the kernel log this early) and gets no unit, so whatever
 * needs the volume waits for a device that never comes: nothing is ever
 * mounted unverified.  Every input is bounded: the command line to 64 KiB,
 * a table line to 4 KiB.
 *
 * The tests point it elsewhere: EXTVERITY_GENERATOR_CMDLINE (the command
 * line itself), EXTVERITY_GENERATOR_TAB (the table's path) and
 * EXTVERITY_GENERATOR_INITRD (1 or 0).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CMDLINE_MAX	65536
#define LINE_MAX_LEN	4096
/* DM_NAME_LEN (128) less the terminating NUL. */
#define NAME_MAX_LEN	127
/* What a unit or a symlink path needs at most, all fields bounded. */
#define UNIT_PATH_MAX	8192

#define TAB_PATH	"/etc/extveritytab"
#define KEY_DIR		"/etc/extverity"

/* Where a volume came from, for messages and for SourcePath=. */
struct source {
	const char *path;	/* /proc/cmdline or the table */
	unsigned int line;	/* 0 for the command line */
	const char *what;	/* "extverity.root=" or NULL */
};

/*
 * One volume.  Pointers go into the caller's buffer (a table line or a
 * command line word) and into opts[], which holds `extverity open`'s
 * options; none outlives the call that writes its unit.
 */
struct volume {
	const char *name;
	const char *data;
	const char *hash;
	const char *digest;
	char opts[LINE_MAX_LEN + 256];
	bool noauto;
	bool nofail;
	bool netdev;
	bool initrd_attach;
	bool has_signature;
	bool from_cmdline;
};

static const char *dest_dir;
static bool in_initrd;
static int status;

static void __attribute__((format(printf, 2, 3)))
complain(const struct source *src, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "extverity-generator: %s", src->path);
	if (src->line)
		fprintf(stderr, ":%u", src->line);
	if (src->what)
		fprintf(stderr, ": %s", src->what);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; no unit written\n", stderr);
	status = 1;
}

/*
 * Unit files and ExecStart= lines take a value verbatim when it has no
 * white space, quote, backslash, specifier '%' or control character; a
 * device path, digest or option that has one is refused rather than
 * escaped (no device name or digest needs it).
 */
static bool plain(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned char c = *s;

		if (c <= ' ' || c >= 0x7f || strchr("\"'\\%;", c))
			return false;
	}
	return true;
}

/* A device-mapper name as `extverity open` and dmsetup accept it. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > NAME_MAX_LEN || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._+-", *s))
			return false;
	return true;
}

/*
 * systemd's path escaping (systemd.unit(5), `systemd-escape --path`):
 * slashes become '-', and every byte other than [A-Za-z0-9:_.] (and a
 * leading '.') becomes \xNN.  @path is absolute and plain().
 */
static bool escape_path(const char *path, char *out, size_t size)
{
	size_t n = 0;
	const char *p = path;
	bool first = true;

	while (*p == '/')
		p++;
	for (; *p; p++) {
		unsigned char c = *p;
		char tmp[5];
		const char *add = tmp;

		if (c == '/') {
			if (p[1] == '/' || !p[1])
				continue;
			tmp[0] = '-';
			tmp[1] = 0;
		} else if (isalnum(c) || c == ':' || c == '_' ||
			   (c == '.' && !first)) {
			tmp[0] = c;
			tmp[1] = 0;
		} else {
			snprintf(tmp, sizeof(tmp), "\\x%02x", c);
		}
		first = false;
		if (n + strlen(add) >= size)
			return false;
		memcpy(out + n, add, strlen(add));
		n += strlen(add);
	}
	if (!n)
		return false;
	out[n] = 0;
	return true;
}

/* An instance name: the same rules, without the slashes. */
static bool escape_instance(const char *name, char *out, size_t size)
{
	char tmp[NAME_MAX_LEN + 2];

	snprintf(tmp, sizeof(tmp), "/%s", name);
	return escape_path(tmp, out, size);
}

/*
 * udev's encoding of a label in /dev/disk/by-label (and by-partlabel):
 * bytes other than [A-Za-z0-9#+-.:=@_] become \xNN.  udev writes "\x2f"
 * for '/', so the link name never has a slash.
 */
static bool udev_encode(const char *s, char *out, size_t size)
{
	size_t n = 0;

	for (; *s; s++) {
		unsigned char c = *s;
		int w;

		if (isalnum(c) || strchr("#+-.:=@_", c))
			w = snprintf(out + n, size - n, "%c", c);
		else
			w = snprintf(out + n, size - n, "\\x%02x", c);
		if (w < 0 || (size_t)w >= size - n)
			return false;
		n += w;
	}
	return n > 0;
}

/*
 * The device node @spec names: a /dev path as is, UUID=, LABEL=, PARTUUID=
 * and PARTLABEL= through udev's /dev/disk links; any other absolute path
 * is a file (`extverity open` attaches it to a loop device) and *@is_file
 * is set.
 */
static bool device_path(const char *spec, char *out, size_t size,
			bool *is_file)
{
	static const struct {
		const char *tag;
		const char *dir;
		bool encode;
	} tags[] = {
		{ "UUID=", "/dev/disk/by-uuid/", false },
		{ "PARTUUID=", "/dev/disk/by-partuuid/", false },
		{ "LABEL=", "/dev/disk/by-label/", true },
		{ "PARTLABEL=", "/dev/disk/by-partlabel/", true },
	};
	size_t i;

	*is_file = false;
	for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		size_t len = strlen(tags[i].tag), dlen = strlen(tags[i].dir);
		const char *v = spec + len;

		if (strncmp(spec, tags[i].tag, len))
			continue;
		if (!*v || dlen >= size)
			return false;
		memcpy(out, tags[i].dir, dlen + 1);
		if (tags[i].encode)
			return udev_encode(v, out + dlen, size - dlen);
		if (strchr(v, '/') || dlen + strlen(v) >= size)
			return false;
		strcpy(out + dlen, v);
		return true;
	}
	if (spec[0] != '/' || strlen(spec) >= size || strstr(spec, "/../") ||
	    strstr(spec, "/./"))
		return false;
	strcpy(out, spec);
	*is_file = strncmp(spec, "/dev/", 5) != 0;
	return true;
}

static bool append(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
	return w >= 0 && (size_t)w < size - n;
}

/*
 * " --NAME[VALUE]" onto @v's options for `extverity open`, which takes each
 * option once: a repeated one is refused here, where the line can be
 * named.  @name ends in '=' when the option takes a value.
 */
static bool add_flag(struct volume *v, const char *name, const char *value,
		     const struct source *src)
{
	char key[64];

	snprintf(key, sizeof(key), " --%s", name);
	if (strstr(v->opts, key)) {
		complain(src, "option '%.*s' given twice",
			 (int)strcspn(name, "="), name);
		return false;
	}
	if (!append(v->opts, sizeof(v->opts), "%s%s", key, value)) {
		complain(src, "options too long");
		return false;
	}
	return true;
}

/*
 * One option of a volume.  The command line spells them as the
 * initramfs-tools script does (check_at_most_once, hash_offset=), the
 * table as veritytab does (check-at-most-once, hash-offset=); both are
 * accepted in both places.
 */
static bool add_option(struct volume *v, const char *o,
		       const struct source *src)
{
	static const char *const flags[] = {
		"ignore-corruption", "restart-on-corruption",
		"panic-on-corruption", "restart-on-error", "panic-on-error",
		"check-at-most-once",
	};
	char word[LINE_MAX_LEN];
	char *eq, *p;
	size_t i;

	if (strlen(o) >= sizeof(word)) {
		complain(src, "option too long");
		return false;
	}
	strcpy(word, o);
	eq = strchr(word, '=');
	for (p = word; *p && p != eq; p++)
		if (*p == '_' && p != word)
			*p = '-';
	if (!strcmp(word, "eio") || !strcmp(word, "defaults"))
		return true;
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!strcmp(word, flags[i]))
			return add_flag(v, word, "", src);
	if (!strcmp(word, "noauto")) {
		v->noauto = true;
		return true;
	}
	if (!strcmp(word, "nofail")) {
		v->nofail = true;
		return true;
	}
	if (!strcmp(word, "_netdev")) {
		v->netdev = true;
		return true;
	}
	if (!strcmp(word, "x-initrd.attach")) {
		v->initrd_attach = true;
		return true;
	}
	if (eq) {
		*eq = 0;
		if (!strcmp(word, "hash-offset") && eq[1] &&
		    strspn(eq + 1, "0123456789") == strlen(eq + 1))
			return add_flag(v, "hash-offset=", eq + 1, src);
		if (!strcmp(word, "root-hash-signature") && eq[1] == '/' &&
		    plain(eq + 1)) {
			v->has_signature = true;
			return add_flag(v, "root-hash-signature=", eq + 1, src);
		}
		*eq = '=';
	}
	complain(src, "unknown or malformed option '%s'", o);
	return false;
}

static bool is_hex(const char *s)
{
	size_t n = strlen(s);

	return (n == 64 || n == 128) && strspn(s, "0123456789abcdefABCDEF") == n;
}

static FILE *create(const char *dir, const char *name,
		    const struct source *src)
{
	char path[UNIT_PATH_MAX];
	FILE *f;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path)) {
		complain(src, "path too long");
		return NULL;
	}
	f = fopen(path, "wx");
	if (!f)
		complain(src, "cannot create %s: %s", path, strerror(errno));
	return f;
}

/* dest_dir/TARGET.SUFFIX/UNIT -> ../UNIT */
static bool link_unit(const char *target, const char *suffix,
		      const char *unit, const struct source *src)
{
	char dir[UNIT_PATH_MAX], lnk[UNIT_PATH_MAX], to[UNIT_PATH_MAX];

	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s.%s", dest_dir, target,
			     suffix) >= sizeof(dir) ||
	    (size_t)snprintf(lnk, sizeof(lnk), "%s/%s", dir, unit) >=
	    sizeof(lnk) ||
	    (size_t)snprintf(to, sizeof(to), "../%s", unit) >= sizeof(to)) {
		complain(src, "path too long");
		return false;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		complain(src, "cannot create %s: %s", dir, strerror(errno));
		return false;
	}
	if (symlink(to, lnk)) {
		complain(src, "cannot link %s: %s", lnk, strerror(errno));
		return false;
	}
	return true;
}

/* The dependencies of one device of a volume, into the [Unit] section. */
static bool device_deps(FILE *f, const char *spec, const struct source *src)
{
	char path[LINE_MAX_LEN], unit[3 * LINE_MAX_LEN];
	bool is_file;

	if (!device_path(spec, path, sizeof(path), &is_file) || !plain(path)) {
		complain(src, "'%s' is not a /dev path, a file's absolute path, or UUID=, LABEL=, PARTUUID=, PARTLABEL= with a value a unit can carry",
			 spec);
		return false;
	}
	if (is_file) {
		fprintf(f, "RequiresMountsFor=%s\n", path);
		return true;
	}
	if (!escape_path(path, unit, sizeof(unit))) {
		complain(src, "'%s' has no unit name", spec);
		return false;
	}
	fprintf(f, "BindsTo=%s.device\nAfter=%s.device\n", unit, unit);
	return true;
}

/* A device operand of ExecStart=: a /dev/disk link for UUID= and the like. */
static void exec_device(FILE *f, const char *spec)
{
	char path[LINE_MAX_LEN];
	bool is_file;

	device_path(spec, path, sizeof(path), &is_file);
	fprintf(f, " %s", path);
}

/*
 * Writes extverity@NAME.service for @v and the links that pull it in.  The
 * unit file is removed again when a later step fails, so that a volume
 * either has all of its unit or none.
 */
static bool write_unit(struct volume *v, const struct source *src)
{
	char inst[4 * NAME_MAX_LEN + 8], unit[4 * NAME_MAX_LEN + 32];
	char path[UNIT_PATH_MAX], dmdev[4 * NAME_MAX_LEN + 32];
	char digest_opt[LINE_MAX_LEN + 2 * NAME_MAX_LEN + 128] = "";
	const char *target;
	FILE *f;
	bool ok;

	if (!escape_instance(v->name, inst, sizeof(inst)) ||
	    !escape_path("/dev/mapper", dmdev, sizeof(dmdev)))
		return false;
	snprintf(unit, sizeof(unit), "extverity@%s.service", inst);
	if (!append(dmdev, sizeof(dmdev), "-%s", inst))
		return false;
	if (!strcmp(v->digest, "-")) {
		/* The digest and its signature, both from the key directory. */
		if (v->has_signature) {
			complain(src, "root-hash-signature= with the digest '-', which means %s/%s.roothash.p7s",
				 KEY_DIR, v->name);
			return false;
		}
		snprintf(digest_opt, sizeof(digest_opt),
			 " --root-hash-file=%s/%s.roothash --root-hash-signature=%s/%s.roothash.p7s",
			 KEY_DIR, v->name, KEY_DIR, v->name);
	} else if (v->digest[0] == '/') {
		if (!plain(v->digest)) {
			complain(src, "root digest file '%s' cannot be named in a unit",
				 v->digest);
			return false;
		}
		/* A line is shorter than digest_opt: no truncation. */
		snprintf(digest_opt, sizeof(digest_opt), " --root-hash-file=%s",
			 v->digest);
	} else if (!is_hex(v->digest)) {
		complain(src, "root digest '%s' is not 64 or 128 hex digits, '-' or a file's absolute path",
			 v->digest);
		return false;
	}
	f = create(dest_dir, unit, src);
	if (!f)
		return false;
	fprintf(f, "# Written by extverity-generator from %s", src->path);
	if (src->line)
		fprintf(f, " line %u", src->line);
	if (src->what)
		fprintf(f, " (%s)", src->what);
	fprintf(f, "\n[Unit]\nDescription=extverity: verified volume %s\n",
		v->name);
	fprintf(f, "Documentation=man:extverity-generator(8) man:extveritytab(5) man:extverity(8)\n");
	fprintf(f, "SourcePath=%s\n", src->path);
	fprintf(f, "DefaultDependencies=no\nIgnoreOnIsolate=true\n");
	fprintf(f, "After=%s systemd-udevd-kernel.socket\n",
		v->netdev ? "remote-fs-pre.target" : "veritysetup-pre.target");
	target = v->netdev ? "remote-veritysetup.target" : "veritysetup.target";
	fprintf(f, "Before=%s\n", target);
	if (v->from_cmdline)
		fprintf(f, "Before=initrd-root-device.target\n");
	/*
	 * A volume the initrd opens for the running system stays open when
	 * the initrd's units stop at the switch to the real root.
	 */
	if (!v->from_cmdline && !v->initrd_attach)
		fprintf(f, "Conflicts=umount.target\nBefore=umount.target\n");
	fprintf(f, "Wants=blockdev@%s.target\nBefore=blockdev@%s.target\n",
		dmdev, dmdev);
	ok = device_deps(f, v->data, src);
	if (ok && strcmp(v->hash, v->data))
		ok = device_deps(f, v->hash, src);
	if (ok) {
		fprintf(f, "\n[Service]\nType=oneshot\nRemainAfterExit=yes\n");
		fprintf(f, "ExecStart=extverity open%s%s", v->opts, digest_opt);
		exec_device(f, v->data);
		fprintf(f, " %s", v->name);
		exec_device(f, v->hash);
		if (!digest_opt[0])
			fprintf(f, " %s", v->digest);
		fputc('\n', f);
		/*
		 * What the initrd opened for the running system (its root,
		 * /usr) is never closed by a unit: it is in use until the
		 * end, and systemd-shutdown takes dm devices apart last.
		 */
		if (!v->from_cmdline && !v->initrd_attach)
			fprintf(f, "ExecStop=extverity close %s\n", v->name);
	}
	if (fflush(f) || ferror(f)) {
		complain(src, "cannot write %s/%s: %s", dest_dir, unit,
			 strerror(errno));
		ok = false;
	}
	if (fclose(f) && ok) {
		complain(src, "cannot write %s/%s: %s", dest_dir, unit,
			 strerror(errno));
		ok = false;
	}
	if (ok && !v->noauto) {
		ok = link_unit(target, v->nofail ? "wants" : "requires", unit,
			       src);
		if (ok && v->from_cmdline)
			ok = link_unit("initrd-root-device.target", "requires",
				       unit, src);
	}
	if (!ok) {
		snprintf(path, sizeof(path), "%s/%s", dest_dir, unit);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%s.%s/%s", dest_dir, target,
			 v->nofail ? "wants" : "requires", unit);
		unlink(path);
	}
	return ok;
}

/* extverity.root= / extverity.usr=: DATA,HASH,DIGEST[,OPTION...] */
static void cmdline_volume(const char *name, const char *what,
			   const char *value)
{
	struct source src = { "/proc/cmdline", 0, what };
	char buf[LINE_MAX_LEN];
	struct volume v = { .name = name, .from_cmdline = true };
	char *field[3], *save = NULL, *o;
	int i;

	if (strlen(value) >= sizeof(buf)) {
		complain(&src, "value too long");
		return;
	}
	strcpy(buf, value);
	for (i = 0; i < 3; i++) {
		field[i] = strtok_r(i ? NULL : buf, ",", &save);
		if (!field[i]) {
			complain(&src, "want DATA,HASH,ROOT_DIGEST[,OPTION...]");
			return;
		}
	}
	v.data = field[0];
	v.hash = field[1];
	v.digest = field[2];
	while ((o = strtok_r(NULL, ",", &save)))
		if (!add_option(&v, o, &src))
			return;
	write_unit(&v, &src);
}

static void read_cmdline(void)
{
	static char buf[CMDLINE_MAX + 1];
	const char *env = getenv("EXTVERITY_GENERATOR_CMDLINE");
	const char *seen_root = NULL, *seen_usr = NULL;
	char *save = NULL, *w;
	size_t n = 0;

	if (env) {
		if (strlen(env) > CMDLINE_MAX) {
			fprintf(stderr, "extverity-generator: EXTVERITY_GENERATOR_CMDLINE too long\n");
			status = 1;
			return;
		}
		strcpy(buf, env);
	} else {
		int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);
		ssize_t r = 0;

		if (fd < 0) {
			fprintf(stderr, "extverity-generator: /proc/cmdline: %s\n",
				strerror(errno));
			status = 1;
			return;
		}
		while (n < CMDLINE_MAX &&
		       (r = read(fd, buf + n, CMDLINE_MAX - n)) > 0)
			n += r;
		close(fd);
		if (r < 0) {
			fprintf(stderr, "extverity-generator: /proc/cmdline: %s\n",
				strerror(errno));
			status = 1;
			return;
		}
		buf[n] = 0;
	}
	/* The last of a repeated parameter wins, as for the kernel's own. */
	for (w = strtok_r(buf, " \t\n", &save); w;
	     w = strtok_r(NULL, " \t\n", &save)) {
		if (!strncmp(w, "extverity.root=", 15))
			seen_root = w + 15;
		else if (!strncmp(w, "extverity.usr=", 14))
			seen_usr = w + 14;
	}
	if (seen_root)
		cmdline_volume("vroot", "extverity.root=", seen_root);
	if (seen_usr)
		cmdline_volume("vusr", "extverity.usr=", seen_usr);
}

/* One table line: NAME DATA HASH DIGEST [OPTIONS] */
static void tab_line(char *line, const struct source *src)
{
	struct volume v = { 0 };
	char *field[6], *save = NULL, *o;
	int n;

	for (n = 0; n < 6; n++) {
		field[n] = strtok_r(n ? NULL : line, " \t\n", &save);
		if (!field[n])
			break;
	}
	if (!n || field[0][0] == '#')
		return;
	if (n < 4 || n > 5) {
		complain(src, "want NAME DATA HASH ROOT_DIGEST [OPTION,...], %d fields",
			 n);
		return;
	}
	v.name = field[0];
	v.data = field[1];
	v.hash = field[2];
	v.digest = field[3];
	if (!valid_name(v.name)) {
		complain(src, "'%s' is no device-mapper name ([A-Za-z0-9._+-], at most %d characters)",
			 v.name, NAME_MAX_LEN);
		return;
	}
	if (n == 5)
		for (o = strtok_r(field[4], ",", &save); o;
		     o = strtok_r(NULL, ",", &save))
			if (!add_option(&v, o, src))
				return;
	/* The initrd attaches what is marked for it, the system the rest. */
	if (v.initrd_attach != in_initrd)
		return;
	write_unit(&v, src);
}

static void read_tab(void)
{
	const char *path = getenv("EXTVERITY_GENERATOR_TAB");
	struct source src = { path ? path : TAB_PATH, 0, NULL };
	char line[LINE_MAX_LEN + 2];
	FILE *f;

	f = fopen(src.path, "re");
	if (!f) {
		if (errno != ENOENT) {
			fprintf(stderr, "extverity-generator: %s: %s\n",
				src.path, strerror(errno));
			status = 1;
		}
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		src.line++;
		if (!strchr(line, '\n') && !feof(f)) {
			int c;

			complain(&src, "line longer than %d bytes",
				 LINE_MAX_LEN);
			while ((c = getc(f)) != EOF && c != '\n')
				;
			continue;
		}
		tab_line(line, &src);
	}
	if (ferror(f)) {
		fprintf(stderr, "extverity-generator: %s: read error\n",
			src.path);
		status = 1;
	}
	fclose(f);
}

int main(int argc, char *argv[])
{
	const char *env = getenv("EXTVERITY_GENERATOR_INITRD");

	/* systemd passes three directories; the units go to the first. */
	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: extverity-generator NORMAL_DIR [EARLY_DIR LATE_DIR]\n");
		return 1;
	}
	dest_dir = argv[1];
	if (env)
		in_initrd = !strcmp(env, "1");
	else
		in_initrd = access("/etc/initrd-release", F_OK) == 0;
	if (in_initrd)
		read_cmdline();
	read_tab();
	return status;
}
