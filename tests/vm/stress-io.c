// SPDX-License-Identifier: GPL-2.0
/*
 * Guest-side reader and memory hog for t-vm-stress.sh, built on the host
 * with gcc -static and shipped on the control disk (busybox has no random
 * reader, and dd cannot tell a vanished device from a bad block).
 *
 *   stress-io seq DEV SUMS BS DIRECT END HOLD
 *	Whole-device passes with reads of BS bytes (O_DIRECT when DIRECT is
 *	1), the device opened afresh for every pass, until the uptime END
 *	(seconds, as /proc/uptime); END 0 makes one pass.
 *   stress-io rand DEV SUMS BS DIRECT END HOLD
 *	Batches ("passes") of 256 reads of BS bytes at random BS-aligned
 *	offsets, one open per batch, until END.
 *
 *	SUMS holds the CRC-32 (little-endian) of every 4 KiB chunk of what
 *	DEV must return; every chunk read is checked against it (a read that
 *	fails is counted and the reader goes on).  While the file HOLD exists
 *	(the device is to be removed) the reader closes the device and waits;
 *	a whole-device pass goes on where it stopped once HOLD is gone.
 *	A reader stays past END (at most 200 s) while HOLD exists.
 *	While HOLD-away exists too (the device has been removed) it probes,
 *	opening and closing the device every 20 ms: an open that fails with
 *	ENOENT, ENXIO or ENODEV, or finds the device 0 bytes long (created,
 *	its table not loaded yet), is counted as "gone", not as an error,
 *	and appends a byte to the file HOLD-seen.  At
 *	the end prints "R passes=N bytes=N probes=N gone=N eio=N wrong=N
 *	other=N" and exits 1 when eio, wrong or other is not zero.  The first
 *	errors are described on stderr.
 *
 *   stress-io hog PERCENT SECONDS
 *	Allocates PERCENT of MemAvailable in 8 MiB pieces, stopping early
 *	when MemAvailable falls under an eighth of MemTotal, and keeps
 *	writing to every page for SECONDS.  Its oom_score_adj is 1000: if
 *	the kernel must kill something it is the hog, never the scenario.
 *	Prints "H mib=N".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#define CHUNK 4096

static uint32_t crc_table[256];
static uint32_t *sums;
static uint64_t nchunks;
static unsigned long long passes, bytes, probes, gone, eio, wrong, other;
static int reports;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32_buf(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static double uptime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report(const char *fmt, ...)
{
	va_list ap;

	if (reports++ >= 20)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int away(int err)
{
	return err == ENOENT || err == ENXIO || err == ENODEV;
}

static void load_sums(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || n % 4) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(2);
	}
	rewind(f);
	nchunks = n / 4;
	sums = malloc(n);
	if (!sums || fread(sums, 4, nchunks, f) != nchunks) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	for (uint64_t i = 0; i < nchunks; i++) {
		unsigned char *b = (unsigned char *)&sums[i];

		sums[i] = b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
	}
}

static int open_dev(const char *dev, int direct)
{
	int fd = open(dev, O_RDONLY | (direct ? O_DIRECT : 0));

	if (fd < 0) {
		if (away(errno)) {
			gone++;
		} else {
			other++;
			report("open: %s", strerror(errno));
		}
		return -1;
	}
	uint64_t size = 0;
	struct stat st;

	/* A regular file too, to try it on the host. */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode))
		size = st.st_size;
	else if (ioctl(fd, BLKGETSIZE64, &size))
		size = 0;
	/*
	 * No live table yet: "dmsetup create" makes the device, then loads
	 * and resumes its table, and a probe can open it in between.  A
	 * device with a table is never 0 bytes long, so this is "away".
	 */
	if (!size) {
		gone++;
		close(fd);
		return -1;
	}
	if (size != nchunks * CHUNK) {
		other++;
		report("device size %llu, SUMS covers %llu",
		       (unsigned long long)size,
		       (unsigned long long)nchunks * CHUNK);
		close(fd);
		return -1;
	}
	return fd;
}

/* read_at: 0 when all of [off, off + len) was read and checked. */
static int read_at(int fd, unsigned char *buf, uint64_t off, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, buf + done, len - done, off + done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int err = r < 0 ? errno : 0;

			if (err == EIO)
				eio++;
			else if (away(err))
				gone++;
			else
				other++;
			report("read at byte %llu: %s",
			       (unsigned long long)(off + done),
			       r < 0 ? strerror(err) : "end of device");
			return -1;
		}
		done += r;
	}
	bytes += len;
	for (size_t i = 0; i < len; i += CHUNK) {
		uint64_t c = (off + i) / CHUNK;

		if (crc32_buf(buf + i, CHUNK) != sums[c]) {
			wrong++;
			report("wrong bytes in 4 KiB chunk %llu",
			       (unsigned long long)c);
		}
	}
	return 0;
}

static uint64_t rnd64(void)
{
	return (uint64_t)random() << 31 ^ random();
}

/*
 * One probe while the device is held away: open and close, no read, so
 * that the probes seldom keep the device open when it is to be removed.
 * A probe that finds it gone appends a byte to SEEN, which the chaos loop
 * waits for before it re-creates the device: a fixed window can pass with
 * no reader scheduled (nice 10 readers beside the memory hog on a KASAN
 * kernel saw none in 0.9 s).
 */
static void probe(const char *dev, const char *seen)
{
	unsigned long long gone_before = gone;
	int fd = open_dev(dev, 0);

	probes++;
	if (fd >= 0)
		close(fd);
	if (gone == gone_before)
		return;
	fd = open(seen, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0 || write(fd, ".", 1) != 1) {
		other++;
		report("%s: %s", seen, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static int reader(int argc, char **argv, int random_reads)
{
	if (argc != 8)
		return 2;
	const char *dev = argv[2], *hold = argv[7];
	size_t bs = strtoul(argv[4], NULL, 0);
	int direct = atoi(argv[5]);
	double end = atof(argv[6]);
	unsigned char *buf;
	char away[4096], seen[4096];
	uint64_t off = 0;

	load_sums(argv[3]);
	if (bs < CHUNK || bs % CHUNK || posix_memalign((void **)&buf, 4096, bs))
		return 2;
	snprintf(away, sizeof(away), "%s-away", hold);
	snprintf(seen, sizeof(seen), "%s-seen", hold);
	srandom(getpid() ^ (unsigned int)time(NULL));
	/* END 0: one pass, for a control run. */
	int once = end == 0;

	if (once)
		end = uptime() + 3600;
	/*
	 * Past END only while the device is held: a removal that took long
	 * (the chaos waits for every reader to let go) must still find a
	 * reader to probe it, else nothing proves the probes work.
	 */
	while ((uptime() < end || (exists(hold) && uptime() < end + 200)) &&
	       !(once && passes + wrong + eio + other)) {
		if (exists(away)) {
			probe(dev, seen);
			usleep(20000);
			continue;
		}
		if (exists(hold)) {
			usleep(20000);
			continue;
		}
		int fd = open_dev(dev, direct);

		if (fd < 0) {
			usleep(10000);
			continue;
		}
		uint64_t span = bs / CHUNK, n = nchunks / span;
		uint64_t size = nchunks * CHUNK;
		int i;

		if (random_reads) {
			for (i = 0; i < 256 && uptime() < end && !exists(hold); i++)
				read_at(fd, buf, rnd64() % n * bs, bs);
			if (i == 256)
				passes++;
		} else {
			/* A pass cut short goes on where it stopped. */
			while (off < size && uptime() < end && !exists(hold)) {
				size_t len = size - off < bs ? size - off : bs;

				read_at(fd, buf, off, len);
				off += len;
			}
			if (off == size) {
				passes++;
				off = 0;
			}
		}
		close(fd);
	}
	printf("R passes=%llu bytes=%llu probes=%llu gone=%llu eio=%llu wrong=%llu other=%llu\n",
	       passes, bytes, probes, gone, eio, wrong, other);
	return eio || wrong || other;
}

static long meminfo(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	size_t n = strlen(key);
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = atol(line + n + 1);
	if (f)
		fclose(f);
	return v;
}

static int hog(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	long pct = atol(argv[2]);
	double end = uptime() + atof(argv[3]);
	long total = meminfo("MemTotal"), want = meminfo("MemAvailable") / 100 * pct;
	long page = sysconf(_SC_PAGESIZE), got = 0, piece = 8 << 20, npieces = 0;
	double slowest = 0;
	char **pieces = calloc(4096, sizeof(*pieces));
	FILE *f = fopen("/proc/self/oom_score_adj", "w");

	if (f) {
		fputs("1000\n", f);
		fclose(f);
	}
	/* kB from meminfo */
	while (pieces && got < want * 1024 && npieces < 4096 &&
	       meminfo("MemAvailable") > total / 8) {
		char *p = mmap(NULL, piece, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		double t = uptime();

		if (p == MAP_FAILED)
			break;
		/*
		 * 4 KiB pages, as the page cache and the caches it presses.
		 * A huge page fault clears 2 MiB in one go; under TCG that
		 * once kept a vCPU from scheduling for 23 s (soft lockup in
		 * clear_page_erms from do_huge_pmd_anonymous_page, 6.12).
		 */
		madvise(p, piece, MADV_NOHUGEPAGE);
		memset(p, 0x5a, piece);
		if (uptime() - t > slowest)
			slowest = uptime() - t;
		pieces[npieces++] = p;
		got += piece;
	}
	for (unsigned int round = 0; uptime() < end; round++)
		for (long i = 0; i < npieces; i++)
			for (long o = 0; o < piece; o += page)
				pieces[i][o] = (char)round;
	printf("H mib=%ld slowest-piece-ms=%.0f\n", got >> 20, slowest * 1000);
	return 0;
}

int main(int argc, char **argv)
{
	crc_init();
	if (argc > 1 && !strcmp(argv[1], "seq"))
		return reader(argc, argv, 0);
	if (argc > 1 && !strcmp(argv[1], "rand"))
		return reader(argc, argv, 1);
	if (argc > 1 && !strcmp(argv[1], "hog"))
		return hog(argc, argv);
	fprintf(stderr, "usage: stress-io seq|rand DEV SUMS BS DIRECT END HOLD | hog PERCENT SECONDS\n");
	return 2;
}
