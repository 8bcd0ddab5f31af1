/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The pusher: one thread that uploads the spool's windows, oldest first, to a
 * Pyroscope server's ingest API (POST URL/ingest?QUERY, the pprof as the multipart
 * part "profile").  2xx: pushed, the window leaves the spool.  5xx, 429, 408 and
 * transport errors: the same window is tried again after a backoff (1 s, doubling up
 * to retry_max_ns; back to 1 s on success), with one warning when pushes start to
 * fail and one note when they work again.  Any other status: the window is rejected
 * and deleted, with one warning per distinct status.  Nothing here blocks the
 * recording thread: it only puts to the spool and kicks.
 */
#ifndef PA_AGENT_PUSH_H
#define PA_AGENT_PUSH_H

#include <stdint.h>

#include "spool.h"

struct push_opts {
	const char *url;	     /* the server's base URL; /ingest is appended */
	const char *tenant;	     /* sent as X-Scope-OrgID, or NULL */
	const char *basic_auth_file; /* USER:PASSWORD on one line, or NULL */
	const char *token_file;	     /* a bearer token, or NULL */
	const char *cacert;	     /* CA certificates for TLS, or NULL */
	uint64_t retry_max_ns;	     /* the longest wait between two tries (0: 30 s) */
	uint64_t timeout_ns;	     /* one request (0: 30 s) */
};

struct push_stats {
	uint64_t pushed;       /* windows the server took */
	uint64_t failed_tries; /* tries to be repeated: 5xx, 429, 408, transport errors */
	uint64_t rejected;     /* windows the server refused for good, deleted */
	char last_error[256];  /* of the last failed try or rejection; "" if none */
};

struct pusher;

/*
 * Check the URL, the tenant and the CA file, read the auth files (once), start the
 * thread, which starts on what the spool holds already.  NULL after one line (pa_err)
 * naming what is wrong.
 * The thread blocks every signal: they go to the caller's threads.
 */
struct pusher *pusher_start(const struct push_opts *o, struct spool *sp);

/* A window was spooled: push it now, unless backing off after a failure. */
void pusher_kick(struct pusher *p);

/*
 * Keep pushing until the spool is empty or grace_ns has passed (a request still in
 * flight then is abandoned), and end the thread.  What is left stays in the spool for
 * the next run.  pusher_stats still works after it; a second call does nothing.
 */
void pusher_stop(struct pusher *p, uint64_t grace_ns);

void pusher_stats(struct pusher *p, struct push_stats *st);

/* Free p, stopped first (grace 0) if pusher_stop was not called.  NULL is fine. */
void pusher_free(struct pusher *p);

#endif /* PA_AGENT_PUSH_H */
