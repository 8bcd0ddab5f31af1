// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

#define EMIT_CHUNK (1u << 20)

void emit_init(struct emit *e, folded_write_fn write, void *ctx)
{
	memset(e, 0, sizeof(*e));
	e->write = write;
	e->ctx = ctx;
}

static void flush(struct emit *e)
{
	if (!e->err && e->len)
		e->err = e->write(e->ctx, e->buf, e->len);
	e->len = 0;
}

int emit_finish(struct emit *e)
{
	flush(e);
	free(e->buf);
	e->buf = NULL;
	e->cap = 0;
	return e->err;
}

/* Room for need more bytes in the buffer: false after an error. */
static bool room(struct emit *e, size_t need)
{
	char *nb;
	size_t cap;

	if (e->err)
		return false;
	if (e->len + need <= e->cap)
		return true;
	flush(e);
	if (need <= e->cap)
		return !e->err;
	cap = need > EMIT_CHUNK ? need : EMIT_CHUNK;
	nb = realloc(e->buf, cap);
	if (!nb) {
		e->err = -ENOMEM;
		return false;
	}
	e->buf = nb;
	e->cap = cap;
	return !e->err;
}

void emit_mem(struct emit *e, const void *p, size_t len)
{
	if (!len || !room(e, len))
		return;
	memcpy(e->buf + e->len, p, len);
	e->len += len;
}

void emit_str(struct emit *e, const char *s)
{
	emit_mem(e, s, strlen(s));
}

void emit_u64(struct emit *e, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do
		tmp[n++] = '0' + v % 10;
	while ((v /= 10));
	if (!room(e, n))
		return;
	while (n)
		e->buf[e->len++] = tmp[--n];
}

void emit_printf(struct emit *e, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !room(e, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(e->buf + e->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	e->len += n;
}

void emit_json_printf(struct emit *e, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		if (!e->err)
			e->err = -ENOMEM;
		return;
	}
	emit_json_str(e, s);
	free(s);
}

/* The length of the well-formed UTF-8 sequence at s (a multi-byte one), or 0. */
static size_t utf8_seq(const unsigned char *s)
{
	size_t n, i;
	unsigned int cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/*
 * s with each byte c for which esc(c, out) writes an escape replaced by it, bad UTF-8
 * by U+FFFD.  Runs of plain bytes are copied in one piece.
 */
static void emit_escaped(struct emit *e, const char *s, size_t (*esc)(unsigned char, char *))
{
	const unsigned char *p = (const unsigned char *)s, *run = p;
	char tmp[8];
	size_t n;

	while (*p) {
		if (*p >= 0x80) {
			n = utf8_seq(p);
			if (n) {
				p += n;
				continue;
			}
			emit_mem(e, run, p - run);
			emit_str(e, REPLACEMENT);
			run = ++p;
			continue;
		}
		n = esc(*p, tmp);
		if (!n) {
			p++;
			continue;
		}
		emit_mem(e, run, p - run);
		emit_mem(e, tmp, n);
		run = ++p;
	}
	emit_mem(e, run, p - run);
}

static size_t json_esc(unsigned char c, char *out)
{
	static const char hex[] = "0123456789abcdef";

	switch (c) {
	case '"':
	case '\\':
		out[0] = '\\';
		out[1] = c;
		return 2;
	case '\n':
		memcpy(out, "\\n", 2);
		return 2;
	case '\t':
		memcpy(out, "\\t", 2);
		return 2;
	}
	if (c >= 0x20 && c != '<' && c != '>')
		return 0;
	memcpy(out, "\\u00", 4);
	out[4] = hex[c >> 4];
	out[5] = hex[c & 15];
	return 6;
}

void emit_json_str(struct emit *e, const char *s)
{
	if (!s) {
		emit_str(e, "null");
		return;
	}
	emit_mem(e, "\"", 1);
	emit_escaped(e, s, json_esc);
	emit_mem(e, "\"", 1);
}

static size_t xml_esc(unsigned char c, char *out)
{
	const char *ent;

	switch (c) {
	case '&':
		ent = "&amp;";
		break;
	case '<':
		ent = "&lt;";
		break;
	case '>':
		ent = "&gt;";
		break;
	case '"':
		ent = "&quot;";
		break;
	case '\'':
		ent = "&#39;";
		break;
	default:
		if (c >= 0x20 || c == '\t' || c == '\n')
			return 0;
		ent = REPLACEMENT; /* XML 1.0 has no control characters */
	}
	memcpy(out, ent, strlen(ent));
	return strlen(ent);
}

void emit_xml_str(struct emit *e, const char *s)
{
	emit_escaped(e, s, xml_esc);
}
