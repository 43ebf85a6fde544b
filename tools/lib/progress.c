// SPDX-License-Identifier: GPL-2.0
/*
 * Progress lines.  Worker threads of the parallel hasher report as they
 * finish jobs, so the counters are atomic and whichever thread crosses the
 * next printing point claims it with a compare-and-swap: a line is printed
 * by one thread at a time and never repeated.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

/* A terminal line is redrawn at most this often. */
#define REDRAW_NS	200000000ULL

static struct {
	bool on;
	bool tty;
	const char *what;
	u64 total;
	atomic_uint_fast64_t done;
	/* Terminal: time of the next redraw; otherwise the next tenth. */
	atomic_uint_fast64_t next;
	/* Terminal: a line is drawn, the cursor at its end. */
	atomic_bool drawn;
} prog;

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

static unsigned int percent(u64 done)
{
	if (!prog.total || done >= prog.total)
		return 100;
	return (unsigned int)(done * 100 / prog.total);
}

static void print_line(u64 done, bool last)
{
	fprintf(stderr, "%s%s: %3u%% (%" PRIu64 " of %" PRIu64 " MiB)%s",
		prog.tty ? "\r" : "", prog.what, percent(done), done >> 20,
		prog.total >> 20, prog.tty && !last ? "" : "\n");
	fflush(stderr);
	atomic_store(&prog.drawn, prog.tty && !last);
}

void ev_progress_setup(bool forced)
{
	prog.tty = isatty(STDERR_FILENO);
	prog.on = forced || prog.tty;
}

void ev_progress_begin(const char *what, u64 total)
{
	if (!prog.on)
		return;
	prog.what = what;
	prog.total = total;
	atomic_store(&prog.done, 0);
	atomic_store(&prog.next, prog.tty ? now_ns() + REDRAW_NS : 10);
	if (prog.tty)
		print_line(0, false);
}

void ev_progress_add(u64 n)
{
	u64 done, next, due;

	if (!prog.on)
		return;
	done = atomic_fetch_add(&prog.done, n) + n;
	next = atomic_load(&prog.next);
	if (prog.tty) {
		due = now_ns();
		if (due < next ||
		    !atomic_compare_exchange_strong(&prog.next, &next,
						    due + REDRAW_NS))
			return;
	} else {
		if (percent(done) < next ||
		    !atomic_compare_exchange_strong(&prog.next, &next,
						    percent(done) / 10 * 10 + 10))
			return;
		/* The final 100 % line is ev_progress_end()'s. */
		if (percent(done) >= 100)
			return;
	}
	print_line(done, false);
}

void ev_progress_end(void)
{
	if (!prog.on)
		return;
	print_line(atomic_load(&prog.done), true);
}

void ev_progress_clear(void)
{
	if (!prog.on || !prog.tty || !atomic_exchange(&prog.drawn, false))
		return;
	/* Back to the start of the line and erase it (ECMA-48 EL). */
	fputs("\r\033[K", stderr);
	fflush(stderr);
	/* Draw it again at the next ev_progress_add(), below the message. */
	atomic_store(&prog.next, 0);
}
