// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim: libdevmapper with one fake device, so that the tool's
 * side of `measure` and `status` (finding the device of a file, the
 * messages, what is made of their answers) runs on a host without
 * device-mapper.  The kernel's side is tested in the VM.
 *
 *   SHIM_DM_MAJOR    the major taken for device-mapper's (dm_is_dm_major)
 *   SHIM_NAME        the device's name
 *   SHIM_DEV         its MAJOR:MINOR
 *   SHIM_TARGETS     its targets: "TYPE PARAMS" lines (default: none)
 *   SHIM_STATUS      its status line params (default "V 0 0 0")
 *   SHIM_MSG_DIR     answers to messages: the file named as the message
 *                    ("measure 12", "corrupted") holds the answer, or
 *                    "errno N" for a refusal with errno N; no file: EINVAL
 *   SHIM_LOG         when set, each message sent is appended to this file
 *
 * Only the calls the tool makes for info, table, status and messages are
 * faked; any other task fails.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdevmapper.h>

struct dm_task {
	int type;
	char name[128];
	int major, minor;
	char *message;
	char *response;
	int err;
	char *lines;		/* targets, or the status line */
	char *pos;
};

static const char *env(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v ? v : dflt;
}

int dm_driver_version(char *version, size_t size)
{
	snprintf(version, size, "4.48.0-shim");
	return 1;
}

int dm_is_dm_major(uint32_t major)
{
	return (int)major == atoi(env("SHIM_DM_MAJOR", "-1"));
}

struct dm_task *dm_task_create(int type)
{
	struct dm_task *t = calloc(1, sizeof(*t));

	t->type = type;
	t->major = t->minor = -1;
	return t;
}

void dm_task_destroy(struct dm_task *t)
{
	if (!t)
		return;
	free(t->message);
	free(t->response);
	free(t->lines);
	free(t);
}

int dm_task_set_name(struct dm_task *t, const char *name)
{
	snprintf(t->name, sizeof(t->name), "%s", name);
	return 1;
}

int dm_task_set_major_minor(struct dm_task *t, int major, int minor,
			    int allow_default_major_fallback)
{
	t->major = major;
	t->minor = minor;
	return 1;
}

int dm_task_set_sector(struct dm_task *t, uint64_t sector)
{
	return 1;
}

int dm_task_set_message(struct dm_task *t, const char *msg)
{
	t->message = strdup(msg);
	return 1;
}

int dm_task_get_errno(struct dm_task *t)
{
	return t->err;
}

const char *dm_task_get_name(const struct dm_task *t)
{
	return env("SHIM_NAME", "");
}

const char *dm_task_get_message_response(struct dm_task *t)
{
	return t->response;
}

/* The task names the fake device (by name or by number). */
static int is_ours(const struct dm_task *t)
{
	char dev[64];

	if (t->major >= 0) {
		snprintf(dev, sizeof(dev), "%d:%d", t->major, t->minor);
		return !strcmp(dev, env("SHIM_DEV", ""));
	}
	return !strcmp(t->name, env("SHIM_NAME", ""));
}

static void answer(struct dm_task *t)
{
	char path[4096], buf[65536];
	const char *log = getenv("SHIM_LOG");
	size_t n = 0;
	FILE *f;

	if (log) {
		f = fopen(log, "a");
		if (f) {
			fprintf(f, "%s\n", t->message);
			fclose(f);
		}
	}
	snprintf(path, sizeof(path), "%s/%s", env("SHIM_MSG_DIR", "."),
		 t->message);
	f = fopen(path, "r");
	if (!f) {
		t->err = EINVAL;
		return;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (!strncmp(buf, "errno ", 6)) {
		t->err = atoi(buf + 6);
		return;
	}
	t->response = strdup(buf);
}

int dm_task_run(struct dm_task *t)
{
	switch (t->type) {
	case DM_DEVICE_INFO:
		return 1;
	case DM_DEVICE_TABLE:
	case DM_DEVICE_STATUS:
	case DM_DEVICE_TARGET_MSG:
		break;
	default:
		t->err = EPERM;
		return 0;
	}
	if (!is_ours(t)) {
		t->err = ENXIO;
		return 0;
	}
	if (t->type == DM_DEVICE_TARGET_MSG) {
		answer(t);
		return !t->err;
	}
	if (t->type == DM_DEVICE_TABLE) {
		t->lines = strdup(env("SHIM_TARGETS", ""));
	} else {
		const char *tg = env("SHIM_TARGETS", "");
		size_t n = strcspn(tg, " ");

		t->lines = malloc(n + strlen(env("SHIM_STATUS", "V 0 0 0")) + 2);
		sprintf(t->lines, "%.*s %s", (int)n, tg,
			env("SHIM_STATUS", "V 0 0 0"));
	}
	t->pos = t->lines;
	return 1;
}

int dm_task_get_info(struct dm_task *t, struct dm_info *info)
{
	memset(info, 0, sizeof(*info));
	info->exists = is_ours(t);
	info->target_count = 1;
	sscanf(env("SHIM_DEV", "0:0"), "%u:%u", &info->major, &info->minor);
	info->read_only = 1;
	return 1;
}

/* One "TYPE PARAMS" line a target, 1000 sectors each. */
void *dm_get_next_target(struct dm_task *t, void *next, uint64_t *start,
			 uint64_t *length, char **target_type, char **params)
{
	char *line = t->pos, *nl, *sp;

	*target_type = NULL;
	*params = NULL;
	if (!line || !*line)
		return NULL;
	nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	t->pos = nl ? nl + 1 : line + strlen(line);
	sp = strchr(line, ' ');
	if (sp)
		*sp = '\0';
	*target_type = line;
	*params = sp ? sp + 1 : line + strlen(line);
	*start = 0;
	*length = 1000;
	/* Non-NULL while targets remain, as libdevmapper's. */
	return *t->pos ? t->pos : NULL;
}
