/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A perf.data stream cut into back-to-back windows of time, each encoded as a pprof
 * profile.  One recording session feeds it (pa-record -o -), so unwind tables are
 * loaded once and no sample falls between two windows; one machine symbolizes all
 * windows, so each file is read once.
 *
 * A sample belongs to the window its time falls in.  A window closes when a sample of
 * a later window arrives, or when the clock is lag_ns past its end (the stream is
 * idle, or ordered and buffered by the recorder); a sample arriving after its window
 * closed goes into the current one, so none is lost.  Windows without samples are
 * not emitted.
 */
#ifndef PA_AGENT_WINDOW_H
#define PA_AGENT_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct win_opts {
	uint64_t interval_ns;
	uint64_t lag_ns;
	uint64_t start_mono_ns;	 /* the first window's start, CLOCK_MONOTONIC */
	int64_t wall_minus_mono; /* CLOCK_REALTIME - CLOCK_MONOTONIC, for the pprofs */
	const char *const *tags; /* "KEY=VALUE" labels on every sample */
	size_t nr_tags;
	/* Each window with samples, as a gzipped pprof; times on CLOCK_REALTIME. */
	void (*emit)(void *ctx, uint64_t start_ns, uint64_t end_ns, const uint8_t *pprof,
		     size_t len);
	void *ctx;
};

struct win_stats {
	uint64_t windows; /* emitted */
	uint64_t samples; /* in them */
	uint64_t late;	  /* samples that came after their window closed */
};

struct win_reader;

/*
 * Read the stream on fd in a thread of its own, from now.  NULL (errno) when the
 * thread cannot start.
 */
struct win_reader *win_start(int fd, const struct win_opts *o);
/* Close the windows whose time is over; call it often (every 100 ms or so). */
void win_tick(struct win_reader *w);
/* Whether the stream ended (EOF, or an error win_finish reports). */
bool win_ended(struct win_reader *w);
/*
 * After the stream ended: close the last window, free w.  0, or -errno with the
 * stream's error (bad stream, out of memory) in errbuf.
 */
int win_finish(struct win_reader *w, struct win_stats *st, char *errbuf, size_t errlen);

#endif /* PA_AGENT_WINDOW_H */
