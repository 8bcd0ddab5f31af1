// SPDX-License-Identifier: Apache-2.0
/*
 * CUDA kernel launches (--gpu), seen without any help from the process: a uprobe on
 * each launch API of the CUDA runtime, in libcudart.so or linked into the
 * executable (nvcc's default), attached as the files are first seen in a target.
 * The BPF program (on_gpu_launch) takes the launching thread's stack and the
 * launched kernel's host-side function; here the function is named (its symbol,
 * demangled), and each launch becomes one gpu-launch sample:
 *
 *	[gpu:kernel] vec_add(float const*, float const*, float*, int)
 *	[gpu:launch]
 *	cudaLaunchKernel ... step ... main
 *
 * Both frames are functions of the capture's synthetic ELF file (synthsym.c).
 *
 * With the CUDA adapter in a process (cmd/gpu-attach, its USDT probes in bpf/gpu.h),
 * each launch also gets its correlation id (on_gpu_corr: the uprobe's stack, taken
 * once, or the probe's own for a driver API launch), and each GPU activity record
 * with that id becomes a gpu-time sample under the same stack, weighed by its ns on
 * the GPU.  Records no launch claims go under [gpu:unmatched].
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <gelf.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/procfs.h"
#include "base/util.h"
#include "perfdata/pd_write.h"
#include "symbolize/demangle.h"
#include "symbolize/symtab.h"
#include "profile.skel.h"
#include "record.h"

#define GPU_MAX_LINKS 256

_Static_assert((int)PA_GPU_KERNEL == (int)GPU_OP_KERNEL &&
		       (int)PA_GPU_MEMCPY == (int)GPU_OP_MEMCPY &&
		       (int)PA_GPU_MEMSET == (int)GPU_OP_MEMSET,
	       "a gpu-time sample's RAW says what its adapter record said");

/* The launch APIs, as the runtime and the driver define them (and their
 * per-thread-stream twins), then the driver calls that hand out kernel handles. */
static const struct {
	const char *name;
	uint8_t api;
	bool fn; /* api is a PROFILE_GPU_FN_* */
} gpu_apis[] = {
	{"cudaLaunchKernel", PROFILE_GPU_API_LAUNCH, false},
	{"cudaLaunchKernel_ptsz", PROFILE_GPU_API_LAUNCH, false},
	{"cudaLaunchCooperativeKernel", PROFILE_GPU_API_COOP, false},
	{"cudaLaunchCooperativeKernel_ptsz", PROFILE_GPU_API_COOP, false},
	{"cudaLaunchKernelExC", PROFILE_GPU_API_LAUNCH_EX, false},
	{"cudaLaunchKernelExC_ptsz", PROFILE_GPU_API_LAUNCH_EX, false},
	{"cudaGraphLaunch", PROFILE_GPU_API_GRAPH, false},
	{"cudaGraphLaunch_ptsz", PROFILE_GPU_API_GRAPH, false},
	{"cuLaunchKernel", PROFILE_GPU_API_CU_LAUNCH, false},
	{"cuLaunchKernel_ptsz", PROFILE_GPU_API_CU_LAUNCH, false},
	{"cuLaunchCooperativeKernel", PROFILE_GPU_API_CU_LAUNCH, false},
	{"cuLaunchCooperativeKernel_ptsz", PROFILE_GPU_API_CU_LAUNCH, false},
	{"cuLaunchKernelEx", PROFILE_GPU_API_CU_LAUNCH_EX, false},
	{"cuLaunchKernelEx_ptsz", PROFILE_GPU_API_CU_LAUNCH_EX, false},
	{"cuGraphLaunch", PROFILE_GPU_API_CU_GRAPH, false},
	{"cuGraphLaunch_ptsz", PROFILE_GPU_API_CU_GRAPH, false},
	{"cuModuleGetFunction", PROFILE_GPU_FN_MODULE, true},
	{"cuLibraryGetKernel", PROFILE_GPU_FN_LIBRARY, true},
	{"cuKernelGetFunction", PROFILE_GPU_FN_KERNEL, true},
};

/* A launched function, named: (pid, address) -> synthetic function.  drv: func is a
 * driver's handle (CUfunction, CUkernel), else the kernel's host-side function. */
struct gpu_kernel {
	pid_t pid;
	bool drv;
	uint64_t func;
	int64_t fn;
};

/*
 * The symbol tables of the files kernels were launched from, by device and inode, the
 * last GPU_SYMTABS used: a PyTorch build launches hundreds of kernels from one
 * libtorch_cuda.so, whose table is loaded once.
 */
#define GPU_SYMTABS 4

struct gpu_symtab {
	uint64_t dev, ino;
	struct symtab *st; /* NULL: not loadable */
	uint64_t used;
};

/* A launch's stack below [gpu:launch]: callchain entries, leaf first. */
struct gpu_chain {
	uint64_t *ips;
	uint32_t n;
};

/*
 * The last launch a thread's uprobe walked, for the adapter's probe that follows.
 * handle: a driver launch's handle not named yet (0 if none), which its record will.
 */
struct gpu_last {
	pid_t tid;
	uint64_t handle;
	struct gpu_chain chain;
};

/* A launch the adapter named, until its records are in: (pid, correlation id). */
struct gpu_pending {
	pid_t pid;
	uint64_t corr, time, handle;
	struct gpu_chain chain;
};

/*
 * The last stack walked in a thread for a kernel launched through an API (api
 * PROFILE_GPU_API_NR: any kernel, any API), for the thread's launches over
 * --gpu-stacks: (pid, tid, func, api) -> chain.
 */
struct gpu_recent {
	pid_t pid, tid;
	uint64_t func;
	uint8_t api;
	struct gpu_chain chain;
};

/* Kept at most; then all go, and the next launch of each walks again. */
#define GPU_RECENT_MAX (64u << 10)

/* A kernel, copy or set by its record's name: the synthetic function naming it. */
struct gpu_name {
	char *name;
	int64_t fn;
};

/* Launches kept waiting for records at most (oldest first out), and how long. */
#define GPU_PENDING_MAX	 (256u << 10)
#define GPU_PENDING_NS	 (30ULL * 1000000000)
#define GPU_LAST_THREADS 4096

struct rec_gpu {
	struct bpf_link *links[GPU_MAX_LINKS];
	size_t nr_links;
	int64_t launch_fn, graph_fn, unknown_fn, unmatched_fn;

	struct gpu_last last[GPU_LAST_THREADS]; /* by tid % GPU_LAST_THREADS */
	struct gpu_pending *pending;
	size_t nr_pending, cap_pending;
	struct hidx pending_idx;
	struct gpu_name *names;
	size_t nr_names, cap_names;
	struct hidx name_idx;
	uint64_t timed, timed_ns, unmatched, unpaired, adapter_files, unobserved;

	struct gpu_kernel *kernels;
	size_t nr_kernels, cap_kernels;
	struct hidx kernel_idx;
	struct gpu_symtab symtabs[GPU_SYMTABS];
	uint64_t clock;

	uint64_t launches, unnamed, attach_failed, attach_denied, files;
	uint64_t handles; /* kernel handles the driver gave out */

	struct gpu_recent *recent;
	size_t nr_recent, cap_recent;
	struct hidx recent_idx;
	uint64_t no_stack; /* launches over --gpu-stacks with no stack walked before */
};

/* A probe not attached: counted, and whether the kernel said no to our privileges. */
static void attach_fail(struct rec_gpu *g)
{
	g->attach_failed++;
	if (errno == EACCES || errno == EPERM)
		g->attach_denied++;
}

int rec_gpu_init(struct rec_session *s)
{
	struct rec_gpu *g;

	if (!s->opts.gpu)
		return 0;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->launch_fn = rec_synth_fn(s, "[gpu:launch]", "<gpu>", 0);
	g->graph_fn = rec_synth_fn(s, "[gpu:kernel] <CUDA graph>", "<gpu>", 0);
	g->unknown_fn = rec_synth_fn(s, "[gpu:kernel] <unknown>", "<gpu>", 0);
	g->unmatched_fn = rec_synth_fn(s, "[gpu:unmatched]", "<gpu>", 0);
	if (g->launch_fn < 0 || g->graph_fn < 0 || g->unknown_fn < 0 || g->unmatched_fn < 0) {
		free(g);
		return -ENOMEM;
	}
	s->gpu = g;
	return 0;
}

/* Whether e has the CUDA adapter's USDT probes: a stapsdt note of provider pa_gpu. */
static bool has_adapter_probes(Elf *e)
{
	static const char key[] = "pa_gpu\0launch"; /* provider, then probe name */
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(name = elf_strptr(e, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".note.stapsdt") || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		if (memmem(d->d_buf, d->d_size, key, sizeof(key)))
			return true;
	}
	return false;
}

/* The entry of gpu_apis named name, or -1: every name probed starts "cu" then
 * "da", 'L', 'G', 'M' or 'K', a cheap reject for the other symbols of a file. */
static int gpu_api_of(const char *name)
{
	size_t k;

	if (name[0] != 'c' || name[1] != 'u' ||
	    !(name[2] == 'L' || name[2] == 'G' || name[2] == 'M' || name[2] == 'K' ||
	      (name[2] == 'd' && name[3] == 'a')))
		return -1;
	for (k = 0; k < sizeof(gpu_apis) / sizeof(gpu_apis[0]); k++)
		if (!strcmp(name, gpu_apis[k].name))
			return (int)k;
	return -1;
}

static uint64_t cookie_span(uint64_t n)
{
	return n < PROFILE_GPU_COOKIE_MAX ? n : PROFILE_GPU_COOKIE_MAX;
}

/* The executable segment of f holding vaddr, or NULL. */
static const struct rec_seg *exec_seg_of(const struct rec_file *f, uint64_t vaddr)
{
	int j;

	for (j = 0; j < f->nsegs; j++)
		if (f->segs[j].exec && vaddr >= f->segs[j].vaddr &&
		    vaddr < f->segs[j].vaddr + f->segs[j].filesz)
			return &f->segs[j];
	return NULL;
}

/* The CUDA runtime's and driver's APIs that e defines, as file offsets into f->gpu;
 * whether it has the adapter's probes, into f->pa_gpu. */
void rec_gpu_probe_elf(Elf *e, struct rec_file *f)
{
	static const Elf64_Word types[] = {SHT_DYNSYM, SHT_SYMTAB};
	size_t t;

	f->ngpu = 0;
	f->pa_gpu = false;
	for (t = 0; t < 2; t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			size_t i, n, k;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != types[t] || !sh.sh_entsize ||
			    !(d = elf_getdata(scn, NULL)))
				continue;
			n = d->d_size / sh.sh_entsize;
			for (i = 0; i < n; i++) {
				const struct rec_seg *seg;
				GElf_Sym sym;
				const char *name;
				uint64_t off, cookie;
				int a;

				if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value ||
				    !(name = elf_strptr(e, sh.sh_link, sym.st_name)) ||
				    (a = gpu_api_of(name)) < 0 ||
				    !(seg = exec_seg_of(f, sym.st_value)))
					continue;
				off = sym.st_value - seg->vaddr + seg->off;
				for (k = 0; k < f->ngpu && f->gpu[k].off != off; k++)
					;
				if (k < f->ngpu || f->ngpu == sizeof(f->gpu) / sizeof(f->gpu[0]))
					continue;
				/* A launch's cookie says where the code around it lies (a
				 * runtime's, for the driver's probe to tell its calls). */
				cookie = gpu_apis[a].api;
				if (!gpu_apis[a].fn)
					cookie = PROFILE_GPU_COOKIE(
						cookie, cookie_span(off - seg->off),
						cookie_span(seg->off + seg->filesz - off));
				f->gpu[f->ngpu].off = off;
				f->gpu[f->ngpu].cookie = cookie;
				f->gpu[f->ngpu].api = gpu_apis[a].api;
				f->gpu[f->ngpu++].fn = gpu_apis[a].fn;
			}
		}
	}
	f->pa_gpu = has_adapter_probes(e);
}

/* The adapter's two probes in the file at path (shown as name), for every process. */
static void attach_adapter(struct rec_session *s, const char *path, const char *name)
{
	static const char *const probes[] = {"launch", "records"};
	struct rec_gpu *g = s->gpu;
	struct bpf_program *progs[] = {s->skel->progs.on_gpu_corr, s->skel->progs.on_gpu_records};
	size_t i;

	for (i = 0; i < 2; i++) {
		struct bpf_link *l;

		if (g->nr_links == GPU_MAX_LINKS) {
			g->attach_failed++;
			continue;
		}
		l = bpf_program__attach_usdt(progs[i], -1, path, "pa_gpu", probes[i], NULL);
		if (!l) {
			attach_fail(g);
			if (s->opts.verbose)
				pa_warn("gpu: cannot attach to pa_gpu:%s in %s: %s", probes[i],
					name, strerror(errno));
			continue;
		}
		g->links[g->nr_links++] = l;
	}
	g->adapter_files++;
	/* From now on the uprobe notes each launch for the adapter's probe to take. */
	s->skel->bss->gpu_adapter = true;
	if (s->opts.verbose)
		pa_info("gpu: the CUDA adapter's probes attached in %s", name);
}

/* prog as a uprobe (or a uretprobe) at file offset off of path (r's file); false if not. */
static bool attach_at(struct rec_session *s, struct bpf_program *prog, const char *path,
		      const struct rec_file_ref *r, uint64_t off, uint64_t cookie, bool retprobe)
{
	struct bpf_uprobe_opts uo = {.sz = sizeof(uo), .bpf_cookie = cookie, .retprobe = retprobe};
	struct rec_gpu *g = s->gpu;
	struct bpf_link *l;

	if (g->nr_links == GPU_MAX_LINKS) {
		g->attach_failed++;
		return false;
	}
	l = bpf_program__attach_uprobe_opts(prog, -1, path, off, &uo);
	if (!l) {
		attach_fail(g);
		if (s->opts.verbose)
			pa_warn("gpu: cannot probe %s at %#llx: %s", r->path,
				(unsigned long long)off, strerror(errno));
		return false;
	}
	g->links[g->nr_links++] = l;
	return true;
}

void rec_gpu_file(struct rec_session *s, struct rec_file *f, const struct rec_file_ref *r)
{
	struct rec_gpu *g = s->gpu;
	char path[4200];
	int i, nfn = 0;

	/* Probes go on the file, for every process: attached for one the user may profile. */
	if (!g || (!f->ngpu && !f->pa_gpu) || (r->pid != getpid() && !rec_may_profile(s, r->pid)))
		return;
	/* By the process's own view of the file: the uprobe goes on its inode. */
	if (r->pid == getpid())
		snprintf(path, sizeof(path), "%s", r->path);
	else
		snprintf(path, sizeof(path), "/proc/%d/root%s", r->pid, r->path);
	if (f->ngpu)
		g->files++;
	for (i = 0; i < f->ngpu; i++) {
		uint64_t off = f->gpu[i].off, cookie = f->gpu[i].cookie;

		/* A call handing out a kernel handle, at its entry and its return. */
		if (f->gpu[i].fn) {
			nfn++;
			if (attach_at(s, s->skel->progs.on_gpu_fn, path, r, off, cookie, false))
				attach_at(s, s->skel->progs.on_gpu_fn_ret, path, r, off, cookie,
					  true);
			continue;
		}
		/* From now on each runtime launch is noted for the driver's probe. */
		if (attach_at(s, s->skel->progs.on_gpu_launch, path, r, off, cookie, false) &&
		    PROFILE_GPU_API_DRIVER(f->gpu[i].api))
			s->skel->bss->gpu_driver = true;
	}
	if (f->pa_gpu)
		attach_adapter(s, path, r->path);
	if (s->opts.verbose && f->ngpu)
		pa_info("gpu: %d CUDA launch APIs probed in %s%s", f->ngpu - nfn, r->path,
			nfn ? ", with the driver calls naming kernels" : "");
}

/* The file at path (ours to open), probed as if a target mapped it. */
static void probe_path(struct rec_session *s, const char *name)
{
	char path[PATH_MAX];
	struct rec_file_ref r = {.pid = getpid(), .path = path};
	struct stat st;

	if (!realpath(name, path) || stat(path, &st) || !S_ISREG(st.st_mode))
		return;
	r.maj = major(st.st_dev);
	r.min = minor(st.st_dev);
	r.ino = st.st_ino;
	/* Its unwind table too: a launch is walked by it from the first one. */
	rec_file_get(s, &r, true);
}

#define ADAPTER "libpa-gpu-adapter.so"

void rec_gpu_inject(struct rec_session *s)
{
	const char *old = getenv("CUDA_INJECTION64_PATH");
	char path[PATH_MAX];

	if (!s->gpu || !s->opts.cmd_argv ||
	    !pa_find_libfile(ADAPTER, "PA_GPU_ADAPTER", path, sizeof(path)))
		return;
	if (old && *old && strcmp(old, path))
		pa_warn("gpu: CUDA_INJECTION64_PATH is set (%s): the CUDA adapter is not injected, "
			"so launches are counted, not timed",
			old);
	else if (!setenv("CUDA_INJECTION64_PATH", path, 1) && s->opts.verbose)
		pa_info("gpu: the command runs with the CUDA adapter (%s)", path);
}

/* The CUDA adapter's probes, attached before any target loads it. */
static void preattach_adapter(struct rec_session *s)
{
	char path[PATH_MAX];

	if (pa_find_libfile(ADAPTER, "PA_GPU_ADAPTER", path, sizeof(path)))
		probe_path(s, path);
}

/* The CUDA runtimes and drivers in directory dir, probed as if a target mapped them. */
static void probe_dir(struct rec_session *s, const char *dir, size_t len)
{
	static const char *const libs[] = {"libcudart.so*", "libcuda.so*"};
	char pat[4200];
	size_t i, j;

	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		glob_t gl;

		snprintf(pat, sizeof(pat), "%.*s/%s", (int)len, dir, libs[i]);
		if (glob(pat, 0, NULL, &gl))
			continue;
		for (j = 0; j < gl.gl_pathc && j < 64; j++)
			probe_path(s, gl.gl_pathv[j]);
		globfree(&gl);
	}
}

/*
 * Before the targets run: the CUDA runtimes and drivers a process may load, and the
 * command's executable (nvcc links the runtime in).  A library is seen in a target
 * only once it is mapped and pa-record has read the side-band, by which time a short
 * program may have launched all it launches; a uprobe goes on the file, for every
 * process.
 */
void rec_gpu_preattach(struct rec_session *s)
{
	static const char *const dirs[] = {
		"/usr/local/cuda/lib64",
		"/usr/local/cuda/lib",
		"/usr/local/cuda-*/lib64",
		"/usr/local/cuda-*/lib",
		"/usr/lib/x86_64-linux-gnu",
		"/usr/lib64",
		"/usr/lib",
	};
	const char *ld = getenv("LD_LIBRARY_PATH"), *cmd;
	char pat[4200];
	size_t i;

	if (!s->gpu)
		return;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		probe_dir(s, dirs[i], strlen(dirs[i]));
	/* LD_LIBRARY_PATH's directories, as the command will see them */
	for (i = 0; ld && *ld && i < 16; i++) {
		size_t n = strcspn(ld, ":");

		if (n)
			probe_dir(s, ld, n);
		ld += n + (ld[n] == ':');
	}
	preattach_adapter(s);
	cmd = s->opts.cmd_argv ? s->opts.cmd_argv[0] : NULL;
	if (cmd && strchr(cmd, '/')) {
		probe_path(s, cmd);
	} else if (cmd) {
		const char *path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";

		while (*path) {
			size_t n = strcspn(path, ":");

			snprintf(pat, sizeof(pat), "%.*s/%s", (int)n, path, cmd);
			if (!access(pat, X_OK)) {
				probe_path(s, pat);
				break;
			}
			path += n + (path[n] == ':');
		}
	}
	/* Tables not in the CFI cache yet are compiled before the command starts. */
	rec_unwind_collect_final(s);
}

static bool kernel_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct rec_gpu *g = ctx;
	const struct gpu_kernel *k = key;

	return g->kernels[id].pid == k->pid && g->kernels[id].func == k->func &&
	       g->kernels[id].drv == k->drv;
}

static uint64_t kernel_hash(const struct gpu_kernel *k)
{
	return hash_mix(hash_mix(0, (uint64_t)k->pid << 1 | k->drv), k->func);
}

/* The entry of k's function, or -1. */
static int64_t kernel_find(struct rec_gpu *g, const struct gpu_kernel *k)
{
	return hidx_find(&g->kernel_idx, kernel_hash(k), kernel_eq, g, k);
}

/* k kept (out of memory: not, and its function is named again next time). */
static void kernel_add(struct rec_gpu *g, const struct gpu_kernel *k)
{
	if (!pa_grow((void **)&g->kernels, &g->cap_kernels, g->nr_kernels + 1,
		     sizeof(*g->kernels)) &&
	    !hidx_insert(&g->kernel_idx, kernel_hash(k), g->nr_kernels))
		g->kernels[g->nr_kernels++] = *k;
}

static struct symtab *symtab_of(struct rec_gpu *g, pid_t pid, const struct proc_map *m)
{
	uint64_t dev = makedev(m->maj, m->min);
	struct gpu_symtab *e = &g->symtabs[0];
	char p[4200];
	struct stat sb;
	size_t i;

	for (i = 0; i < GPU_SYMTABS; i++) {
		if (g->symtabs[i].used && g->symtabs[i].dev == dev && g->symtabs[i].ino == m->ino) {
			g->symtabs[i].used = ++g->clock;
			return g->symtabs[i].st;
		}
		if (g->symtabs[i].used < e->used)
			e = &g->symtabs[i];
	}
	symtab_free(e->st);
	*e = (struct gpu_symtab){dev, m->ino, NULL, ++g->clock};
	snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", pid, (unsigned long long)m->start,
		 (unsigned long long)m->end);
	e->st = symtab_load_elf(p);
	if (!e->st) {
		snprintf(p, sizeof(p), "/proc/%d/root%s", pid, m->path);
		e->st = symtab_load_elf(p);
	}
	/* Gone: the path, if it is still the file that was mapped. */
	if (!e->st && !stat(m->path, &sb) && sb.st_ino == m->ino && sb.st_dev == dev)
		e->st = symtab_load_elf(m->path);
	return e->st;
}

/* The symbol at file offset off of the file mapped as m in pid, demangled, into buf. */
static bool name_at(struct rec_gpu *g, pid_t pid, const struct proc_map *m, uint64_t off, char *buf,
		    size_t len)
{
	struct symtab *st = symtab_of(g, pid, m);
	const struct sym *sym;
	uint64_t va;

	if (!st || symtab_offset_to_vaddr(st, off, &va) || !(sym = symtab_lookup(st, va)))
		return false;
	snprintf(buf, len, "[gpu:kernel] %s", symtab_sym_demangled(st, sym));
	return true;
}

/*
 * The symbol at address func of process pid, demangled, into buf; false if none.  By
 * its mappings, or the side-band's once it has exited.
 */
static bool func_name(struct rec_session *s, pid_t pid, uint64_t func, char *buf, size_t len)
{
	struct proc_map *maps = NULL, sbm;
	int n = proc_read_maps(pid, false, &maps), i;

	for (i = 0; i < n; i++) {
		const struct proc_map *m = &maps[i];
		bool found;

		if (func < m->start || func >= m->end || m->path[0] != '/')
			continue;
		found = name_at(s->gpu, pid, m, func - m->start + m->pgoff, buf, len);
		proc_maps_free(maps, n);
		return found;
	}
	if (n > 0)
		proc_maps_free(maps, n);
	return rec_unwind_sb_map(s, pid, func, &sbm) && sbm.path && sbm.path[0] == '/' &&
	       name_at(s->gpu, pid, &sbm, func - sbm.start + sbm.pgoff, buf, len);
}

/*
 * The synthetic function naming the kernel launched at func in pid: a host function,
 * or for a driver API a handle named when the driver handed it out (unknown if that
 * was before pa-record attached).
 */
static int64_t kernel_fn(struct rec_session *s, pid_t pid, uint64_t func, uint8_t api)
{
	struct rec_gpu *g = s->gpu;
	struct gpu_kernel k = {pid, PROFILE_GPU_API_DRIVER(api), func, -1};
	int64_t id;
	char name[1024];

	if (api == PROFILE_GPU_API_GRAPH || api == PROFILE_GPU_API_CU_GRAPH)
		return g->graph_fn;
	if (!func)
		return g->unknown_fn;
	id = kernel_find(g, &k);
	if (id >= 0)
		return g->kernels[id].fn;
	if (!k.drv && func_name(s, pid, func, name, sizeof(name)))
		k.fn = rec_synth_fn(s, name, "<gpu>", 0);
	if (k.fn < 0)
		k.fn = g->unknown_fn;
	if (k.fn == g->unknown_fn)
		g->unnamed++;
	kernel_add(g, &k);
	return k.fn;
}

/*
 * The launching thread's stack of sample ps, root last, into out[0..max): its user
 * ips with its Python frames in place.  Returns the number of entries.
 */
static size_t launch_stack(struct rec_session *s, const struct profile_sample *ps, size_t size,
			   uint64_t *out, size_t max)
{
	uint64_t room = (size - PROFILE_SAMPLE_HDR_SIZE) / sizeof(__u64);
	size_t nu = ps->nr_user < room ? ps->nr_user : room, npy = 0, n;

	/* no kernel frames: Python pairs follow the user ips */
	if (ps->nr_py && nu < room)
		npy = ps->nr_py < (room - nu) / 2 ? ps->nr_py : (room - nu) / 2;
	n = rec_python_chain(s, ps->pid, npy ? ps->ips + nu : NULL, npy,
			     (ps->flags & PROFILE_F_PY_CUT) != 0, ps->ips, nu, out, max);
	/* The probed API's entry (or the probe's site), no longer the leaf: readers take
	 * pc - 1 for a caller's frame, which would fall before the function. */
	if (n)
		out[0]++;
	return n;
}

static const struct rec_cpu *cpu_of(const struct rec_session *s, uint32_t cpu)
{
	return cpu < (uint32_t)s->nr_possible && s->cpu_by_nr[cpu] ? s->cpu_by_nr[cpu]
								   : &s->cpus[0];
}

/* Write one sample of event evidx (id) in pid/tid: [kernel fn] [top fn] stack... */
static int write_gpu_sample(struct rec_session *s, int evidx, uint64_t id, pid_t pid, pid_t tid,
			    uint32_t cpu, uint64_t time, uint64_t period, int64_t fn, int64_t top,
			    const uint64_t *stack, size_t nstack, const struct gpu_raw *raw)
{
	uint64_t *cc = s->callchain;
	size_t max = sizeof(s->callchain) / sizeof(*cc), n = 0;
	struct pd_sample smp = {};
	int err;

	/* Before the sample, in time order: both frames are in the synthetic file. */
	rec_synth_map(s, pid, 0, time > 0 ? time - 1 : 0);
	cc[n++] = PERF_CONTEXT_USER;
	cc[n++] = rec_synth_addr(s, (uint32_t)fn, 0);
	cc[n++] = rec_synth_addr(s, (uint32_t)top, 0);
	if (nstack > max - n)
		nstack = max - n;
	if (nstack)
		memcpy(cc + n, stack, nstack * sizeof(*cc));
	n += nstack;
	smp.ip = cc[1];
	smp.misc = PERF_RECORD_MISC_USER;
	smp.pid = pid;
	smp.tid = tid;
	smp.time = time;
	smp.cpu = cpu;
	smp.period = period;
	smp.nr_ips = n;
	smp.ips = cc;
	smp.id = id;
	if (raw) {
		smp.raw = raw;
		smp.raw_size = sizeof(*raw);
	}
	err = pd_write_sample(s->w, evidx, &smp);
	if (err) {
		s->write_err = err;
		return err;
	}
	s->records_in_round++;
	return 0;
}

/* A copy of stack[0..n) as a chain; false when out of memory. */
static bool chain_set(struct gpu_chain *c, const uint64_t *stack, size_t n)
{
	free(c->ips);
	c->ips = n ? malloc(n * sizeof(*c->ips)) : NULL;
	c->n = c->ips ? n : 0;
	if (c->ips)
		memcpy(c->ips, stack, n * sizeof(*c->ips));
	return !n || c->ips;
}

static bool recent_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct gpu_recent *a = &((const struct rec_gpu *)ctx)->recent[id], *b = key;

	return a->pid == b->pid && a->tid == b->tid && a->func == b->func && a->api == b->api;
}

static uint64_t recent_hash(const struct gpu_recent *r)
{
	return hash_mix(hash_mix(hash_mix(0, (uint64_t)r->pid << 32 | (uint32_t)r->tid), r->func),
			r->api);
}

static struct gpu_recent *recent_get(struct rec_gpu *g, pid_t pid, pid_t tid, uint64_t func,
				     uint8_t api)
{
	struct gpu_recent key = {pid, tid, func, api, {0}};
	int64_t id = hidx_find(&g->recent_idx, recent_hash(&key), recent_eq, g, &key);

	return id >= 0 ? &g->recent[id] : NULL;
}

static void recent_free(struct rec_gpu *g)
{
	size_t i;

	for (i = 0; i < g->nr_recent; i++)
		free(g->recent[i].chain.ips);
	g->nr_recent = 0;
	hidx_free(&g->recent_idx);
}

/* stack[0..n) as the last walked in tid for func launched through api. */
static void recent_put(struct rec_gpu *g, pid_t pid, pid_t tid, uint64_t func, uint8_t api,
		       const uint64_t *stack, size_t n)
{
	struct gpu_recent *r = recent_get(g, pid, tid, func, api), key = {pid, tid, func, api, {0}};

	if (r) {
		chain_set(&r->chain, stack, n);
		return;
	}
	if (g->nr_recent == GPU_RECENT_MAX)
		recent_free(g);
	if (pa_grow((void **)&g->recent, &g->cap_recent, g->nr_recent + 1, sizeof(*g->recent)) ||
	    !chain_set(&key.chain, stack, n))
		return;
	if (hidx_insert(&g->recent_idx, recent_hash(&key), g->nr_recent)) {
		free(key.chain.ips);
		return;
	}
	g->recent[g->nr_recent++] = key;
}

/*
 * The stack of launch ps into stack[0..max): walked, or for a launch over
 * --gpu-stacks the last walked in its thread for its kernel and API, else for any.
 */
static size_t launch_or_recent_stack(struct rec_session *s, const struct profile_sample *ps,
				     size_t size, uint64_t *stack, size_t max)
{
	struct rec_gpu *g = s->gpu;
	const struct gpu_recent *r;
	size_t n;

	if (!(ps->flags & PROFILE_F_STACK_REUSED)) {
		n = launch_stack(s, ps, size, stack, max);
		if (s->opts.gpu_stacks) {
			recent_put(g, ps->pid, ps->tid, ps->period, ps->state, stack, n);
			recent_put(g, ps->pid, ps->tid, 0, PROFILE_GPU_API_NR, stack, n);
		}
		return n;
	}
	r = recent_get(g, ps->pid, ps->tid, ps->period, ps->state);
	if (!r)
		r = recent_get(g, ps->pid, ps->tid, 0, PROFILE_GPU_API_NR);
	if (!r) {
		g->no_stack++;
		return 0;
	}
	n = r->chain.n < max ? r->chain.n : max;
	if (n)
		memcpy(stack, r->chain.ips, n * sizeof(*stack));
	return n;
}

int rec_gpu_launch(struct rec_session *s, const struct profile_sample *ps, size_t size)
{
	struct rec_gpu *g = s->gpu;
	uint64_t stack[PROFILE_MAX_UFRAMES + PROFILE_MAX_PYFRAMES];
	struct gpu_last *last;
	int64_t fn;
	size_t n;
	int err;

	if (!g || s->gpu_evidx < 0 || size < PROFILE_SAMPLE_HDR_SIZE)
		return 0;
	n = launch_or_recent_stack(s, ps, size, stack, sizeof(stack) / sizeof(*stack));
	fn = kernel_fn(s, ps->pid, ps->period, ps->state);
	err = write_gpu_sample(s, s->gpu_evidx, cpu_of(s, ps->cpu)->gpu_id, ps->pid, ps->tid,
			       ps->cpu, ps->time, 1, fn, g->launch_fn, stack, n, NULL);
	if (err)
		return err;
	g->launches++;
	/* The adapter's launch probe, if it is in this process, comes next in this
	 * thread and takes this stack (the BPF side pairs them). */
	if (g->adapter_files) {
		last = &g->last[ps->tid % GPU_LAST_THREADS];
		last->tid = chain_set(&last->chain, stack, n) ? ps->tid : 0;
		last->handle =
			PROFILE_GPU_API_DRIVER(ps->state) && fn == g->unknown_fn ? ps->period : 0;
	}
	return 0;
}

static bool pending_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct gpu_pending *a = &((const struct rec_gpu *)ctx)->pending[id], *b = key;

	return a->pid == b->pid && a->corr == b->corr;
}

static uint64_t pending_hash(pid_t pid, uint64_t corr)
{
	return hash_mix(hash_mix(0, (uint64_t)pid), corr);
}

/* Make room: launches waiting longer than GPU_PENDING_NS go, then the older half.
 * Their records, if they still come, are unmatched.  The index is rebuilt. */
static void pending_evict(struct rec_gpu *g, uint64_t now)
{
	uint64_t cut = now > GPU_PENDING_NS ? now - GPU_PENDING_NS : 0;
	size_t i, k = 0;

	if (g->nr_pending && g->pending[g->nr_pending / 2].time > cut)
		cut = g->pending[g->nr_pending / 2].time;
	hidx_free(&g->pending_idx);
	for (i = 0; i < g->nr_pending; i++) {
		if (g->pending[i].time < cut) {
			free(g->pending[i].chain.ips);
			continue;
		}
		g->pending[k] = g->pending[i];
		if (hidx_insert(&g->pending_idx,
				pending_hash(g->pending[k].pid, g->pending[k].corr), k))
			free(g->pending[k].chain.ips);
		else
			k++;
	}
	g->nr_pending = k;
}

int rec_gpu_corr(struct rec_session *s, const struct profile_sample *ps, size_t size)
{
	struct rec_gpu *g = s->gpu;
	uint64_t stack[PROFILE_MAX_UFRAMES + PROFILE_MAX_PYFRAMES];
	struct gpu_pending key = {.pid = ps->pid, .corr = ps->period, .time = ps->time};
	struct gpu_last *last = g ? &g->last[ps->tid % GPU_LAST_THREADS] : NULL;
	int64_t id;

	if (!g || size < PROFILE_SAMPLE_HDR_SIZE)
		return 0;
	if (ps->state == PROFILE_GPU_PAIRED) {
		if (last->tid != (pid_t)ps->tid) {
			g->unpaired++;
			return 0;
		}
		key.chain = last->chain;
		key.handle = last->handle;
		last->chain = (struct gpu_chain){0};
		last->tid = 0;
	} else if (!chain_set(&key.chain, stack,
			      launch_stack(s, ps, size, stack, sizeof(stack) / sizeof(*stack)))) {
		return 0;
	}
	id = hidx_find(&g->pending_idx, pending_hash(key.pid, key.corr), pending_eq, g, &key);
	if (id >= 0) { /* the same id again: the newer launch */
		free(g->pending[id].chain.ips);
		g->pending[id] = key;
		return 0;
	}
	if (g->nr_pending >= GPU_PENDING_MAX)
		pending_evict(g, ps->time);
	if (pa_grow((void **)&g->pending, &g->cap_pending, g->nr_pending + 1,
		    sizeof(*g->pending)) ||
	    hidx_insert(&g->pending_idx, pending_hash(key.pid, key.corr), g->nr_pending)) {
		free(key.chain.ips);
		return 0;
	}
	g->pending[g->nr_pending++] = key;
	return 0;
}

static bool name_eq(const void *ctx, uint32_t id, const void *key)
{
	return !strcmp(((const struct rec_gpu *)ctx)->names[id].name, key);
}

/*
 * The synthetic function named by key: a kernel's name as the process has it
 * (mangled; shown demangled), else a copy's or set's frame.  Found by key, so a
 * kernel is demangled once, not at every record.
 */
static int64_t named_fn(struct rec_session *s, const char *key, bool kernel)
{
	struct rec_gpu *g = s->gpu;
	char name[PROFILE_GPU_NAME + 32], *dm;
	uint64_t h = hash_str(key);
	int64_t id = hidx_find(&g->name_idx, h, name_eq, g, key);
	struct gpu_name e;

	if (id >= 0)
		return g->names[id].fn;
	if (kernel) {
		dm = dm_demangle(key);
		snprintf(name, sizeof(name), "[gpu:kernel] %s", dm ? dm : key);
		free(dm);
		e.fn = rec_synth_fn(s, name, "<gpu>", 0);
	} else {
		e.fn = rec_synth_fn(s, key, "<gpu>", 0);
	}
	e.name = strdup(key);
	if (e.fn < 0 || !e.name) {
		free(e.name);
		return g->unknown_fn;
	}
	if (pa_grow((void **)&g->names, &g->cap_names, g->nr_names + 1, sizeof(*g->names)) ||
	    hidx_insert(&g->name_idx, h, g->nr_names)) {
		free(e.name);
		return e.fn;
	}
	g->names[g->nr_names++] = e;
	return e.fn;
}

/* The synthetic function naming what record r did: a kernel, a copy or a set. */
static int64_t record_fn(struct rec_session *s, const struct pa_gpu_rec *r, const char *kname)
{
	static const char *const copies[] = {"",     "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					     "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
	char op[64];

	if (r->kind == PA_GPU_MEMCPY) {
		snprintf(op, sizeof(op), "[gpu:memcpy %s]",
			 r->copy_kind < sizeof(copies) / sizeof(copies[0]) && r->copy_kind
				 ? copies[r->copy_kind]
				 : "other");
		return named_fn(s, op, false);
	}
	if (r->kind == PA_GPU_MEMSET)
		return named_fn(s, "[gpu:memset]", false);
	return kname[0] ? named_fn(s, kname, true) : s->gpu->unknown_fn;
}

int rec_gpu_fn(struct rec_session *s, const struct profile_gpu_fn *e, size_t size)
{
	struct rec_gpu *g = s->gpu;
	struct gpu_kernel k = {e->pid, true, e->handle, -1};
	char name[PROFILE_GPU_NAME];
	int64_t id;

	if (!g || size < sizeof(*e))
		return 0;
	if (e->state == PROFILE_GPU_FN_KERNEL) {
		/* A function of a library kernel: named as that kernel is. */
		struct gpu_kernel of = {e->pid, true, e->alias, -1};

		id = kernel_find(g, &of);
		if (id < 0)
			return 0;
		k.fn = g->kernels[id].fn;
	} else {
		memcpy(name, e->name, sizeof(name));
		name[sizeof(name) - 1] = 0;
		if (!name[0])
			return 0;
		k.fn = named_fn(s, name, true);
	}
	g->handles++;
	/* The same handle again (a module unloaded, its handle reused): the newer name. */
	id = kernel_find(g, &k);
	if (id >= 0)
		g->kernels[id].fn = k.fn;
	else
		kernel_add(g, &k);
	return 0;
}

int rec_gpu_rec(struct rec_session *s, const struct profile_gpu_rec *e, size_t size)
{
	struct rec_gpu *g = s->gpu;
	struct gpu_pending key = {.pid = e->pid, .corr = e->rec.corr};
	const struct gpu_pending *p = NULL;
	struct gpu_raw raw = {
		.magic = GPU_RAW_MAGIC,
		.version = GPU_RAW_VERSION,
		.op = (uint8_t)e->rec.kind,
		.device = e->rec.device,
		.stream = e->rec.stream,
		.copy_kind = e->rec.copy_kind,
		.corr = e->rec.corr,
		.bytes = e->rec.bytes,
		.graph = e->rec.graph,
		.start = e->rec.start,
		.end = e->rec.end,
	};
	char kname[PROFILE_GPU_NAME];
	uint64_t ns;
	int64_t id, fn;
	int err;

	if (!g || s->gpu_time_evidx < 0 || size < sizeof(*e))
		return 0;
	if (e->unobserved > g->unobserved)
		g->unobserved = e->unobserved;
	id = hidx_find(&g->pending_idx, pending_hash(key.pid, key.corr), pending_eq, g, &key);
	if (id >= 0)
		p = &g->pending[id];
	memcpy(raw.grid, e->rec.grid, sizeof(raw.grid));
	memcpy(raw.block, e->rec.block, sizeof(raw.block));
	memcpy(kname, e->name, sizeof(kname));
	kname[sizeof(kname) - 1] = 0;
	ns = e->rec.end > e->rec.start ? e->rec.end - e->rec.start : 0;
	fn = record_fn(s, &e->rec, kname);
	err = write_gpu_sample(s, s->gpu_time_evidx, cpu_of(s, e->cpu)->gpu_time_id, e->pid, e->tid,
			       e->cpu, e->time, ns ? ns : 1, fn, p ? g->launch_fn : g->unmatched_fn,
			       p ? p->chain.ips : NULL, p ? p->chain.n : 0, &raw);
	if (err)
		return err;
	/* A driver handle given out before pa-record attached: named by its record, for
	 * its next launches. */
	if (p && p->handle && e->rec.kind == PA_GPU_KERNEL && fn != g->unknown_fn) {
		struct gpu_kernel k = {e->pid, true, p->handle, -1};

		id = kernel_find(g, &k);
		if (id >= 0 && g->kernels[id].fn == g->unknown_fn) {
			g->kernels[id].fn = fn;
			g->handles++;
		}
	}
	g->timed++;
	g->timed_ns += ns;
	g->unmatched += !p;
	return 0;
}

void rec_gpu_summary(const struct rec_session *s)
{
	const struct rec_gpu *g = s->gpu;

	/* Newer kernels want CAP_SYS_ADMIN for uprobes, which make setcap does not grant
	 * (docs/privileges.md). */
	if (g && g->attach_denied)
		pa_warn("gpu: the kernel refused %llu uprobes (permission denied): it allows them "
			"only with CAP_SYS_ADMIN; run pa-record --gpu as root",
			(unsigned long long)g->attach_denied);
	if (!g || s->opts.quiet)
		return;
	if (g->adapter_files)
		pa_info("gpu: %llu kernels, copies and sets timed by the CUDA adapter (%.3f ms on "
			"the GPU), %llu of them without their launch; %llu discarded before "
			"pa-record attached%s",
			(unsigned long long)g->timed, g->timed_ns / 1e6,
			(unsigned long long)g->unmatched, (unsigned long long)g->unobserved,
			g->unpaired ? "; some launches' stacks were not found (their kernels are "
				      "unmatched)"
				    : "");
	if (s->gpu_lost || s->gpu_rec_lost)
		pa_info("gpu: %llu launches and %llu GPU records lost: the ring buffer was full",
			(unsigned long long)s->gpu_lost, (unsigned long long)s->gpu_rec_lost);
	pa_info("gpu: %llu kernel launches (counted%s) in %llu binaries with the CUDA runtime or "
		"driver; %llu launched functions unnamed%s",
		(unsigned long long)g->launches,
		g->adapter_files ? "; timed as gpu-time" : ", not timed: no CUDA adapter",
		(unsigned long long)g->files, (unsigned long long)g->unnamed,
		g->attach_failed ? "; some launch APIs could not be probed (-v says which)" : "");
	if (s->gpu_reused)
		pa_info("gpu: %llu launches over %u stack walks a second in their thread took "
			"the thread's last stack for their kernel (--gpu-stacks)%s",
			(unsigned long long)s->gpu_reused, s->opts.gpu_stacks,
			g->no_stack ? "; some had none to take" : "");
	/* Named kernels of launches through the driver, and the driver launches the
	 * runtime made for its own launches (one launch, counted once). */
	if (s->opts.verbose && (g->handles || s->gpu_nested))
		pa_info("gpu: the driver named %llu kernel handles; %llu of its launches were the "
			"runtime's own, counted once",
			(unsigned long long)g->handles, (unsigned long long)s->gpu_nested);
}

void rec_gpu_free(struct rec_session *s)
{
	struct rec_gpu *g = s->gpu;
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nr_links; i++)
		bpf_link__destroy(g->links[i]);
	for (i = 0; i < GPU_SYMTABS; i++)
		symtab_free(g->symtabs[i].st);
	for (i = 0; i < GPU_LAST_THREADS; i++)
		free(g->last[i].chain.ips);
	for (i = 0; i < g->nr_pending; i++)
		free(g->pending[i].chain.ips);
	for (i = 0; i < g->nr_names; i++)
		free(g->names[i].name);
	recent_free(g);
	free(g->recent);
	free(g->pending);
	free(g->names);
	hidx_free(&g->pending_idx);
	hidx_free(&g->name_idx);
	free(g->kernels);
	hidx_free(&g->kernel_idx);
	free(g);
	s->gpu = NULL;
}
