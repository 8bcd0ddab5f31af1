#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# pa-convert --speedscope: speedscope's JSON file format, checked against the schema
# speedscope ships, against perf script and pa-report on the same capture, and loaded
# into the speedscope app itself (npm's speedscope package, in headless Chromium).
# Input is a `perf record -g` capture, so a pa-record bug does not hide (or fake) a
# pa-convert result.  Screenshots are kept in $O/test-artifacts/speedscope/.

load lib/helpers

SS_NPM=$PA_BUILD/npm

# The app's folder in the npm package (the one with its index.html), or nothing.
ss_app_dir() {
	local f
	f=$(find "$SS_NPM/node_modules/speedscope" -name index.html -path '*release*' 2>/dev/null |
		head -1)
	[ -n "$f" ] && dirname "$f"
}

# The suite's capture, made once: cpu_split for 2 s with two events, cpu-clock (its
# period is time: nanoseconds) and every page fault (a count: unit none), and its
# speedscope file.  The app is installed once too; a failed install fails the test
# that needs it.
setup_file() {
	cd "$BATS_FILE_TMPDIR" || return 1
	if [ -z "$(ss_app_dir)" ]; then
		mkdir -p "$SS_NPM"
		npm install --prefix "$SS_NPM" --no-audit --no-fund speedscope \
			>"$SS_NPM/install.log" 2>&1 || true
	fi
	[ "$(id -u)" -eq 0 ] || return 0
	command -v perf >/dev/null || return 0
	BATS_TEST_TMPDIR=$BATS_FILE_TMPDIR PA_PERF_ARGS="-e cpu-clock -e page-faults/period=1/" \
		perf_capture cpu.data cpu_split 2 || return 1
	"$PA_CONVERT" -q -i cpu.data --speedscope -o cpu.json
}

# The suite's capture and file, copied into the test's directory.
suite_capture() {
	require_root
	require_perf || return 1
	require_bin "$PA_CONVERT" "$PA_REPORT" || return 1
	[ -s "$BATS_FILE_TMPDIR/cpu.json" ] || fail "setup_file made no cpu.json" || return 1
	cp "$BATS_FILE_TMPDIR/cpu.data" "$BATS_FILE_TMPDIR/cpu.json" .
}

# profiles FILE: "tid event samples weight unit start end" per profile, in file order.
profiles() {
	python3 - "$1" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
for p in d["profiles"]:
    m = re.fullmatch(r".* \d+/(\d+): (\S+)", p["name"], re.S)
    print(m.group(1), m.group(2), len(p["samples"]), sum(p["weights"]), p["unit"],
          p["startValue"], p["endValue"])
PY
}

# report_header FILE TID EVENT KEY: pa-report's "# KEY: N" for one thread and event.
report_header() {
	local out
	out=$("$PA_REPORT" -i "$1" --tid "$2" --event "$3" --no-children --sort sym -g none) ||
		fail "pa-report --tid $2 --event $3 failed" || return 1
	sed -nE "s/^# $4: ([0-9]+).*/\1/p" <<<"$out" | head -1 | grep . ||
		fail "no '# $4:' in pa-report's output for tid $2, $3"
}

@test "speedscope: the file is what speedscope's own schema describes, its indices in range" {
	suite_capture
	app=$(ss_app_dir) || fail "npm install speedscope failed: $(cat "$SS_NPM/install.log")"
	python3 - "$app/file-format-schema.json" cpu.json <<'PY'
import json, sys

schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))  # strict: raw control characters are errors
defs = schema["definitions"]

# The JSON Schema keywords speedscope's schema uses.
def check(s, v, at):
    while "$ref" in s:
        s = defs[s["$ref"].rsplit("/", 1)[1]]
    if "anyOf" in s:
        if any(not check(alt, v, at) for alt in s["anyOf"]):
            return []
        return [f"{at}: matches none of {len(s['anyOf'])} alternatives"]
    t = s.get("type")
    types = {"object": dict, "array": list, "string": str}
    if t == "number" and (isinstance(v, bool) or not isinstance(v, (int, float))):
        return [f"{at}: {v!r} is not a number"]
    if t in types and not isinstance(v, types[t]):
        return [f"{at}: {v!r} is not {t}"]
    if "const" in s and v != s["const"]:
        return [f"{at}: {v!r} is not {s['const']!r}"]
    if "enum" in s and v not in s["enum"]:
        return [f"{at}: {v!r} is not one of {s['enum']}"]
    errs = []
    if isinstance(v, dict):
        errs += [f"{at}: no {k}" for k in s.get("required", []) if k not in v]
        for k, sub in s.get("properties", {}).items():
            if k in v:
                errs += check(sub, v[k], f"{at}.{k}")
    if isinstance(v, list) and "items" in s:
        for i, x in enumerate(v):
            errs += check(s["items"], x, f"{at}[{i}]")
    return errs

errs = check(schema, doc, "$")
nf = len(doc["shared"]["frames"])
assert doc["exporter"].startswith("pa-convert "), doc["exporter"]
assert doc["name"] == "cpu.data" and doc["activeProfileIndex"] == 0
for p in doc["profiles"]:
    if p["type"] != "sampled" or len(p["samples"]) != len(p["weights"]) or not p["samples"]:
        errs.append(f"{p['name']}: not sampled, or samples and weights differ in length")
    if not p["startValue"] <= p["endValue"] or min(p["weights"]) < 1:
        errs.append(f"{p['name']}: start after end, or a weight under 1")
    errs += [f"{p['name']}: frame {i} of {nf}" for s in p["samples"] for i in s
             if not 0 <= i < nf or not isinstance(i, int)]
print(len(doc["profiles"]), "profiles,", nf, "frames")
if errs:
    sys.exit("\n".join(errs[:20]))
PY
}

@test "speedscope: one sampled profile per thread and event, named 'comm pid/tid: event'" {
	require_bin "$PA_CONVERT"
	perf_capture thr.data threads 1
	"$PA_CONVERT" -i thr.data --speedscope -o thr.json
	perf script -F pid,tid,event -i thr.data 2>/dev/null |
		awk '{ sub(/:$/, "", $2); print "threads " $1 ": " $2 }' | sort -u >want
	python3 - thr.json <<'PY' | sort >got
import json, sys
for p in json.load(open(sys.argv[1]))["profiles"]:
    print(p["name"])
PY
	diff want got
	# 2 threads spin: 3 threads at least (the main one ran before it started them).
	[ "$(grep -c ': cpu-clock' got)" -ge 3 ]
	# The most sampled first: speedscope opens the first.
	profiles thr.json | awk 'NR > 1 && $3 > prev { exit 1 } { prev = $3 }'
}

@test "speedscope: each profile's samples and weights are pa-report's samples and event count for its thread" {
	suite_capture
	profiles cpu.json >prof
	cat prof
	[ "$(wc -l <prof)" -ge 2 ]
	while read -r tid ev n w unit _; do
		[ "$n" -eq "$(report_header cpu.data "$tid" "$ev" Samples)" ]
		[ "$w" -eq "$(report_header cpu.data "$tid" "$ev" 'Event count \(approx\.\)')" ]
		case $ev in
		cpu-clock) [ "$unit" = nanoseconds ] ;;
		page-faults*) [ "$unit" = none ] && [ "$w" -eq "$n" ] ;;
		*) fail "unexpected event $ev" ;;
		esac
	done <prof
	# Every sample of the capture is in one profile.
	[ "$(awk '{ n += $3 } END { print n }' prof)" -eq "$(perf_samples_in cpu.data)" ]
}

@test "speedscope: each thread's samples are in time order, leaf by leaf as perf script lists them" {
	suite_capture
	perf script -F tid,event,ip,sym -G -i cpu.data 2>/dev/null >script.txt
	python3 - cpu.json script.txt <<'PY'
import collections, json, re, sys
d = json.load(open(sys.argv[1]))
names = [f["name"] for f in d["shared"]["frames"]]
want = collections.defaultdict(list)
for line in open(sys.argv[2]):
    m = re.match(r"\s*(\d+)\s+(\S+):\s+\S+\s+(.*)$", line.rstrip("\n"))
    want[(m.group(1), m.group(2))].append(m.group(3).strip())

kaddr = {}
for line in open("/proc/kallsyms"):
    f = line.split()
    if len(f) >= 3:
        kaddr.setdefault(f[2], set()).add(f[0])

def kalias(a, b):
    """Whether kernel symbols a and b are names of one address."""
    return bool(kaddr.get(a, set()) & kaddr.get(b, set()) - {"0000000000000000"})

def leaf(stack):
    """The real function the sample was in, as perf names it: no inlined frame."""
    for i in reversed(stack):
        if not names[i].endswith("_[i]"):
            return re.sub(r"_\[k\]$", "", names[i])

bad = []
for p in d["profiles"]:
    tid, ev = re.fullmatch(r".* \d+/(\d+): (\S+)", p["name"], re.S).groups()
    got = [leaf(s) for s in p["samples"]]
    exp = want[(tid, ev)]
    if len(got) != len(exp):
        bad.append(f"{p['name']}: {len(got)} samples, perf script {len(exp)}")
    # Unnamed code is "dso+0xoff" here and named otherwise (or not at all) by perf;
    # kernel aliases (memcpy, __memcpy, __pi_memcpy at one address) are one function,
    # perf names it by its last alias in kallsyms.
    bad += [f"{p['name']}: sample {i}: {a} where perf script has {b}"
            for i, (a, b) in enumerate(zip(got, exp))
            if a != b and not re.search(r"\+0x[0-9a-f]+$|@plt$", a) and not kalias(a, b)]
    print(p["name"], len(got), "samples")
if bad:
    sys.exit("\n".join(bad[:20]))
PY
}

@test "speedscope: hot_a is the heaviest frame, ~70% of cpu_split's cpu-clock time" {
	suite_capture
	python3 - cpu.json <<'PY' >top
import collections, json, sys
d = json.load(open(sys.argv[1]))
names = [f["name"] for f in d["shared"]["frames"]]
p = d["profiles"][0]
assert p["name"].endswith(": cpu-clock"), p["name"]
self = collections.Counter()
for s, w in zip(p["samples"], p["weights"]):
    self[names[s[-1]]] += w
(name, w), = self.most_common(1)
print(name, 100 * w / sum(p["weights"]))
PY
	cat top
	read -r name pct <top
	[ "$name" = hot_a ]
	in_range "$pct" 65 75
}

@test "speedscope: kernel frames end in _[k], and no two frames are the same" {
	require_bin "$PA_CONVERT"
	perf_capture sys.data syscall_heavy 1
	"$PA_CONVERT" -i sys.data --speedscope -o sys.json
	python3 - sys.json <<'PY'
import collections, json, sys
frames = json.load(open(sys.argv[1]))["shared"]["frames"]
kernel = [f["name"] for f in frames if f.get("file") == "[kernel.kallsyms]"]
print(len(frames), "frames,", len(kernel), "in the kernel")
assert len(kernel) > 3, "no kernel frames"
assert all(n.endswith("_[k]") for n in kernel), [n for n in kernel if not n.endswith("_[k]")]
assert not [f for f in frames if f["name"].endswith("_[k]") and f not in kernel and
            f.get("file") != "[kernel.kallsyms]"]
assert any(f["name"] == "main" for f in frames)
dup = [k for k, n in collections.Counter(
    (f["name"], f.get("file"), f.get("line")) for f in frames).items() if n > 1]
assert not dup, dup
PY
}

@test "speedscope: quotes, backslashes, control characters and bad UTF-8 in a name are escaped" {
	require_root
	require_bin "$PA_RECORD" "$PA_CONVERT"
	# The comm is the program's file name: q " \ ^A TAB, a byte that is no UTF-8, z.
	name=$'q"\\\x01\t\xffz'
	cp "$(wl cpu_split)" "./$name"
	pa_record -q -o weird.data -- "./$name" 1
	"$PA_CONVERT" -i weird.data --speedscope -o weird.json
	# No raw control character or invalid byte in the file; JSON decodes it back.
	if LC_ALL=C grep -naP '[\x00-\x09\x0b-\x1f\x80-\xff]' weird.json | grep -av '\xef\xbf\xbd' |
		LC_ALL=C grep -aP '[\x00-\x09\x0b-\x1f]'; then
		fail "raw control characters above"
	fi
	python3 - weird.json <<'PY'
import json, sys
names = [p["name"] for p in json.load(open(sys.argv[1], encoding="utf-8"))["profiles"]]
print(ascii(names))
assert any(n.startswith('q"\\\x01\t\ufffdz ') for n in names), names
PY
}

@test "speedscope: --focus keeps the samples of the stacks it keeps, in the same order" {
	suite_capture
	"$PA_CONVERT" -i cpu.data --speedscope --focus hot_b -o focus.json
	profiles focus.json >prof
	cat prof
	read -r tid ev n _ <prof
	[ "$ev" = cpu-clock ]
	[ "$n" -eq "$("$PA_REPORT" -i cpu.data --focus hot_b --tid "$tid" --event cpu-clock \
		--no-children --sort sym -g none | sed -nE 's/^# Samples: ([0-9]+).*/\1/p')" ]
	python3 - focus.json cpu.json <<'PY'
import json, sys
f, a = (json.load(open(x)) for x in sys.argv[1:])
def stacks(d, p):
    names = [x["name"] for x in d["shared"]["frames"]]
    return [tuple(names[i] for i in s) for s in p["samples"]]
got = stacks(f, f["profiles"][0])
assert got and all("hot_b" in s for s in got)
# The samples the filter keeps, in the order they had unfiltered.
assert got == [s for s in stacks(a, a["profiles"][0]) if "hot_b" in s]
PY
}

@test "speedscope: reads a pipe-mode stream from stdin" {
	require_bin "$PA_CONVERT"
	perf_capture pipe.data cpu_split 1 pipe
	cat pipe.data | "$PA_CONVERT" --speedscope >pipe.json
	profiles pipe.json >prof
	cat prof
	[ "$(awk '{ n += $3 } END { print n }' prof)" -eq "$(perf script -G -F tid -i - <pipe.data 2>/dev/null | grep -c .)" ]
	grep -q '"name":"stdin"' pipe.json
}

@test "speedscope: GPU kernels are an evented profile per stream, nested under their launch stacks" {
	require_root
	require_bin "$PA_RECORD" "$PA_WL/gpu_producer"
	cp "$PA_WL/gpu_producer" .
	pa_record -q --gpu -F 99 -o g.data -- ./gpu_producer 300 >/dev/null || fail "pa-record --gpu failed"
	"$PA_CONVERT" -i g.data --speedscope -o g.json
	# Each lane: events in time order, every close matching the last open (nesting), and
	# one [gpu:kernel] open per gpu-time sample, under [gpu:launch] (or [gpu:unmatched]:
	# gpu_producer also runs kernels no launch probe saw).
	node -e '
		const d = require("./g.json"), F = d.shared.frames;
		const lanes = d.profiles.filter((p) => p.type === "evented");
		if (!lanes.length) throw new Error("no evented profile");
		let kernels = 0;
		for (const p of lanes) {
			if (!/^GPU 0 stream [0-9]+: gpu-time$/.test(p.name)) throw new Error("lane " + p.name);
			const open = [];
			let at = p.startValue;
			for (const e of p.events) {
				if (e.at < at) throw new Error("out of order at " + e.at);
				at = e.at;
				if (e.type === "O") {
					if (/^\[gpu:kernel\] /.test(F[e.frame].name)) {
						if (!/^\[gpu:(launch|unmatched)\]$/.test(F[open[open.length - 1]].name))
							throw new Error("kernel not under [gpu:launch]");
						kernels++;
					}
					open.push(e.frame);
				} else if (open.pop() !== e.frame) {
					throw new Error("close of " + F[e.frame].name + " does not match");
				}
			}
			if (open.length || at > p.endValue) throw new Error("unbalanced or past endValue");
		}
		const sampled = d.profiles.filter((p) => p.type === "sampled" && /gpu-time$/.test(p.name))
			.reduce((n, p) => n + p.samples.filter((s) => /^\[gpu:kernel\] /.test(F[s[s.length - 1]].name)).length, 0);
		console.log("lanes", lanes.length, "kernels", kernels, "sampled", sampled);
		if (kernels !== sampled || kernels < 300) throw new Error("kernel count");'
}

@test "speedscope: the speedscope app opens the file: hot_a tops its sandwich view, weights round-trip" {
	suite_capture
	command -v node >/dev/null || fail "node not installed"
	command -v chromium >/dev/null || fail "chromium not installed (make deps installs it)"
	app=$(ss_app_dir) || fail "npm install speedscope failed: $(cat "$SS_NPM/install.log")"
	art=$PA_BUILD/test-artifacts/speedscope
	node "$PA_ROOT/tests/browser/speedscope.js" "$app" cpu.json "$art" >app.json
	python3 - app.json cpu.json <<'PY'
import json, sys
app, d = (json.load(open(x)) for x in sys.argv[1:])
print(app["title"], app["sandwich"][:3], app["errors"])
assert app["requested"] and not app["errors"], app["errors"]
ours = d["profiles"]
# The first profile opens, and the toolbar counts them all.
assert app["title"] == f"{ours[0]['name']} (1/{len(ours)})", app["title"]
# The sandwich view lists functions by self time: hot_a first.
assert app["sandwich"][0][2] == "hot_a", app["sandwich"][:3]
# What the app built, exported in its own format: per profile the same weights (for
# page-faults: the sample count), over at least the span of the samples.
assert [p["name"] for p in app["profiles"]] == [p["name"] for p in ours]
for a, p in zip(app["profiles"], ours):
    w = sum(p["weights"])
    assert a["unit"] == p["unit"] and a["nonIdle"] == w, (a, w)
    assert a["total"] == max(w, p["endValue"] - p["startValue"]), (a, p["endValue"])
    if p["unit"] == "none":
        assert a["nonIdle"] == len(p["samples"])
assert app["profiles"][0]["top"][0]["name"] == "hot_a", app["profiles"][0]["top"]
PY
	[ -s "$art/speedscope-sandwich.png" ] && [ -s "$art/speedscope-time-order.png" ]
}
