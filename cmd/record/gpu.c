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
 * Launches are counted, not timed: kernel durations need CUPTI's activity records.
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
#include "symbolize/symtab.h"
#include "profile.skel.h"
#include "record.h"

#define GPU_MAX_LINKS 256

/* The launch APIs, as the runtime defines them (and their per-thread-stream twins). */
static const struct {
	const char *name;
	uint8_t api;
} launch_apis[] = {
	{"cudaLaunchKernel", PROFILE_GPU_API_LAUNCH},
	{"cudaLaunchKernel_ptsz", PROFILE_GPU_API_LAUNCH},
	{"cudaLaunchCooperativeKernel", PROFILE_GPU_API_COOP},
	{"cudaLaunchCooperativeKernel_ptsz", PROFILE_GPU_API_COOP},
	{"cudaLaunchKernelExC", PROFILE_GPU_API_LAUNCH_EX},
	{"cudaLaunchKernelExC_ptsz", PROFILE_GPU_API_LAUNCH_EX},
	{"cudaGraphLaunch", PROFILE_GPU_API_GRAPH},
	{"cudaGraphLaunch_ptsz", PROFILE_GPU_API_GRAPH},
};

/* A launched function, named: (pid, address) -> synthetic function. */
struct gpu_kernel {
	pid_t pid;
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

struct rec_gpu {
	struct bpf_link *links[GPU_MAX_LINKS];
	size_t nr_links;
	int64_t launch_fn, graph_fn, unknown_fn;

	struct gpu_kernel *kernels;
	size_t nr_kernels, cap_kernels;
	struct hidx kernel_idx;
	struct gpu_symtab symtabs[GPU_SYMTABS];
	uint64_t clock;

	uint64_t launches, unnamed, attach_failed, files;
};

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
	if (g->launch_fn < 0 || g->graph_fn < 0 || g->unknown_fn < 0) {
		free(g);
		return -ENOMEM;
	}
	s->gpu = g;
	return 0;
}

/* The runtime's launch APIs that e defines, as file offsets into f->gpu. */
void rec_gpu_probe_elf(Elf *e, struct rec_file *f)
{
	static const Elf64_Word types[] = {SHT_DYNSYM, SHT_SYMTAB};
	size_t t;

	f->ngpu = 0;
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
				GElf_Sym sym;
				const char *name;
				int j;

				if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
					continue;
				name = elf_strptr(e, sh.sh_link, sym.st_name);
				/* Cheap reject first: every name probed starts "cudaL" or "cudaG". */
				if (!name || strncmp(name, "cuda", 4) ||
				    (name[4] != 'L' && name[4] != 'G'))
					continue;
				for (k = 0; k < sizeof(launch_apis) / sizeof(launch_apis[0]); k++)
					if (!strcmp(name, launch_apis[k].name))
						break;
				if (k == sizeof(launch_apis) / sizeof(launch_apis[0]))
					continue;
				/* Its file offset, from the executable segment holding it. */
				for (j = 0; j < f->nsegs; j++) {
					const struct rec_seg *g = &f->segs[j];
					uint64_t off;

					if (!g->exec || sym.st_value < g->vaddr ||
					    sym.st_value >= g->vaddr + g->filesz)
						continue;
					off = sym.st_value - g->vaddr + g->off;
					for (k = 0; k < f->ngpu && f->gpu[k].off != off; k++)
						;
					if (k == f->ngpu &&
					    f->ngpu < sizeof(f->gpu) / sizeof(f->gpu[0])) {
						size_t a;

						for (a = 0; strcmp(name, launch_apis[a].name); a++)
							;
						f->gpu[f->ngpu].off = off;
						f->gpu[f->ngpu++].api = launch_apis[a].api;
					}
					break;
				}
			}
		}
	}
}

void rec_gpu_file(struct rec_session *s, struct rec_file *f, const struct rec_file_ref *r)
{
	struct rec_gpu *g = s->gpu;
	char path[4200];
	int i;

	if (!g || !f->ngpu)
		return;
	/* By the process's own view of the file: the uprobe goes on its inode. */
	if (r->pid == getpid())
		snprintf(path, sizeof(path), "%s", r->path);
	else
		snprintf(path, sizeof(path), "/proc/%d/root%s", r->pid, r->path);
	g->files++;
	for (i = 0; i < f->ngpu; i++) {
		struct bpf_uprobe_opts uo = {.sz = sizeof(uo), .bpf_cookie = f->gpu[i].api};
		struct bpf_link *l;

		if (g->nr_links == GPU_MAX_LINKS) {
			g->attach_failed++;
			continue;
		}
		l = bpf_program__attach_uprobe_opts(s->skel->progs.on_gpu_launch, -1, path,
						    f->gpu[i].off, &uo);
		if (!l) {
			g->attach_failed++;
			if (s->opts.verbose)
				pa_warn("gpu: cannot probe %s at %#llx: %s", r->path,
					(unsigned long long)f->gpu[i].off, strerror(errno));
			continue;
		}
		g->links[g->nr_links++] = l;
	}
	if (s->opts.verbose)
		pa_info("gpu: %d CUDA launch APIs probed in %s", f->ngpu, r->path);
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

/*
 * Before the targets run: the CUDA runtimes a process may load, and the command's
 * executable (nvcc links the runtime in).  A library is seen in a target only once
 * it is mapped and pa-record has read the side-band, by which time a short program
 * may have launched all it launches; a uprobe goes on the file, for every process.
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
	size_t i, j;

	if (!s->gpu)
		return;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]) + 1; i++) {
		glob_t gl;

		if (i == sizeof(dirs) / sizeof(dirs[0])) {
			/* LD_LIBRARY_PATH's first directory, as the command will see it */
			if (!ld || !*ld)
				break;
			snprintf(pat, sizeof(pat), "%.*s/libcudart.so*", (int)strcspn(ld, ":"), ld);
		} else {
			snprintf(pat, sizeof(pat), "%s/libcudart.so*", dirs[i]);
		}
		if (glob(pat, 0, NULL, &gl))
			continue;
		for (j = 0; j < gl.gl_pathc && j < 64; j++)
			probe_path(s, gl.gl_pathv[j]);
		globfree(&gl);
	}
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

	return g->kernels[id].pid == k->pid && g->kernels[id].func == k->func;
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

/* The synthetic function naming the kernel launched at func in pid. */
static int64_t kernel_fn(struct rec_session *s, pid_t pid, uint64_t func, uint8_t api)
{
	struct rec_gpu *g = s->gpu;
	struct gpu_kernel k = {pid, func, -1};
	uint64_t h = hash_mix(hash_mix(0, (uint64_t)pid), func);
	int64_t id;
	char name[1024];

	if (api == PROFILE_GPU_API_GRAPH)
		return g->graph_fn;
	if (!func)
		return g->unknown_fn;
	id = hidx_find(&g->kernel_idx, h, kernel_eq, g, &k);
	if (id >= 0)
		return g->kernels[id].fn;
	k.fn = func_name(s, pid, func, name, sizeof(name)) ? rec_synth_fn(s, name, "<gpu>", 0)
							   : g->unknown_fn;
	if (k.fn < 0)
		k.fn = g->unknown_fn;
	if (k.fn == g->unknown_fn)
		g->unnamed++;
	if (!pa_grow((void **)&g->kernels, &g->cap_kernels, g->nr_kernels + 1,
		     sizeof(*g->kernels)) &&
	    !hidx_insert(&g->kernel_idx, h, g->nr_kernels))
		g->kernels[g->nr_kernels++] = k;
	return k.fn;
}

int rec_gpu_launch(struct rec_session *s, const struct profile_sample *ps, size_t size)
{
	struct rec_gpu *g = s->gpu;
	struct pd_sample smp = {};
	uint64_t *cc = s->callchain, room;
	size_t nu, npy = 0, at, n = 0, start;
	const struct rec_cpu *c;
	int64_t fn;
	int err;

	if (!g || s->gpu_evidx < 0 || size < PROFILE_SAMPLE_HDR_SIZE)
		return 0;
	room = (size - PROFILE_SAMPLE_HDR_SIZE) / sizeof(__u64);
	nu = ps->nr_user < room ? ps->nr_user : room;
	at = nu; /* no kernel frames: Python pairs follow the user ips */
	if (ps->nr_py && at < room)
		npy = ps->nr_py < (room - at) / 2 ? ps->nr_py : (room - at) / 2;
	fn = kernel_fn(s, ps->pid, ps->period, ps->state);
	/* Before the sample, in time order: both frames are in the synthetic file. */
	rec_synth_map(s, ps->pid, 0, ps->time > 0 ? ps->time - 1 : 0);
	cc[n++] = PERF_CONTEXT_USER;
	cc[n++] = rec_synth_addr(s, (uint32_t)fn, 0);
	cc[n++] = rec_synth_addr(s, (uint32_t)g->launch_fn, 0);
	start = n;
	n += rec_python_chain(s, ps->pid, npy ? ps->ips + at : NULL, npy,
			      (ps->flags & PROFILE_F_PY_CUT) != 0, ps->ips, nu, cc + n,
			      sizeof(s->callchain) / sizeof(*cc) - n);
	/* The probed API's entry, no longer the leaf: readers take pc - 1 for a caller's
	 * frame, which would fall before the function. */
	if (n > start)
		cc[start]++;
	c = ps->cpu < (uint32_t)s->nr_possible && s->cpu_by_nr[ps->cpu] ? s->cpu_by_nr[ps->cpu]
									: &s->cpus[0];
	smp.ip = cc[1];
	smp.misc = PERF_RECORD_MISC_USER;
	smp.pid = ps->pid;
	smp.tid = ps->tid;
	smp.time = ps->time;
	smp.cpu = ps->cpu;
	smp.period = 1;
	smp.nr_ips = n;
	smp.ips = cc;
	smp.id = c->gpu_id;
	err = pd_write_sample(s->w, s->gpu_evidx, &smp);
	if (err) {
		s->write_err = err;
		return err;
	}
	g->launches++;
	s->records_in_round++;
	return 0;
}

void rec_gpu_summary(const struct rec_session *s)
{
	const struct rec_gpu *g = s->gpu;

	if (!g || s->opts.quiet)
		return;
	pa_info("gpu: %llu kernel launches (counted, not timed: no CUPTI records) in %llu "
		"binaries with the CUDA runtime; %llu launched functions unnamed%s",
		(unsigned long long)g->launches, (unsigned long long)g->files,
		(unsigned long long)g->unnamed,
		g->attach_failed ? "; some launch APIs could not be probed (-v says which)" : "");
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
	free(g->kernels);
	hidx_free(&g->kernel_idx);
	free(g);
	s->gpu = NULL;
}
