/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The contract between the Python frame walker (python.bpf.h) and pa-record
 * (cmd/record/python.c): where a CPython process keeps its thread states and frames,
 * and how the walk's frames travel in a sample.
 *
 * A sample of a process with an entry in py_procs carries nr_py Python frames after
 * its user ips, innermost first, each two u64s: the code object and the frame's
 * instruction pointer.  A pair with code 0 closes the frames one call of
 * _PyEval_EvalFrameDefault ran (its entry frame), so pa-record can put each group in
 * place of its native _PyEval_EvalFrameDefault frame.
 */
#ifndef PA_PYTHON_H
#define PA_PYTHON_H

/* Python frames (pairs) kept per sample: Django and pytest stacks run 100-200 deep. */
#define PY_MAX_FRAMES PROFILE_MAX_PYFRAMES
/* Frames visited per walk, entry frames included. */
#define PY_MAX_STEPS (PY_MAX_FRAMES + 64)
/* Thread states searched for the sampled thread (then cached per tid). */
#define PY_MAX_THREADS 1024
#define PY_MAX_PROCS   4096
/* Bytes of a frame read at once: every fr_* offset + 8 fits in it. */
#define PY_FRAME_WINDOW 128
/* A field the interpreter does not have. */
#define PY_NO_FIELD 0xffff

/* py_procs value: one interpreter's addresses and offsets (see cpython_layout). */
struct py_proc {
	__u64 interp_head; /* &_PyRuntime.interpreters.head in the process */
	__u64 exec_mask;   /* f_executable's pointer bits (3.14+ tag the low ones) */
	/* The process's pid namespace (nsfs device and inode) when it is not the one
	 * the kernel numbers threads by: native_thread_id is the tid seen in it.  0, 0:
	 * the same. */
	__u64 ns_dev, ns_ino;
	__u16 threads_head;		  /* PyInterpreterState.threads.head */
	__u16 ts_next, ts_native_tid;	  /* PyThreadState */
	__u16 ts_frame;			  /* current_frame (3.13+), cframe (3.11/3.12) */
	__u16 cf_frame;			  /* _PyCFrame.current_frame, or PY_NO_FIELD */
	__u16 fr_previous, fr_executable; /* _PyInterpreterFrame */
	__u16 fr_instr, fr_owner;
	__u16 fr_is_entry; /* 3.11's is_entry, or PY_NO_FIELD */
	__u8 owner_skip;   /* owners >= this are entry frames (3.12+), no code */
	__u8 __pad[3];
};

_Static_assert(sizeof(struct py_proc) == 56, "py_proc size");
_Static_assert(__builtin_offsetof(struct py_proc, ns_ino) == 24, "py_proc.ns_ino");
_Static_assert(__builtin_offsetof(struct py_proc, threads_head) == 32, "py_proc.threads_head");
_Static_assert(__builtin_offsetof(struct py_proc, owner_skip) == 52, "py_proc.owner_skip");

/* Slots of the per-CPU py_stats counters. */
#define PY_STAT_WALKS	  0 /* samples of Python processes walked */
#define PY_STAT_NO_THREAD 1 /* the thread has no thread state (not a Python thread yet) */
#define PY_STAT_READ	  2 /* walks ended by memory that could not be read */
#define PY_STAT_CUT	  3 /* walks cut at PY_MAX_FRAMES or PY_MAX_STEPS */
#define PY_STAT_FRAMES	  4 /* Python frames stored */
#define PY_STAT_NR	  5

#endif /* PA_PYTHON_H */
