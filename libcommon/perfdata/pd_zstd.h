/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PERF_RECORD_COMPRESSED, as `perf record -z` writes it: one zstd stream for the whole
 * data section, cut into records of perf_event_header + compressed bytes.  The stream
 * is flushed at the end of every chunk the writer hands over, so each record holds
 * whole zstd blocks and decompresses to between 1 byte and the chunk's size, and the
 * history of earlier chunks stays in the window (what makes small chunks compress
 * well).  The writer cuts a chunk between records where it has to split it over several
 * COMPRESSED records; a reader must still join a record split over two of them, since
 * perf's writer cuts its output anywhere (and ours splits a record of over 62 KiB).
 *
 * The encoder is used by pd_write.c, the decoder by pd_read.c.  int functions return
 * 0 or -errno.
 */
#ifndef PA_PD_ZSTD_H
#define PA_PD_ZSTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfdata/perfdata.h"

struct pd_buf;

/* HEADER_COMPRESSED: five u32 as perf's write_compressed lays them out. */
struct pd_comp_feat {
	uint32_t version; /* 0 */
	uint32_t type;	  /* PD_COMP_ZSTD */
	uint32_t level;
	uint32_t ratio;	   /* uncompressed / compressed bytes, rounded; 0 when unknown */
	uint32_t mmap_len; /* no COMPRESSED record decompresses to more than this */
};
_Static_assert(sizeof(struct pd_comp_feat) == 20, "HEADER_COMPRESSED is 5 u32");

#define PD_COMP_ZSTD	  1
#define PD_ZSTD_MIN_LEVEL 1
#define PD_ZSTD_MAX_LEVEL 22
/* Largest chunk the writer compresses at once, and the mmap_len it declares: perf's
 * default mmap_len (512 KiB of ring + the control page), the size perf's own records
 * decompress to at most, so perf sizes its buffers as it does for its own files. */
#define PD_ZSTD_CHUNK (528384u)

/* Encoder: chunks of whole records in, PERF_RECORD_COMPRESSED records out. */
struct pd_zstd_enc;

/* level: PD_ZSTD_MIN_LEVEL..PD_ZSTD_MAX_LEVEL.  NULL and errno on failure. */
struct pd_zstd_enc *pd_zstd_enc_new(int level);
/*
 * Compress len (1..PD_ZSTD_CHUNK) bytes as the next part of the stream and append the
 * COMPRESSED records that carry them to out (each at most 65535 bytes, unpadded, as
 * perf writes them).  -EINVAL for a bad len, -EIO if zstd fails, -ENOMEM.
 */
int pd_zstd_enc_chunk(struct pd_zstd_enc *z, const void *src, size_t len, struct pd_buf *out);
/* Bytes given to pd_zstd_enc_chunk and bytes of COMPRESSED records it produced. */
void pd_zstd_enc_stats(const struct pd_zstd_enc *z, uint64_t *in, uint64_t *out);
void pd_zstd_enc_free(struct pd_zstd_enc *z);

/* Decoder: the payloads of COMPRESSED records in, the records they carry out. */
struct pd_zstd_dec;

/* max_out: the most one COMPRESSED record may decompress to.  NULL and errno. */
struct pd_zstd_dec *pd_zstd_dec_new(size_t max_out);
/*
 * Decompress the payload of one COMPRESSED record after the part of a record still
 * buffered.  -EINVAL: corrupt zstd data; -E2BIG: more than max_out bytes; -ENOMEM.
 * Either way err (errlen bytes) says why in a few words.
 */
int pd_zstd_dec_feed(struct pd_zstd_dec *z, const void *src, size_t len, char *err, size_t errlen);
/*
 * The next whole record decompressed: 1 and *rec (valid until the next feed, 8-byte
 * aligned unless an earlier record's size was not a multiple of 8); 0 when no whole
 * record is left (a partial one stays for the next feed); -EINVAL when the next
 * record's header.size is below the header's own size.
 */
int pd_zstd_dec_next(struct pd_zstd_dec *z, const struct perf_event_header **rec);
/* Bytes of a partial record waiting for the next feed (at the end of data: truncated). */
size_t pd_zstd_dec_pending(const struct pd_zstd_dec *z);
void pd_zstd_dec_free(struct pd_zstd_dec *z);

#endif /* PA_PD_ZSTD_H */
