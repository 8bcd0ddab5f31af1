/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The contract between the CFI compiler (libcommon/unwind/cfi_compile.c) and the BPF stack
 * walker: one compact unwind row per PC range of a binary, 8 bytes, sorted by PC.
 * Included by BPF code (after vmlinux.h) and by user space.
 *
 * A table is the rows of one binary (keyed by build-id), PCs relative to the table's
 * base: row.pc = link-time vaddr - base.  Row i covers [rows[i].pc, rows[i+1].pc); the
 * last row is always UNWIND_CFA_NONE (end of the last FDE).  The walker finds the last
 * row with row.pc <= pc: before rows[0] or on a NONE row there is no CFI, so it falls
 * back to the frame pointer.  For a caller frame (a return address) look up pc - 1: a
 * call may be the last instruction of its function; not so for the interrupted frame
 * and for the frame interrupted by a signal (the one above UNWIND_CFA_SIGNAL).
 *
 * x86-64 only.  The return address is at CFA - 8 (rows where it is not are
 * UNWIND_CFA_UNSUPPORTED, but for UNWIND_CFA_RA_RDI), and the caller's rsp is the CFA.
 */
#ifndef PA_UNWIND_ROWS_H
#define PA_UNWIND_ROWS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* How to compute the CFA (row.type & UNWIND_CFA_MASK). */
#define UNWIND_CFA_NONE	     0 /* no CFI here (FDE gap / past the end): use the frame pointer */
#define UNWIND_CFA_RSP	     1 /* CFA = rsp + cfa_off */
#define UNWIND_CFA_RBP	     2 /* CFA = rbp + cfa_off */
#define UNWIND_CFA_PLT	     3 /* CFA = rsp + cfa_off + ((pc & 15) >= 11 ? 8 : 0)  (lazy PLT) */
#define UNWIND_CFA_PLT_IBT   4 /* as PLT with threshold 10 (IBT/endbr64 PLT)  */
#define UNWIND_CFA_DEREF_RBP 5 /* CFA = *(u64 *)(rbp + cfa_off)  (gcc's stack realignment) */
#define UNWIND_CFA_SIGNAL                                                                          \
	6			 /* signal trampoline (__restore_rt): rsp points at the
				  * ucontext; restore rsp, rbp and rip from its mcontext */
#define UNWIND_CFA_OUTERMOST   7 /* return address undefined: the walk is complete */
#define UNWIND_CFA_UNSUPPORTED 8 /* a rule the walker cannot follow: frame pointer, counted */
#define UNWIND_CFA_RA_RDI                                                                          \
	9 /* the return address is in rdi (glibc's __vfork, between its pop and push):
	   * CFA = rsp + cfa_off; only the interrupted frame has rdi, others unsupported */
#define UNWIND_CFA_MASK 0x0f

/* Where the caller's rbp is (row.type >> UNWIND_RBP_SHIFT). */
#define UNWIND_RBP_SAME	     0 /* unchanged: the caller's rbp is this frame's rbp */
#define UNWIND_RBP_CFA_OFF   1 /* saved at CFA + 8 * rbp_off */
#define UNWIND_RBP_UNDEFINED 2 /* lost: the walk continues with rbp unknown */
#define UNWIND_RBP_AT_RBP    3 /* saved at rbp + 8 * rbp_off (realigned frames: rbp is fixed) */
#define UNWIND_RBP_SHIFT     4

struct unwind_row {
	__u32 pc;      /* first PC the row covers, minus the table base */
	__u8 type;     /* UNWIND_CFA_* | UNWIND_RBP_* << UNWIND_RBP_SHIFT */
	__s8 rbp_off;  /* in 8-byte units, see UNWIND_RBP_* */
	__s16 cfa_off; /* bytes */
};

/* 8 bytes in the mmap'ed row array, in the on-disk CFI cache and in the walker. */
_Static_assert(sizeof(struct unwind_row) == 8, "unwind_row size");
_Static_assert(__builtin_offsetof(struct unwind_row, type) == 4, "unwind_row.type");
_Static_assert(__builtin_offsetof(struct unwind_row, rbp_off) == 5, "unwind_row.rbp_off");
_Static_assert(__builtin_offsetof(struct unwind_row, cfa_off) == 6, "unwind_row.cfa_off");

#define UNWIND_ROW_CFA(r) ((r)->type & UNWIND_CFA_MASK)
#define UNWIND_ROW_RBP(r) ((r)->type >> UNWIND_RBP_SHIFT)

/* Offset of the mcontext general registers in the frame of __restore_rt: rsp points at
 * struct rt_sigframe minus pretcode, i.e. at the ucontext (uc_mcontext at +40). */
#define UNWIND_SIG_MCTX	   40
#define UNWIND_SIG_RBP_OFF (UNWIND_SIG_MCTX + 10 * 8)
#define UNWIND_SIG_RSP_OFF (UNWIND_SIG_MCTX + 15 * 8)
#define UNWIND_SIG_RIP_OFF (UNWIND_SIG_MCTX + 16 * 8)

/*
 * Proposed map layout for the walker (user space fills shards through mmap):
 *   unwind_shards: ARRAY_OF_MAPS, inner = ARRAY (BPF_F_MMAPABLE), 1 entry of
 *                  struct unwind_shard; a table never straddles shards.
 *   unwind_tables: ARRAY, key table id -> struct unwind_table_info.
 * A binary search over rows[first, first + n) takes at most UNWIND_SEARCH_STEPS probes.
 */
#define UNWIND_SHARD_ROWS   (1u << 20)
#define UNWIND_SEARCH_STEPS 21

struct unwind_shard {
	struct unwind_row rows[UNWIND_SHARD_ROWS];
};

struct unwind_table_info {
	__u32 shard; /* index into unwind_shards */
	__u32 first; /* first row in the shard */
	__u32 n;     /* rows */
	__u32 flags;
};

_Static_assert(sizeof(struct unwind_table_info) == 16, "unwind_table_info size");
_Static_assert(__builtin_offsetof(struct unwind_table_info, first) == 4, "unwind_table_info.first");
_Static_assert(__builtin_offsetof(struct unwind_table_info, n) == 8, "unwind_table_info.n");
_Static_assert(sizeof(struct unwind_shard) == 8 * UNWIND_SHARD_ROWS, "unwind_shard size");

#endif /* PA_UNWIND_ROWS_H */
