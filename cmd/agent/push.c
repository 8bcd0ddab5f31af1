// SPDX-License-Identifier: Apache-2.0
/*
 * The pusher thread: one libcurl easy handle, run through a multi handle so that a
 * request can be abandoned at once (its connection is reused from window to window),
 * and a condition variable to sleep on between windows and backoffs.
 * The lock guards what the caller's threads see (kicked, stopping, the stats); the
 * rest is the thread's own.  No lock is held while a request is in flight.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "base/util.h"
#include "push.h"

#define NS_PER_S	   1000000000ULL
#define PUSH_TIMEOUT_NS	   (30 * NS_PER_S)
#define PUSH_CONNECT_MS	   5000L
#define PUSH_POLL_MS	   50 /* how late pusher_stop may abandon a request */
#define PUSH_BACKOFF_NS	   NS_PER_S
#define PUSH_SECRET_MAX	   4096 /* an auth file is one short line */
#define PUSH_BODY_KEEP	   1024 /* of a response: enough for its first line */
#define PUSH_LINE_MAX	   200	/* of the response quoted in a warning */
#define PUSH_STATUSES_SEEN 16

enum push_outcome { PUSH_OK, PUSH_RETRY, PUSH_REJECTED, PUSH_ABANDONED };

struct pusher {
	struct spool *sp;
	char *url;     /* BASE/ingest, the query is appended per window */
	char *shown;   /* the same without user:password, for messages */
	char *userpwd; /* basic auth, or NULL */
	char *bearer;  /* "Authorization: Bearer TOKEN", or NULL */
	struct curl_slist *headers;
	uint64_t retry_max_ns, timeout_ns;

	pthread_t thread;
	bool running; /* the thread was started and not joined yet */
	pthread_mutex_t lock;
	pthread_cond_t cond; /* on CLOCK_MONOTONIC, pa_now_ns's clock */
	bool kicked, stopping;
	uint64_t stop_at_ns;
	/* Read by the thread during a request, without the lock: 0, or when to give up. */
	_Atomic uint64_t abort_at_ns;
	struct push_stats st;

	/* The thread's own. */
	CURL *curl;
	CURLM *multi; /* of the one handle: for a wait that pusher_stop can cut short */
	bool curl_inited;
	char errbuf[CURL_ERROR_SIZE];
	char body[PUSH_BODY_KEEP];
	size_t body_len;
	uint64_t backoff_ns, next_try_ns;
	uint64_t fails;		       /* failed tries since the last push */
	long seen[PUSH_STATUSES_SEEN]; /* rejection statuses warned about */
	size_t nr_seen;
};

/* asprintf's string, or NULL (asprintf leaves its pointer undefined on failure). */
static char *strfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *strfmt(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

static void free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

/* The one line of an auth file, its newline stripped; NULL after an error line. */
static char *read_secret(const char *path, const char *opt)
{
	char buf[PUSH_SECRET_MAX + 1], *s = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -errno : pa_read_full(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0) {
		pa_err("cannot read %s '%s': %s", opt, path, strerror((int)-n));
		return NULL;
	}
	if (n == sizeof(buf) - 1) {
		pa_err("%s '%s' is over %d bytes; it holds one line", opt, path, PUSH_SECRET_MAX);
		goto out;
	}
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	/* A newline inside would end the header early and start another. */
	for (ssize_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] < ' ' || buf[i] == 0x7f) {
			pa_err("%s '%s' holds a control character or several lines; write one line",
			       opt, path);
			goto out;
		}
	if (!n)
		pa_err("%s '%s' is empty", opt, path);
	else
		s = strdup(buf);
out:
	explicit_bzero(buf, sizeof(buf));
	return s;
}

/* The credentials and the CA file, read or checked once. */
static int read_files(struct pusher *p, const struct push_opts *o)
{
	char *token;

	if (o->basic_auth_file && o->token_file) {
		pa_err("--basic-auth-file and --token-file are two ways to log in; give one");
		return -EINVAL;
	}
	if (o->basic_auth_file) {
		p->userpwd = read_secret(o->basic_auth_file, "--basic-auth-file");
		if (!p->userpwd)
			return -EINVAL;
		if (!strchr(p->userpwd, ':')) {
			pa_err("--basic-auth-file '%s' has no ':'; write USER:PASSWORD",
			       o->basic_auth_file);
			return -EINVAL;
		}
	}
	/* Checked now: libcurl would only say so on every try. */
	if (o->cacert && access(o->cacert, R_OK)) {
		pa_err("cannot read --cacert '%s': %s", o->cacert, strerror(errno));
		return -EINVAL;
	}
	if (o->token_file) {
		token = read_secret(o->token_file, "--token-file");
		if (!token)
			return -EINVAL;
		p->bearer = strfmt("Authorization: Bearer %s", token);
		free_secret(token);
		if (!p->bearer)
			return -ENOMEM;
	}
	return 0;
}

/* The length of the URL s[0..len) without trailing '/': no "//ingest". */
static int base_len(const char *s, size_t len)
{
	while (len && s[len - 1] == '/')
		len--;
	return (int)len;
}

/* p->url and p->shown from the base URL: http or https only, checked once here. */
static int set_url(struct pusher *p, const char *base)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *shown = NULL;
	int err = -EINVAL;

	if (!u)
		return -ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, base, 0) ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
	    (strcmp(scheme, "http") && strcmp(scheme, "https"))) {
		pa_err("--push '%s' is not an http:// or https:// URL; give the server's base URL, "
		       "like http://pyroscope:4040",
		       base);
		goto out;
	}
	/* Messages name the server without the password a URL may carry. */
	curl_url_set(u, CURLUPART_USER, NULL, 0);
	curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
	err = -ENOMEM;
	if (curl_url_get(u, CURLUPART_URL, &shown, 0))
		goto out;
	p->url = strfmt("%.*s/ingest", base_len(base, strlen(base)), base);
	p->shown = strfmt("%.*s/ingest", base_len(shown, strcspn(shown, "?#")), shown);
	if (p->url && p->shown)
		err = 0;
out:
	curl_free(scheme);
	curl_free(shown);
	curl_url_cleanup(u);
	return err;
}

/* A tenant goes into a header: a control character in it would forge another. */
static int check_tenant(const char *tenant)
{
	for (const char *c = tenant; *c; c++)
		if ((unsigned char)*c < ' ' || *c == 0x7f) {
			pa_err("--tenant holds a control character; give the tenant's ID");
			return -EINVAL;
		}
	if (!*tenant) {
		pa_err("--tenant is empty; give the tenant's ID, or leave the option out");
		return -EINVAL;
	}
	return 0;
}

static size_t keep_body(char *ptr, size_t size, size_t nmemb, void *ctx)
{
	struct pusher *p = ctx;
	size_t n = size * nmemb, room = sizeof(p->body) - 1 - p->body_len;

	/* Only the start is quoted; the rest is read and let go. */
	if (n < room)
		room = n;
	memcpy(p->body + p->body_len, ptr, room);
	p->body_len += room;
	return n;
}

/* Whether pusher_stop's grace is over. */
static bool abandon(struct pusher *p)
{
	uint64_t at = atomic_load(&p->abort_at_ns);

	return at && pa_now_ns() >= at;
}

static struct curl_slist *add_header(struct curl_slist *list, const char *h, bool *ok)
{
	struct curl_slist *n = curl_slist_append(list, h);

	if (!n)
		*ok = false;
	return n ? n : list;
}

/* The headers every request sends.  0 or -ENOMEM. */
static int set_headers(struct pusher *p, const char *tenant)
{
	char *t = tenant ? strfmt("X-Scope-OrgID: %s", tenant) : NULL;
	bool ok = !tenant || t;

	/* No "Expect: 100-continue": a round trip per window, a second where unanswered. */
	p->headers = add_header(p->headers, "Expect:", &ok);
	if (t)
		p->headers = add_header(p->headers, t, &ok);
	if (p->bearer)
		p->headers = add_header(p->headers, p->bearer, &ok);
	free(t);
	return ok ? 0 : -ENOMEM;
}

/* What stays the same from window to window, set once on the handle. */
static int setup_curl(struct pusher *p, const struct push_opts *o)
{
	CURL *c;

	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		pa_err("cannot initialise libcurl; out of memory?");
		return -ENOMEM;
	}
	p->curl_inited = true;
	p->curl = c = curl_easy_init();
	p->multi = curl_multi_init();
	if (!c || !p->multi || set_headers(p, o->tenant)) {
		pa_err("cannot set up libcurl; out of memory?");
		return -ENOMEM;
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, p->headers);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "perf-agent");
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
	/* A thread must not take signals for timeouts (the resolver's alarm). */
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, PUSH_CONNECT_MS);
	/* Not cut to pusher_stop's deadline: perform() abandons the request then. */
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)((p->timeout_ns + 999999) / 1000000));
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, p->errbuf);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, p);
	if (p->userpwd) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERPWD, p->userpwd);
	}
	if (o->cacert)
		curl_easy_setopt(c, CURLOPT_CAINFO, o->cacert);
	return 0;
}

/* The response's first line, cleaned for a message, into buf. */
static void first_line(const struct pusher *p, char *buf, size_t size)
{
	const char *s = p->body;
	size_t n = 0;

	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	while (n + 1 < size && n < PUSH_LINE_MAX && s[n] && s[n] != '\r' && s[n] != '\n') {
		buf[n] = (unsigned char)s[n] < ' ' ? '?' : s[n];
		n++;
	}
	buf[n] = '\0';
}

/*
 * curl_easy_perform, but looking at pusher_stop's deadline every PUSH_POLL_MS: libcurl
 * calls its progress callback only about once a second while it waits for an answer.
 */
static CURLcode perform(struct pusher *p)
{
	CURLcode cc = CURLE_OK;
	CURLMcode mc;
	CURLMsg *msg;
	int running = 1, left;

	mc = curl_multi_add_handle(p->multi, p->curl);
	while (!mc && running) {
		mc = curl_multi_perform(p->multi, &running);
		if (!mc && running && abandon(p)) {
			cc = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
		if (!mc && running)
			mc = curl_multi_poll(p->multi, NULL, 0, PUSH_POLL_MS, NULL);
	}
	while ((msg = curl_multi_info_read(p->multi, &left)))
		if (msg->msg == CURLMSG_DONE)
			cc = msg->data.result;
	if (mc) {
		snprintf(p->errbuf, sizeof(p->errbuf), "%s", curl_multi_strerror(mc));
		cc = CURLE_FAILED_INIT;
	}
	curl_multi_remove_handle(p->multi, p->curl);
	return cc;
}

/* POST one window; its outcome, with *status the HTTP status (0 if none). */
static enum push_outcome upload(struct pusher *p, const struct spool_item *it, long *status)
{
	char *url = strfmt("%s?%s", p->url, it->query);
	curl_mime *mime = curl_mime_init(p->curl);
	curl_mimepart *part = mime ? curl_mime_addpart(mime) : NULL;
	CURLcode cc = CURLE_OUT_OF_MEMORY;

	*status = 0;
	p->errbuf[0] = '\0';
	p->body_len = 0;
	if (url && part && !curl_mime_name(part, "profile") &&
	    !curl_mime_filename(part, "profile.pprof") &&
	    !curl_mime_type(part, "application/octet-stream") &&
	    !curl_mime_data(part, it->data, it->len)) {
		curl_easy_setopt(p->curl, CURLOPT_URL, url);
		curl_easy_setopt(p->curl, CURLOPT_MIMEPOST, mime);
		cc = perform(p);
	}
	p->body[p->body_len] = '\0';
	curl_easy_setopt(p->curl, CURLOPT_MIMEPOST, NULL);
	curl_mime_free(mime);
	free(url);
	if (cc == CURLE_ABORTED_BY_CALLBACK)
		return PUSH_ABANDONED;
	if (cc != CURLE_OK) {
		if (!p->errbuf[0])
			snprintf(p->errbuf, sizeof(p->errbuf), "%s", curl_easy_strerror(cc));
		return PUSH_RETRY;
	}
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, status);
	if (*status >= 200 && *status < 300)
		return PUSH_OK;
	if (*status >= 500 || *status == 429 || *status == 408)
		return PUSH_RETRY;
	return PUSH_REJECTED;
}

/* What a rejection by status means, for the warning. */
static const char *status_hint(long status)
{
	switch (status) {
	case 400:
		return "the server could not read the window";
	case 401:
		return "the credentials are wrong or missing: check --basic-auth-file or "
		       "--token-file";
	case 403:
		return "the credentials may not push here: check them and --tenant";
	case 404:
		return "no ingest API at this URL: give the server's base URL in --push";
	case 413:
		return "the window is too large for the server: shorten --interval or raise "
		       "the server's limit";
	}
	if (status >= 300 && status < 400)
		return "the server redirects: give the URL it redirects to in --push";
	return "";
}

/* Whether status was warned about before; remembers it. */
static bool seen_status(struct pusher *p, long status)
{
	for (size_t i = 0; i < p->nr_seen; i++)
		if (p->seen[i] == status)
			return true;
	if (p->nr_seen < PUSH_STATUSES_SEEN)
		p->seen[p->nr_seen++] = status;
	return false;
}

static void set_last_error(struct pusher *p, long status)
{
	char line[PUSH_LINE_MAX + 1];

	if (!status) {
		snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", p->errbuf);
		return;
	}
	first_line(p, line, sizeof(line));
	snprintf(p->st.last_error, sizeof(p->st.last_error), "HTTP %ld%s%s", status,
		 line[0] ? ": " : "", line);
}

static void on_pushed(struct pusher *p, const struct spool_item *it)
{
	(void)spool_remove(p->sp,
			   it); /* -ENOENT: the bound took it meanwhile, pushed all the same */
	if (p->fails)
		pa_info("pushed to %s again after %llu failed tries", p->shown,
			(unsigned long long)p->fails);
	p->fails = 0;
	p->backoff_ns = PUSH_BACKOFF_NS < p->retry_max_ns ? PUSH_BACKOFF_NS : p->retry_max_ns;
	pthread_mutex_lock(&p->lock);
	p->st.pushed++;
	pthread_mutex_unlock(&p->lock);
}

/* The same window again after the backoff; one warning per run of failures. */
static void on_failed(struct pusher *p, long status)
{
	pthread_mutex_lock(&p->lock);
	p->st.failed_tries++;
	set_last_error(p, status);
	pthread_mutex_unlock(&p->lock);
	if (!p->fails++)
		pa_warn("cannot push to %s (%s); windows wait in the spool, retried with a backoff "
			"of up to %g s",
			p->shown, p->st.last_error, (double)p->retry_max_ns / NS_PER_S);
	p->next_try_ns = pa_now_ns() + p->backoff_ns;
	p->backoff_ns = p->backoff_ns > p->retry_max_ns / 2 ? p->retry_max_ns : p->backoff_ns * 2;
}

static void on_rejected(struct pusher *p, const struct spool_item *it, long status)
{
	const char *hint = status_hint(status);

	(void)spool_remove(p->sp, it);
	pthread_mutex_lock(&p->lock);
	p->st.rejected++;
	set_last_error(p, status);
	pthread_mutex_unlock(&p->lock);
	if (!seen_status(p, status))
		pa_warn("%s rejected a window (%s)%s%s; rejected windows are dropped", p->shown,
			p->st.last_error, hint[0] ? "; " : "", hint);
}

/* Push the oldest window.  0 (pushed or rejected), -ENOENT (none), or -errno (retry). */
static int push_one(struct pusher *p)
{
	struct spool_item it;
	long status;
	int err = spool_peek(p->sp, &it);

	if (err == -ENOENT)
		return err;
	if (err) {
		snprintf(p->errbuf, sizeof(p->errbuf), "cannot read the spool: %s", strerror(-err));
		on_failed(p, 0);
		return err;
	}
	switch (upload(p, &it, &status)) {
	case PUSH_OK:
		on_pushed(p, &it);
		break;
	case PUSH_RETRY:
		on_failed(p, status);
		err = -EAGAIN;
		break;
	case PUSH_REJECTED:
		on_rejected(p, &it, status);
		break;
	case PUSH_ABANDONED:
		err = -ECANCELED;
		break;
	}
	spool_item_free(&it);
	return err;
}

/* Sleep until at_ns (CLOCK_MONOTONIC) or a signal on the condition; lock held. */
static void wait_until(struct pusher *p, uint64_t at_ns)
{
	struct timespec ts = {.tv_sec = at_ns / NS_PER_S, .tv_nsec = at_ns % NS_PER_S};

	pthread_cond_timedwait(&p->cond, &p->lock, &ts);
}

static void *push_thread(void *arg)
{
	struct pusher *p = arg;
	bool stop_seen = false;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		uint64_t now = pa_now_ns();
		int err;

		if (p->stopping && !stop_seen) {
			/* One more try right away: the last window was just spooled. */
			stop_seen = true;
			p->next_try_ns = 0;
		}
		if (p->stopping && now >= p->stop_at_ns)
			break;
		if (now < p->next_try_ns) {
			/* Backing off: a kick does not cut it short, a stop does. */
			wait_until(p, p->stopping && p->stop_at_ns < p->next_try_ns
					      ? p->stop_at_ns
					      : p->next_try_ns);
			continue;
		}
		p->kicked = false;
		pthread_mutex_unlock(&p->lock);
		err = push_one(p);
		pthread_mutex_lock(&p->lock);
		if (err != -ENOENT)
			continue;
		if (p->stopping)
			break;
		while (!p->kicked && !p->stopping)
			pthread_cond_wait(&p->cond, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

void pusher_free(struct pusher *p)
{
	if (!p)
		return;
	pusher_stop(p, 0);
	if (p->curl)
		curl_easy_cleanup(p->curl);
	if (p->multi)
		curl_multi_cleanup(p->multi);
	curl_slist_free_all(p->headers);
	if (p->curl_inited)
		curl_global_cleanup();
	free_secret(p->userpwd);
	free_secret(p->bearer);
	free(p->url);
	free(p->shown);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* The thread, with every signal blocked: the caller's threads take them. */
static int start_thread(struct pusher *p)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&p->thread, NULL, push_thread, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pa_err("cannot start the push thread: %s", strerror(err));
		return -err;
	}
	p->running = true;
	return 0;
}

static int init_sync(struct pusher *p)
{
	pthread_condattr_t ca;

	if (pthread_condattr_init(&ca))
		return -ENOMEM;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&p->lock, NULL);
	return 0;
}

struct pusher *pusher_start(const struct push_opts *o, struct spool *sp)
{
	struct pusher *p = calloc(1, sizeof(*p));

	if (!p || init_sync(p)) {
		pa_err("cannot start pushing: out of memory");
		free(p);
		return NULL;
	}
	p->sp = sp;
	p->retry_max_ns = o->retry_max_ns ? o->retry_max_ns : PUSH_TIMEOUT_NS;
	p->timeout_ns = o->timeout_ns ? o->timeout_ns : PUSH_TIMEOUT_NS;
	p->backoff_ns = PUSH_BACKOFF_NS < p->retry_max_ns ? PUSH_BACKOFF_NS : p->retry_max_ns;
	if (set_url(p, o->url) || (o->tenant && check_tenant(o->tenant)) || read_files(p, o) ||
	    setup_curl(p, o) || start_thread(p)) {
		pusher_free(p);
		return NULL;
	}
	return p;
}

void pusher_kick(struct pusher *p)
{
	pthread_mutex_lock(&p->lock);
	p->kicked = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void pusher_stop(struct pusher *p, uint64_t grace_ns)
{
	uint64_t now = pa_now_ns();

	if (!p || !p->running)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	p->stop_at_ns = grace_ns < UINT64_MAX - now ? now + grace_ns : UINT64_MAX;
	atomic_store(&p->abort_at_ns, p->stop_at_ns);
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	p->running = false;
}

void pusher_stats(struct pusher *p, struct push_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->st;
	pthread_mutex_unlock(&p->lock);
}
