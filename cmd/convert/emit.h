/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A buffered text writer for pa-convert's text formats (JSON, HTML, SVG): the text
 * goes out through a folded_write_fn a buffer at a time, and the first error sticks,
 * so a writer emits without checking each call and reads the result once at the end.
 */
#ifndef PA_CONVERT_EMIT_H
#define PA_CONVERT_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "convert.h"

struct emit {
	char *buf;
	size_t len, cap;
	folded_write_fn write;
	void *ctx;
	int err; /* the first error: -ENOMEM or what write returned */
};

void emit_init(struct emit *e, folded_write_fn write, void *ctx);
/* Write what is buffered and free the buffer: the first error, or 0. */
int emit_finish(struct emit *e);

void emit_mem(struct emit *e, const void *p, size_t len);
void emit_str(struct emit *e, const char *s);
void emit_u64(struct emit *e, uint64_t v);
void emit_printf(struct emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * s as a JSON string with its quotes: '"', '\\' and control characters escaped, '<'
 * and '>' as \u003c/\u003e (so the text is safe inside an HTML <script>), and bytes
 * that are not UTF-8 replaced by U+FFFD.  NULL writes null.
 */
void emit_json_str(struct emit *e, const char *s);
/* The text of fmt as a JSON string (emit_json_str). */
void emit_json_printf(struct emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as XML/HTML text: & < > " ' as entities, control characters and bad UTF-8 as
 * U+FFFD. */
void emit_xml_str(struct emit *e, const char *s);

#endif /* PA_CONVERT_EMIT_H */
