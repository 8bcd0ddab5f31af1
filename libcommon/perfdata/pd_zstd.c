// SPDX-License-Identifier: Apache-2.0
/*
 * zstd for PERF_RECORD_COMPRESSED.  perf's reader gives each COMPRESSED record a
 * buffer of mmap_len bytes (plus what is left of a split record) and loops until the
 * record's input is consumed, so the encoder keeps two promises: no record decompresses
 * to more than the chunk it came from (<= PD_ZSTD_CHUNK = the declared mmap_len), and
 * every record decompresses to at least one byte (perf takes 0 for a failure).  Both
 * hold because the stream is flushed after every piece of input, and a record only
 * ever holds whole flushed pieces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "perfdata/pd_priv.h"
#include "perfdata/pd_zstd.h"

/* A COMPRESSED record is a header and at most this much zstd data (header.size is u16). */
#define MAX_PAYLOAD (PD_MAX_RECORD - sizeof(struct perf_event_header))
/* Input flushed at once: its output (one block: the input plus a 3-byte block header
 * at worst, after the frame header at the start of the stream) fits one record. */
#define PIECE	  (62u * 1024)
#define PIECE_OUT (PIECE + 3 + 18)
_Static_assert(PIECE_OUT <= MAX_PAYLOAD, "a flushed piece must fit one COMPRESSED record");
_Static_assert(PD_ZSTD_CHUNK <= UINT32_MAX, "mmap_len is a u32 in HEADER_COMPRESSED");

struct pd_zstd_enc {
	ZSTD_CCtx *cctx;
	uint8_t *tmp; /* one flushed piece, ZSTD_compressBound(PIECE) bytes */
	size_t tmp_cap;
	uint64_t in, out;
};

struct pd_zstd_enc *pd_zstd_enc_new(int level)
{
	struct pd_zstd_enc *z;

	if (level < PD_ZSTD_MIN_LEVEL || level > PD_ZSTD_MAX_LEVEL) {
		errno = EINVAL;
		return NULL;
	}
	z = calloc(1, sizeof(*z));
	if (!z) {
		errno = ENOMEM;
		return NULL;
	}
	z->tmp_cap = ZSTD_compressBound(PIECE) + 32;
	z->cctx = ZSTD_createCCtx();
	z->tmp = malloc(z->tmp_cap);
	if (!z->cctx || !z->tmp ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level))) {
		pd_zstd_enc_free(z);
		errno = ENOMEM;
		return NULL;
	}
	return z;
}

/* Compress and flush len bytes into z->tmp; the output size, or 0 if zstd failed. */
static size_t flush_piece(struct pd_zstd_enc *z, const uint8_t *src, size_t len)
{
	ZSTD_inBuffer in = {src, len, 0};
	ZSTD_outBuffer out = {z->tmp, z->tmp_cap, 0};
	size_t left;

	do {
		left = ZSTD_compressStream2(z->cctx, &out, &in, ZSTD_e_flush);
		if (ZSTD_isError(left))
			return 0;
	} while (left && out.pos < out.size);
	/* Not all out, or more than one record can carry: the promises above break. */
	if (left || in.pos != in.size || out.pos > MAX_PAYLOAD)
		return 0;
	return out.pos;
}

/* Bytes of src from off that make the next piece: whole records up to PIECE bytes, or
 * PIECE bytes of a record larger than that. */
static size_t piece_len(const uint8_t *src, size_t len, size_t off)
{
	size_t n = 0;

	while (off + n < len) {
		struct perf_event_header h;

		if (len - off - n < sizeof(h))
			break;
		memcpy(&h, src + off + n, sizeof(h));
		if (h.size < sizeof(h) || n + h.size > PIECE || h.size > len - off - n)
			break;
		n += h.size;
	}
	if (!n)
		n = len - off < PIECE ? len - off : PIECE;
	return n;
}

int pd_zstd_enc_chunk(struct pd_zstd_enc *z, const void *src, size_t len, struct pd_buf *out)
{
	const uint8_t *p = src;
	size_t off = 0, len0 = out->len, rec = SIZE_MAX; /* rec: the open record in out */

	if (!len || len > PD_ZSTD_CHUNK)
		return -EINVAL;
	while (off < len) {
		size_t n = piece_len(p, len, off), c = flush_piece(z, p + off, n);
		struct perf_event_header h = {PERF_RECORD_COMPRESSED, 0, sizeof(h)};

		if (!c)
			return -EIO;
		if (rec != SIZE_MAX)
			memcpy(&h, out->p + rec, sizeof(h));
		if (rec == SIZE_MAX || h.size + c > PD_MAX_RECORD) {
			h.size = sizeof(h);
			rec = out->len;
			pd_buf_put(out, &h, sizeof(h));
		}
		pd_buf_put(out, z->tmp, c);
		if (out->err)
			return out->err;
		h.size += (uint16_t)c;
		memcpy(out->p + rec, &h, sizeof(h));
		off += n;
	}
	z->in += len;
	z->out += out->len - len0;
	return 0;
}

void pd_zstd_enc_stats(const struct pd_zstd_enc *z, uint64_t *in, uint64_t *out)
{
	*in = z->in;
	*out = z->out;
}

void pd_zstd_enc_free(struct pd_zstd_enc *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->cctx);
	free(z->tmp);
	free(z);
}

/* Decoder. */

struct pd_zstd_dec {
	ZSTD_DCtx *dctx;
	size_t max_out;
	uint8_t *buf; /* records decompressed and not yet handed out are buf[head, len) */
	size_t head, len, cap;
};

struct pd_zstd_dec *pd_zstd_dec_new(size_t max_out)
{
	struct pd_zstd_dec *z = calloc(1, sizeof(*z));

	if (!z || !(z->dctx = ZSTD_createDCtx())) {
		free(z);
		errno = ENOMEM;
		return NULL;
	}
	z->max_out = max_out;
	return z;
}

/* Room for want bytes after len, in steps of doubling (most records need far less than
 * max_out); 8-byte alignment of buf is malloc's. */
static int reserve(struct pd_zstd_dec *z, size_t want)
{
	size_t cap = z->cap ? z->cap : 64 * 1024;
	uint8_t *p;

	if (z->len + want <= z->cap)
		return 0;
	while (cap < z->len + want)
		cap *= 2;
	p = realloc(z->buf, cap);
	if (!p)
		return -ENOMEM;
	z->buf = p;
	z->cap = cap;
	return 0;
}

int pd_zstd_dec_feed(struct pd_zstd_dec *z, const void *src, size_t len, char *err, size_t errlen)
{
	ZSTD_inBuffer in = {src, len, 0};
	size_t start, limit, ret;

	/* What is left of a split record moves to the front. */
	if (z->head) {
		memmove(z->buf, z->buf + z->head, z->len - z->head);
		z->len -= z->head;
		z->head = 0;
	}
	start = z->len;
	/* One byte more than allowed: output that reaches it is too much. */
	limit = start + z->max_out + 1;
	for (;;) {
		ZSTD_outBuffer out;
		size_t before_in = in.pos, room = z->cap - z->len;

		if (z->len == limit) {
			snprintf(err, errlen, "decompresses to more than %zu bytes", z->max_out);
			return -E2BIG;
		}
		/* Out of room: ask for as much again as there is. */
		if (room < 4096)
			room = z->cap ? z->cap : 64 * 1024;
		if (room > limit - z->len)
			room = limit - z->len;
		if (reserve(z, room)) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		out = (ZSTD_outBuffer){z->buf + z->len, room, 0};
		ret = ZSTD_decompressStream(z->dctx, &out, &in);
		z->len += out.pos;
		if (ZSTD_isError(ret)) {
			snprintf(err, errlen, "corrupt zstd data (%s)", ZSTD_getErrorName(ret));
			return -EINVAL;
		}
		/* Input used up and room to spare: zstd has flushed all it can. */
		if (in.pos == in.size && out.pos < out.size)
			break;
		if (in.pos == before_in && !out.pos) {
			snprintf(err, errlen, "zstd made no progress");
			return -EINVAL;
		}
	}
	if (z->len - start > z->max_out) {
		snprintf(err, errlen, "decompresses to more than %zu bytes", z->max_out);
		return -E2BIG;
	}
	return 0;
}

int pd_zstd_dec_next(struct pd_zstd_dec *z, const struct perf_event_header **rec)
{
	struct perf_event_header h;

	if (z->len - z->head < sizeof(h))
		return 0;
	memcpy(&h, z->buf + z->head, sizeof(h));
	if (h.size < sizeof(h))
		return -EINVAL;
	if (h.size > z->len - z->head)
		return 0;
	*rec = (const struct perf_event_header *)(z->buf + z->head);
	z->head += h.size;
	return 1;
}

size_t pd_zstd_dec_pending(const struct pd_zstd_dec *z)
{
	return z->len - z->head;
}

void pd_zstd_dec_free(struct pd_zstd_dec *z)
{
	if (!z)
		return;
	ZSTD_freeDCtx(z->dctx);
	free(z->buf);
	free(z);
}
