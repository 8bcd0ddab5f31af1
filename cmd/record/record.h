/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pa-record's session: everything one recording owns, passed to every module.
 * main.c parses options and runs the lifecycle; the other files each own a concern.
 */
#ifndef PA_RECORD_H
#define PA_RECORD_H

#include <linux/perf_event.h>
#include <linux/types.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hash.h"
#include "symbolize/buildid.h"
#include "symbolize/cpython.h"
#include "perfdata/evspec.h"
#include "perfdata/perfdata.h"
#include "profile/gpu_events.h"
#include "profile.h"

struct profile_bpf;
struct ring_buffer;
struct bpf_link;
struct bpf_program;
struct pd_writer;
struct pd_mmap;
struct rec_unwind;
struct rec_python;
struct rec_synth;
struct rec_gpu;
struct rec_cgroups;
struct proc_map;

/*
 * How off-CPU time is taken, cheapest first; each falls back to the next where the
 * kernel refuses to load it.
 */
enum rec_switch_method {
	REC_SWITCH_TASK_WORK,  /* tp_btf; user stack from a task_work at return to user */
	REC_SWITCH_RSEQ,       /* tp_btf; rseq threads' user stack at rseq_update */
	REC_SWITCH_SYS_EXIT,   /* tp_btf; sleeps' user stack at the system call's exit */
	REC_SWITCH_SWITCH_OUT, /* tp_btf; user stack walked at every switch-out */
	REC_SWITCH_RAW_TP,     /* raw_tp; both stacks walked at every switch-out */
	REC_SWITCH_NR,
};

struct rec_opts {
	pid_t *pids; /* -p */
	size_t nr_pids;
	bool system_wide;      /* -a */
	char **cmd_argv;       /* -- CMD ARGS */
	uint64_t duration_ns;  /* -d, 0 = until the targets end */
	uint64_t freq;	       /* -F */
	uint64_t count;	       /* -c: sample every count events, 0 = by -F */
	const char *events;    /* -e: the sampling events, NULL = cpu-clock */
	const char *cpu_list;  /* -C: the CPUs the sampling events run on, NULL = all */
	const char *cgroups;   /* -G: only threads of these cgroups (and below) are sampled */
	bool no_cgroups;       /* --no-cgroups: samples carry no cgroup */
	const char *label_env; /* --label-env LABEL=VAR,...: read from containers */
	bool no_kernel;
	bool offcpu;		 /* --offcpu: off-CPU time as a second event */
	bool no_cpu;		 /* --no-cpu: no cpu-clock sampling */
	uint64_t offcpu_min_ns;	 /* --offcpu-min */
	uint32_t offcpu_states;	 /* --offcpu-state: bits (1 << PROFILE_STATE_*) */
	int switch_method;	 /* PA_RECORD_SWITCH: the first REC_SWITCH_* to try, -1 auto */
	uint32_t skip_switch_in; /* PA_RECORD_SKIP_SWITCH_IN: tests, ignore every Nth */
	uint32_t max_targets;	 /* PA_RECORD_MAX_TARGETS: tests, 0 = PROFILE_MAX_TARGETS */
	uint32_t drop_every;	 /* PA_RECORD_DROP_EVERY: tests, drop every Nth sample */
	uint32_t slice_gone;	 /* PA_RECORD_SLICE_GONE: tests, as if all processes exited */
	uint32_t unwind_mode;	 /* --unwind: UNWIND_MODE_* */
	uint32_t slice_always;	 /* --unwind dwarf[,SIZE]: every sample's stack slice size */
	uint32_t unwind_rows;	 /* --unwind-rows, 0 = UNWIND_DEFAULT_ROWS */
	const char *output;	 /* "-" = stdout */
	int compress_level;	 /* -z: zstd level, 0 = plain records */
	bool pipe;
	bool quiet;
	bool no_buildid_cache; /* -N: leave ~/.debug alone */
	int verbose;
	bool dump;	     /* --dump: print the stacks of -p's processes' threads and exit */
	bool dump_keep;	     /* --dump -o FILE: keep the recording it printed */
	bool no_python;	     /* --no-python: no Python frames walked */
	bool gpu;	     /* --gpu: CUDA kernel launches as the gpu-launch event */
	uint32_t gpu_stacks; /* --gpu-stacks: launch stacks walked a second per thread, 0 all */
	bool pmu;	     /* --pmu: count (scheduler, hardware counters), no perf.data */
	bool per_pid;	     /* --per-pid: with --pmu, each thread too */
	bool json;	     /* --json: with --pmu, one JSON document */
	int argc;	     /* for the CMDLINE feature */
	char **argv;
};

/* Side-band ring of one CPU: a dummy event's mmap'ed buffer. */
struct rec_sideband {
	int fd;
	void *base; /* control page followed by the data pages */
	size_t map_len;
	char *copy; /* room for a record that wraps the end of the data area */
};

/* A sampling event (-e; cpu-clock by default), opened on every CPU -C allows. */
struct rec_event {
	struct evspec spec; /* its name and attr, as opened */
	int evidx;	    /* its attr in perf.data */
	bool tracepoint;    /* on_tp_sample, not on_sample */
	bool opened;	    /* on some CPU already */
	uint64_t tp_id;	    /* a tracepoint: the one event's id */
};

/* CPUs -C can name. */
#define REC_MAX_CPUS 4096

struct rec_cpu {
	int cpu;
	/* Each sampling event on this CPU (-1: not opened here) with the BPF program
	 * attached, and its PERF_EVENT_IOC_ID: the sample id in perf.data. */
	int ev_fd[PROFILE_MAX_EVENTS];
	uint64_t ev_id[PROFILE_MAX_EVENTS];
	struct bpf_link *ev_link[PROFILE_MAX_EVENTS];
	/*
	 * --offcpu: a bpf-output event that never fires, opened only so that the
	 * offcpu-time samples of this CPU carry an id the kernel will not reuse.
	 */
	int off_fd;
	uint64_t off_id;
	int gpu_fd; /* --gpu: the same for gpu-launch samples */
	uint64_t gpu_id;
	int gpu_time_fd; /* --gpu: the same for gpu-time samples (the adapter's records) */
	uint64_t gpu_time_id;
	uint64_t id; /* the first attr's id: the sample_id trailer of side-band records */
	uint64_t lost_seen[PROFILE_LOST_NR]; /* BPF counters already reported */
	struct rec_sideband sb;
};

/* A set of pids (open addressing); user space's view of who is followed. */
/* The followed pids: pids[0..n) in the order added, indexed by idx. */
struct rec_pidset {
	pid_t *pids;
	size_t cap, n;
	struct hidx idx;
};

/* A file segment loaded by PT_LOAD: where file offset off lands (vaddr). */
struct rec_seg {
	uint64_t off, vaddr, filesz;
	bool exec;
};

#define REC_FILE_MAX_SEGS 8

enum rec_table_state {
	REC_TABLE_UNKNOWN,   /* not asked for yet */
	REC_TABLE_NEED_FILE, /* not in the CFI cache: compiling it takes the file */
	REC_TABLE_COMPILING, /* being compiled by the worker thread (compile.c) */
	REC_TABLE_KNOWN,     /* table and base are final */
};

/* What pa-record learns about one mapped file (files.c). */
struct rec_file {
	uint64_t dev, ino;
	int bid_size; /* <= 0: the file has none, or could not be read */
	uint8_t bid[BID_MAX];
	bool opened; /* reached through its process: segs are read, a table can be made */
	struct rec_seg segs[REC_FILE_MAX_SEGS];
	int nsegs;
	int table_state; /* enum rec_table_state */
	uint32_t table;	 /* index into unwind_tables, or UNWIND_NO_TABLE */
	uint64_t base;	 /* table pc = link-time vaddr - base */
	bool is_python;	 /* a CPython interpreter (libpython, or python with it linked in) */
	struct cpython_elf py;
	struct cpython_layout pyl; /* is_python: its layout, if pyl_err is 0 */
	int pyl_err;
	/* --gpu: the CUDA launch APIs it defines (file offsets, PROFILE_GPU_API_*), and
	 * the driver calls giving kernels their handles (fn: PROFILE_GPU_FN_*) */
	struct {
		uint64_t off;
		uint64_t cookie; /* the uprobe's: api, for a launch PROFILE_GPU_COOKIE */
		uint8_t api;
		bool fn;
	} gpu[16];
	uint8_t ngpu;
	bool pa_gpu; /* --gpu: it carries the CUDA adapter's probes (bpf/gpu.h) */
};

/* Every file seen, indexed by device and inode. */
struct rec_files {
	struct rec_file *v;
	size_t n, cap;
	struct hidx idx;
	bool gpu;	  /* --gpu: look for the CUDA launch APIs in each file */
	uint64_t opens;	  /* files opened (each open counts) */
	uint64_t reopens; /* of which a file opened again for its unwind table */
};

/* How a mapped file is reached and recognized. */
struct rec_file_ref {
	pid_t pid;
	uint64_t start, end; /* the mapping: /proc/PID/map_files/START-END */
	const char *path;    /* as the process sees it: /proc/PID/root/PATH */
	uint32_t maj, min;
	uint64_t ino; /* 0: unknown, the file is not looked up by device and inode */
	bool deleted; /* its inode may name another file by now: not looked up either */
};

/* An off-CPU sample waiting for its deferred user stack (offcpu.c). */
struct rec_held {
	struct rec_held *next;
	uint64_t since; /* pa_now_ns() when it arrived */
	size_t size;
	struct profile_sample ps; /* the first size bytes are valid */
};

/* Side-band records of one round from all CPUs, to be handled in time order. */
struct rec_sb_ref {
	uint64_t time;
	size_t seq, off;
	int cpu_idx;
};
struct rec_sb_batch {
	char *buf;
	size_t len, cap;
	struct rec_sb_ref *idx;
	size_t n, cap_idx;
};

/* Who may be profiled (priv.c), decided once at startup. */
struct rec_priv {
	bool all;	 /* root, allowed by the administrator, or no capabilities held */
	uid_t uid;	 /* the real uid: without all, only its processes are profiled */
	uint64_t denied; /* targets that exec'd a privileged program, followed no more */
};

struct rec_session {
	struct rec_opts opts;
	volatile sig_atomic_t *stop; /* set by the signal handler */
	struct rec_priv priv;

	struct profile_bpf *skel;
	struct ring_buffer *rb;
	struct rec_cpu *cpus; /* online CPUs */
	int nr_cpus;
	int nr_possible;	    /* libbpf_num_possible_cpus(): per-CPU map width */
	struct rec_cpu **cpu_by_nr; /* [nr_possible], NULL for offline CPUs */

	struct pd_writer *w;
	struct rec_event *evs; /* the sampling events, none with --no-cpu */
	int nr_evs;
	uint64_t cpu_set[REC_MAX_CPUS / 64]; /* -C */
	struct rec_cgroups *cg;		     /* cgroup ids seen (cgroups.c) */
	int cgroup_mode;		     /* PROFILE_CGROUP_*: the hierarchy samples name */
	int off_evidx;			     /* offcpu-time, -1 without --offcpu */
	int gpu_evidx;			     /* gpu-launch, -1 without --gpu */
	int gpu_time_evidx;		     /* gpu-time, -1 without --gpu */
	struct perf_event_attr attr;	     /* the first event in perf.data */
	struct bpf_program *switch_prog; /* the loaded sched_switch program (tp_btf or raw_tp) */
	int switch_method;		 /* REC_SWITCH_* in use */
	bool open_waits;		 /* offcpu_open loaded: stretches open at the end */
	struct bpf_link *switch_link;	 /* sched_switch, while recording off-CPU */
	struct bpf_link *return_link;	 /* rseq_update or sys_exit: REC_SWITCH_RSEQ, _SYS_EXIT */
	struct bpf_link *exit_link;	 /* sched_process_exit: REC_SWITCH_RSEQ */
	uint64_t sched_lo, sched_hi;	 /* .sched.text: cut from off-CPU kernel stacks */

	struct rec_unwind *uw; /* CFI walker's tables, NULL with --unwind fp */
	struct rec_pidset targets;
	struct rec_files files;
	struct rec_sb_batch sb_batch;
	pid_t self;

	pid_t child; /* -- CMD, 0 if none */
	int child_status;
	bool child_done;
	int release_fd;	 /* child waits for our go on this pipe */
	int exec_err_fd; /* child reports execvp's errno here (CLOEXEC) */

	/* counters */
	uint64_t samples, lost, sb_lost, records_in_round;
	uint64_t off_samples, off_ns, off_lost, off_untracked, off_short, off_short_ns;
	uint64_t gpu_lost, gpu_rec_lost;    /* launches and GPU records BPF had no room for */
	uint64_t gpu_nested;		    /* driver launches the runtime made: counted once */
	uint64_t gpu_reused;		    /* launches over --gpu-stacks: a stack reused */
	uint64_t off_no_ustack;		    /* written without their deferred user stack */
	uint64_t off_untraced_in;	    /* stretches whose switch-in the tracepoint missed */
	uint64_t targets_lost;		    /* forked children not followed (targets map full) */
	uint64_t kstack_cut, ustack_cut;    /* stacks that filled PROFILE_MAX_FRAMES */
	uint64_t kstack_err, ustack_err;    /* samples whose stack capture failed */
	struct rec_held *held, **held_tail; /* arrival order */
	uint64_t start_ns, stop_ns;
	uint64_t zstd_in, zstd_out; /* -z: bytes of records, of COMPRESSED records */
	int write_err;		    /* first pd_write_* failure; stops the recording */
	struct rec_python *py;	    /* Python frames (python.c), NULL with --unwind fp */
	struct rec_synth *synth;    /* names of frames without a file (synthsym.c) */
	struct rec_gpu *gpu;	    /* CUDA launch probes (gpu.c), NULL without --gpu */
	uint64_t callchain[PROFILE_MAX_FRAMES + PROFILE_MAX_UFRAMES + PROFILE_MAX_PYFRAMES + 2];
};

/* caps.c: privileges and kernel features, before anything is loaded. */
int rec_check_privileges(const struct rec_opts *o);
/* Whether BPF programs can be loaded here (BTF and the capabilities), silently. */
bool rec_can_bpf(void);
/* Whether this process holds any capability (effective or permitted). */
bool rec_caps_held(void);
/* Every capability dropped (ambient, effective, permitted, inheritable).  0 or -errno. */
int rec_caps_drop(void);

/*
 * priv.c: who may be profiled (docs/privileges.md).  At startup: s->priv, and -p/-a
 * refused (said) where the user may not profile them.  0 or -errno.
 */
int rec_priv_init(struct rec_session *s);
/* Whether pid's memory, environment and files may be read, and probes attached for it:
 * always for root and allowed users; else only for the user's own dumpable processes. */
bool rec_may_profile(const struct rec_session *s, pid_t pid);
/* Side-band: pid exec'd.  True when the BPF side stopped following it (a privileged
 * program, bpf/profile.bpf.c on_exec): it is dropped here too. */
bool rec_priv_exec(struct rec_session *s, pid_t pid);

/* session.c */
int rec_cpus_init(struct rec_session *s);
int rec_bpf_open_load(struct rec_session *s);
int rec_events_open(struct rec_session *s);
int rec_events_enable(struct rec_session *s);
void rec_events_disable(struct rec_session *s);
int rec_target_add(struct rec_session *s, pid_t pid);
int rec_read_bpf_lost(struct rec_session *s, uint32_t slot, uint64_t *vals);
void rec_session_teardown(struct rec_session *s);

/* events.c: the sampling events. */
int rec_events_parse(struct rec_session *s);
int rec_events_open_cpu(struct rec_session *s, struct rec_cpu *c);
/* Enable (on) or disable every sampling event. */
int rec_events_start(struct rec_session *s, bool on);
void rec_events_close(struct rec_cpu *c);
void rec_events_free(struct rec_session *s);
/* session.c: one line for an event perf_event_open refused with err. */
void rec_event_open_error(const char *ev, int cpu, int err);

/* cgroups.c: the cgroup hierarchy samples name, each id's path as a CGROUP record. */
/* Before the BPF object is opened: s->cgroup_mode. */
int rec_cgroups_init(struct rec_session *s);
/* -G: how many cgroups it names; after load, their ids into the BPF filter. */
size_t rec_cgroups_allow_count(const struct rec_session *s);
int rec_cgroups_allow(struct rec_session *s);
/* A sample's cgroup id: its path written as a PERF_RECORD_CGROUP the first time. */
uint64_t rec_cgroup_of(struct rec_session *s, pid_t pid, pid_t tid, uint64_t time, uint64_t id);
/* After the last sample: the ids not resolved yet, looked up once more and written. */
int rec_cgroups_finish(struct rec_session *s);
void rec_cgroups_summary(const struct rec_session *s);
void rec_cgroups_free(struct rec_session *s);

/* sideband.c */
int rec_sideband_open(struct rec_session *s, struct rec_cpu *c);
void rec_sideband_close(struct rec_cpu *c);
int rec_sideband_drain(struct rec_session *s);
void rec_sideband_batch_free(struct rec_sb_batch *b);

/* target.c */
int rec_targets_check(const struct rec_opts *o);
int rec_cmd_fork(struct rec_session *s);
int rec_cmd_release(struct rec_session *s);
bool rec_targets_done(struct rec_session *s);
void rec_cmd_finish(struct rec_session *s);
int pidset_add(struct rec_pidset *ps, pid_t pid);
/* pid out of the set (its slot in pids[] reads 0 from then on). */
void pidset_del(struct rec_pidset *ps, pid_t pid);
bool pidset_has(const struct rec_pidset *ps, pid_t pid);
void pidset_free(struct rec_pidset *ps);

/* unwind.c: the CFI walker's tables and statistics. */
int rec_unwind_parse_mode(const char *arg, struct rec_opts *o);
const char *rec_unwind_opts_name(const struct rec_opts *o);
const char *rec_unwind_mode_name(uint32_t mode);
void rec_unwind_configure(struct rec_session *s);
int rec_unwind_init(struct rec_session *s);
int rec_unwind_add_pid(struct rec_session *s, pid_t pid);
/* Returns whether pid's unwind tables are to be loaded (this round). */
bool rec_unwind_note_mmap(struct rec_session *s, pid_t pid, uint32_t prot);
/*
 * f's unwind table into f->table/base (UNWIND_NO_TABLE when it has none), from the CFI
 * cache or compiled from fd.  stable: f is known by device and inode (not deleted);
 * then it compiles in the worker thread (REC_TABLE_COMPILING until the round that
 * loads it, which also puts it in unwind_files).  fd -1: the file is not open;
 * -EAGAIN when the table needs it (call again with it).  0 otherwise.
 */
int rec_unwind_file_table(struct rec_session *s, struct rec_file *f, int fd, const char *path,
			  bool stable);
void rec_unwind_publish_file(struct rec_session *s, const struct rec_file *f);
void rec_unwind_note_exit(struct rec_session *s, pid_t pid);
/* A sample sent with its stack slice: its user stack finished, written (or held). */
int rec_unwind_slice(struct rec_session *s, const void *data, size_t size);
/* After the side-band of a round: the tables compiled since the last round loaded. */
void rec_unwind_collect(struct rec_session *s);
/* At the end: wait (a few seconds at most) for the tables still compiling, and load them. */
void rec_unwind_collect_final(struct rec_session *s);
/* After rec_unwind_collect: the held slices written, unless tables are still compiling
 * (final: whatever is still held).  While slices are held, no round ends. */
int rec_unwind_flush_slices(struct rec_session *s, bool final);
bool rec_unwind_holding(const struct rec_session *s);
/* Side-band: the mappings of processes, for slices of those already gone. */
/* The side-band's mapping of pid holding addr (path borrowed); false if none. */
bool rec_unwind_sb_map(struct rec_session *s, pid_t pid, uint64_t addr, struct proc_map *m);
void rec_unwind_sb_exec(struct rec_session *s, pid_t pid, uint64_t time);
void rec_unwind_sb_fork(struct rec_session *s, pid_t pid, pid_t ppid, uint64_t time);
void rec_unwind_sb_mmap(struct rec_session *s, const struct pd_mmap *m);
void rec_unwind_sb_exit(struct rec_session *s, pid_t pid, uint64_t time);
void rec_unwind_round(struct rec_session *s);
void rec_unwind_summary(struct rec_session *s);
void rec_unwind_free(struct rec_session *s);

/* synthsym.c: one synthetic ELF file per capture names frames that have no file. */
int rec_synth_init(struct rec_session *s);
/* Function name of file (non-empty, or "<unknown>"), its lines from first: its id. */
int64_t rec_synth_fn(struct rec_session *s, const char *name, const char *file, int first);
/* The address of line of function fn (line <= 0: the function itself). */
uint64_t rec_synth_addr(struct rec_session *s, uint32_t fn, int line);
/* The file mapped in pid (a MMAP2 at time), once per image key (0: any image). */
void rec_synth_map(struct rec_session *s, pid_t pid, uint64_t key, uint64_t time);
/* pid exec'd: readers forgot its mappings. */
void rec_synth_exec(struct rec_session *s, pid_t pid);
/* Write the file, before perf.data closes. */
int rec_synth_finish(struct rec_session *s);
const char *rec_synth_path(const struct rec_session *s);
size_t rec_synth_nr_fns(const struct rec_session *s);
void rec_synth_free(struct rec_session *s);

/* gpu.c: CUDA kernel launches (--gpu), the gpu-launch event; with the CUDA adapter,
 * the GPU time of each kernel, copy and set as the gpu-time event. */
int rec_gpu_init(struct rec_session *s);
/* A file of r's process seen for the first time: its launch APIs probed. */
void rec_gpu_file(struct rec_session *s, struct rec_file *f, const struct rec_file_ref *r);
/* Called from read_segs with the file's ELF: its launch APIs' file offsets into f. */
void rec_gpu_probe_elf(Elf *e, struct rec_file *f);
/* Before -- CMD is forked: the CUDA adapter injected into it (CUDA_INJECTION64_PATH),
 * as pa-gpu-attach does, unless it is given another injection. */
void rec_gpu_inject(struct rec_session *s);
/* Before the targets run: the CUDA runtime libraries, the adapter and the command's
 * executable. */
void rec_gpu_preattach(struct rec_session *s);
int rec_gpu_launch(struct rec_session *s, const struct profile_sample *ps, size_t size);
/* The adapter's launch (PROFILE_KIND_GPU_CORR) and records (PROFILE_KIND_GPU_REC). */
int rec_gpu_corr(struct rec_session *s, const struct profile_sample *ps, size_t size);
int rec_gpu_rec(struct rec_session *s, const struct profile_gpu_rec *e, size_t size);
/* A kernel handle the driver gave out (PROFILE_KIND_GPU_FN), for its launches' names. */
int rec_gpu_fn(struct rec_session *s, const struct profile_gpu_fn *e, size_t size);
void rec_gpu_summary(const struct rec_session *s);
void rec_gpu_free(struct rec_session *s);

/* python.c: Python frames in samples. */
int rec_python_init(struct rec_session *s);
/* proc_load: executable mapping m of interpreter f in pid: its py_procs entry.
 * Whether its frames can be walked. */
bool rec_python_proc(struct rec_session *s, pid_t pid, const struct rec_file *f,
		     const struct proc_map *m);
/* proc_load: pid maps no interpreter (any more: it exec'd). */
void rec_python_gone(struct rec_session *s, pid_t pid);
void rec_python_fork(struct rec_session *s, pid_t pid, pid_t ppid);
/*
 * The user part of a sample's callchain into out (room entries): native frames
 * uips[0..nu), each _PyEval_EvalFrameDefault replaced by the Python frames (pairs
 * pyf[0..npy); cut: the walk stopped before the outermost) it ran.  Returns the
 * entries written.
 */
size_t rec_python_chain(struct rec_session *s, pid_t pid, const __u64 *pyf, size_t npy, bool cut,
			const __u64 *uips, size_t nu, uint64_t *out, size_t room);
void rec_python_summary(const struct rec_session *s);
void rec_python_free(struct rec_session *s);

/* dump.c: --dump. */
/* How long --dump records: long enough for a thread on a CPU to be sampled at 999 Hz. */
#define DUMP_WINDOW_NS 250000000ULL
/* Without BPF: the Python stacks of o->pids, read from /proc and their memory. */
int rec_dump(const struct rec_opts *o);
/* After the recording: each thread's last stack in s->opts.output, printed. */
int rec_dump_print(struct rec_session *s);

/* output.c: the perf.data stream, its events, trailers and round markers. */
int rec_output_open(struct rec_session *s);
int rec_output_attr(struct rec_session *s);
int rec_emit_round(struct rec_session *s);
/* The sample_id trailer for records about pid/tid at time on cpu (-1: unknown). */
void rec_sid(const struct rec_session *s, struct pd_sample_id *sid, uint32_t pid, uint32_t tid,
	     uint64_t time, int cpu);

/* synth.c: COMM, MMAP2 and the kernel map for what existed before sampling. */
int rec_synthesize(struct rec_session *s);
int rec_synthesize_pid(struct rec_session *s, pid_t pid);

/* samples.c: ring buffer samples as PERF_RECORD_SAMPLEs. */
int rec_handle_sample(void *ctx, void *data, size_t size);
int rec_write_sample(struct rec_session *s, const struct profile_sample *ps, size_t size,
		     const __u64 *uips, uint64_t nu, const struct profile_sample *pys,
		     size_t pys_size);
/* --offcpu from raw_tp: find .sched.text in /proc/kallsyms (best effort; always 0). */
int rec_sched_range(struct rec_session *s);

/* lost.c: BPF's drop counters as LOST_SAMPLES, the others summed. */
int rec_emit_bpf_lost(struct rec_session *s);

/*
 * files.c: the mapped file r names, opened once to learn its build-id and segments,
 * and with table (when unwinding by CFI) its unwind table.  NULL only without memory;
 * valid until the next call.
 */
const struct rec_file *rec_file_get(struct rec_session *s, const struct rec_file_ref *r,
				    bool table);
void rec_file_ref_map(struct rec_file_ref *r, pid_t pid, const struct proc_map *m);
/* -v: how many files, how many opens. */
void rec_files_summary(const struct rec_session *s);
void rec_files_free(struct rec_files *fs);

/* offcpu.c: off-CPU samples joined with the user stacks taken after them. */
int rec_offcpu_hold(struct rec_session *s, const struct profile_sample *ps, size_t size);
int rec_offcpu_ustack(struct rec_session *s, const struct profile_sample *us, size_t size);
int rec_offcpu_flush(struct rec_session *s, bool all);
void rec_offcpu_open_waits(struct rec_session *s);
void rec_offcpu_free(struct rec_session *s);

/* pmu.c: --pmu, the counting mode: s's options, targets and CMD; its own BPF object. */
int rec_pmu_main(struct rec_session *s);

#endif /* PA_RECORD_H */
