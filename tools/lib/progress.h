/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Progress of a long run (format, verify) on stderr.  Off unless the
 * command turns it on: when stderr is a terminal, or with --progress.
 */
#ifndef EXTVERITY_PROGRESS_H
#define EXTVERITY_PROGRESS_H

#include <stdbool.h>
#include "extverity_compat.h"

/*
 * ev_progress_setup() - decide once per command whether to show progress
 * @forced: --progress was given
 *
 * On a terminal one line is rewritten in place; otherwise (--progress into
 * a pipe or file) a line is printed at every tenth of the work, so a log
 * stays short.
 */
void ev_progress_setup(bool forced);

/* Start a phase of @total bytes named @what ("hashing files"). */
void ev_progress_begin(const char *what, u64 total);
/* @done more bytes of the phase are finished; callable from any thread. */
void ev_progress_add(u64 done);
/* End the phase: its last line, complete. */
void ev_progress_end(void);
/*
 * Before printing a message on stderr: on a terminal, erase the progress
 * line being redrawn there, which the message would otherwise follow on
 * the same line; the next ev_progress_add() draws it again.
 */
void ev_progress_clear(void);

#endif /* EXTVERITY_PROGRESS_H */
