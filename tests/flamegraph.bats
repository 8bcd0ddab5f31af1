#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# pa-convert --flamegraph: the page opened in headless Chromium and used (click, search,
# Escape), the SVG form, the data the page carries, and the differential graph.
# The browser runs once per suite (setup_file); each test checks one fact it saw.
# Screenshots are kept in $O/test-artifacts/flamegraph/.

load lib/helpers

# fact EXPR: EXPR evaluated in node with f = the browser's facts (tests/browser/flamegraph.js).
fact() {
	node -e 'const f = JSON.parse(require("fs").readFileSync(process.argv[1])); console.log(eval(process.argv[2]))' \
		"$BATS_FILE_TMPDIR/facts.json" "$1"
}

# page_data FILE EXPR: EXPR with D = the JSON a flame-graph page carries.
page_data() {
	node -e '
		const html = require("fs").readFileSync(process.argv[1], "utf8");
		const m = html.match(/<script id="pa-data" type="application\/json">([^]*?)<\/script>/);
		const D = JSON.parse(m[1]);
		const cols = D.events.length * (D.diff ? 2 : 1), per = 3 + cols;
		/* node name i -> {name, kind, v (first event), b (base)} */
		const nodes = [];
		for (let p = 0; p < D.nodes.length; p += per)
			nodes.push({ name: D.names[D.nodes[p]], kind: D.kinds[D.nodes[p + 1]],
				     v: D.nodes[p + 3], b: D.diff ? D.nodes[p + 3 + D.events.length] : 0 });
		console.log(eval(process.argv[2]));' "$1" "$2"
}

setup_file() {
	local art
	cd "$BATS_FILE_TMPDIR" || return 1
	[ "$(id -u)" -eq 0 ] || return 0
	command -v perf >/dev/null || return 0
	BATS_TEST_TMPDIR=$BATS_FILE_TMPDIR perf_capture cpu.data cpu_split 2 || return 1
	"$PA_CONVERT" -q -i cpu.data --flamegraph -o cpu.html || return 1
	command -v chromium >/dev/null || return 0
	node "$PA_ROOT/tests/browser/flamegraph.js" cpu.html shot.png hot_b 'hot_b' \
		>facts.json 2>browser.err || { cat browser.err >&2; return 1; }
	art=$PA_BUILD/test-artifacts/flamegraph
	mkdir -p "$art" && cp shot*.png facts.json "$art/"
}

require_browser() {
	require_root
	command -v chromium >/dev/null || fail "chromium not installed (make deps installs it)"
	[ -s "$BATS_FILE_TMPDIR/facts.json" ] || fail "the browser run in setup_file left no facts"
}

@test "flamegraph: the page draws hot_a wider than hot_b, with its name on it" {
	require_browser
	fact 'JSON.stringify(f.frames.map((x) => [x.name, Math.round(x.w)]))'
	a=$(fact 'f.frames.find((x) => x.name === "hot_a").w')
	b=$(fact 'f.frames.find((x) => x.name === "hot_b").w')
	[ "$(node -e "console.log($a > 2 * $b * 0.8 && $a < 3 * $b)")" = true ]
}

@test "flamegraph: a click on hot_b zooms it to the full width" {
	require_browser
	fact 'JSON.stringify([f.clickTarget, f.zoomed, f.width])'
	[ "$(fact 'f.clickTarget.w < 0.5 * f.width')" = true ]
	[ "$(fact 'Math.abs(f.zoomed.w - f.width) < 1')" = true ]
}

@test "flamegraph: Escape resets the zoom" {
	require_browser
	[ "$(fact 'Math.abs(f.reset.w - f.clickTarget.w) < 1')" = true ]
}

@test "flamegraph: the sandwich view of hot_b has work_loop among its callers" {
	require_browser
	fact 'JSON.stringify(f.sandwich)'
	[ "$(fact 'f.sandwich.titles.join("|")')" = "Callers of hot_b|Callees of hot_b" ]
	[ "$(fact 'f.sandwich.callers.includes("work_loop") && f.sandwich.callers.includes("main")')" = true ]
	[ "$(fact 'f.sandwich.callees.includes("work_loop")')" = false ]
}

@test "flamegraph: search highlights hot_b and shows its share" {
	require_browser
	fact 'JSON.stringify([f.matched, f.highlighted])'
	[ "$(fact 'JSON.stringify(f.highlighted)')" = '["#e040e0"]' ]
	share=$(fact 'f.matched.replace(/^Matched: ([0-9.]+)%$/, "$1")')
	in_range "$share" 22 38
}

@test "flamegraph: the page makes no network request and throws no error" {
	require_browser
	[ "$(fact 'JSON.stringify(f.requests)')" = '[]' ]
	[ "$(fact 'JSON.stringify(f.errors)')" = '[]' ]
}

@test "flamegraph: the header names the command, the host and the event" {
	require_browser
	meta=$(fact 'f.meta')
	echo "$meta"
	[[ $meta == *"command: "*cpu_split* ]]
	[[ $meta == *"host: $(hostname)"* ]]
	[[ $meta == *"events: cpu-clock"* ]]
}

@test "flamegraph: the file is self-contained: no src, href or url() to fetch" {
	require_root
	[ -s "$BATS_FILE_TMPDIR/cpu.html" ] || fail "no page made in setup_file"
	run ! grep -Eiq '(src|href)=|url\(|@import' "$BATS_FILE_TMPDIR/cpu.html"
}

@test "flamegraph: a .svg output name gives a standalone SVG with hot_a's frame" {
	require_root
	"$PA_CONVERT" -i "$BATS_FILE_TMPDIR/cpu.data" --flamegraph -o fg.svg
	python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' fg.svg
	grep -q '<title>hot_a (' fg.svg
	run ! grep -q '<script' fg.svg
}

@test "flamegraph: reads a perf.data stream on stdin, as the other converters do" {
	require_root
	perf_capture pipe.data cpu_split 1 pipe
	cat pipe.data | "$PA_CONVERT" --flamegraph -o p.html
	[ "$(page_data p.html 'nodes.some((n) => n.name === "hot_a")')" = true ]
}

@test "flamegraph: --inverted puts the root on top of the SVG" {
	require_root
	"$PA_CONVERT" -i "$BATS_FILE_TMPDIR/cpu.data" --flamegraph --inverted -o inv.svg
	"$PA_CONVERT" -i "$BATS_FILE_TMPDIR/cpu.data" --flamegraph -o up.svg
	y_inv=$(grep -o '<title>all (.*' inv.svg | grep -o 'y="[0-9]*"' | head -1)
	y_up=$(grep -o '<title>all (.*' up.svg | grep -o 'y="[0-9]*"' | head -1)
	echo "root: inverted $y_inv, flame $y_up"
	[ "${y_inv//[^0-9]/}" -lt "${y_up//[^0-9]/}" ]
}

@test "flamegraph: --focus hot_b keeps only stacks through hot_b" {
	require_root
	"$PA_CONVERT" -i "$BATS_FILE_TMPDIR/cpu.data" --flamegraph --focus '^hot_b$' -o f.html
	[ "$(page_data f.html 'nodes.some((n) => n.name === "hot_b")')" = true ]
	[ "$(page_data f.html 'nodes.some((n) => n.name === "hot_a")')" = false ]
}

@test "flamegraph: --ignore hot_b drops the stacks through hot_b" {
	require_root
	"$PA_CONVERT" -i "$BATS_FILE_TMPDIR/cpu.data" --folded --ignore 'hot_b' >f.folded
	grep -q hot_a f.folded
	run ! grep -q hot_b f.folded
}

@test "flamegraph: a bad --focus regex is one error line and exit 1" {
	require_root
	run -1 "$PA_CONVERT" -i "$BATS_FILE_TMPDIR/cpu.data" --flamegraph --focus 'a(' -o f.html
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *focus* ]]
	[ ! -e f.html ]
}

@test "flamegraph: --focus that keeps nothing is one error line, exit 1, no file" {
	require_root
	run -1 "$PA_CONVERT" -i "$BATS_FILE_TMPDIR/cpu.data" --flamegraph --focus 'no_such_fn' -o f.html
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *"no samples to draw"*"--focus"* ]]
	[ ! -e f.html ]
}

@test "flamegraph: off-CPU time is its own kind and merges with CPU time in one view" {
	require_root
	require_bin "$PA_RECORD"
	w=$(wl offcpu_sleep)
	pa_record -q --offcpu -o p.data -- "$w" 1 >/dev/null || fail "pa-record --offcpu failed"
	"$PA_CONVERT" -i p.data --flamegraph -o p.html
	page_data p.html 'D.events.map((e) => e.name + ":" + e.time).join(" ")'
	[ "$(page_data p.html 'D.events.filter((e) => e.time).length')" -ge 2 ]
	[ "$(page_data p.html 'nodes.some((n) => n.kind === "off-cpu" && /^\[off-cpu\] sleep/.test(n.name))')" = true ]
}

@test "flamegraph: Python functions are frames of kind python under the interpreter" {
	require_root
	require_bin "$PA_RECORD"
	py=$(ls -d /root/.pyenv/versions/3.12*/bin/python3 "${PYENV_ROOT:-/nonexistent}"/versions/3.12*/bin/python3 2>/dev/null | head -1)
	[ -x "$py" ] || fail "no CPython 3.12 from pyenv"
	printf 'def hot_py():\n    s = 0\n    for i in range(3000000):\n        s += i\n\nfor _ in range(3):\n    hot_py()\n' >w.py
	pa_record -q -F 499 -o py.data -- "$py" w.py || fail "pa-record failed"
	"$PA_CONVERT" -i py.data --flamegraph -o py.html
	[ "$(page_data py.html 'nodes.some((n) => n.kind === "python" && n.name === "hot_py (w.py)")')" = true ]
}

@test "flamegraph: GPU kernels hang under a gpu-launch frame, in kinds of their own" {
	require_root
	require_bin "$PA_RECORD" "$PA_WL/gpu_producer"
	cp "$PA_WL/gpu_producer" .
	pa_record -q --gpu -F 99 -o g.data -- ./gpu_producer 300 >/dev/null || fail "pa-record --gpu failed"
	"$PA_CONVERT" -i g.data --flamegraph -o g.html
	page_data g.html 'D.events.map((e) => e.name).join(" ")'
	[ "$(page_data g.html 'nodes.some((n) => n.kind === "gpu-launch")')" = true ]
	[ "$(page_data g.html 'nodes.some((n) => n.kind === "gpu" && /^\[gpu:kernel\] /.test(n.name))')" = true ]
}

@test "flamegraph: the differential graph shows work_b twice as slow in red" {
	require_root
	perf_capture base.data diff_work 1
	perf_capture new.data diff_work -b
	"$PA_CONVERT" --diff base.data new.data --flamegraph -o d.html
	page_data d.html 'JSON.stringify(nodes.filter((n) => /^work_/.test(n.name)))'
	# work_b's share grew: new share > base share (red); work_a's shrank (blue).
	[ "$(page_data d.html 'D.diff')" = true ]
	[ "$(page_data d.html '(() => { const r = nodes[0], b = nodes.find((n) => n.name === "work_b"); return b.v / r.v - b.b / r.b > 0.1; })()')" = true ]
	[ "$(page_data d.html '(() => { const r = nodes[0], a = nodes.find((n) => n.name === "work_a"); return a.v / r.v - a.b / r.b < -0.04; })()')" = true ]
}

@test "flamegraph: in the browser, the differential graph draws work_b red and work_a blue" {
	require_browser
	perf_capture base.data diff_work 1
	perf_capture new.data diff_work -b
	"$PA_CONVERT" --diff base.data new.data --flamegraph -o d.html
	node "$PA_ROOT/tests/browser/flamegraph.js" d.html diff.png work_b work_b >d.json
	cp diff*.png "$PA_BUILD/test-artifacts/flamegraph/"
	colors=$(node -e 'const f = require("./d.json"); const c = (n) => f.frames.find((x) => x.name === n).color; console.log(c("work_b"), c("work_a"))')
	echo "work_b, work_a: $colors"
	[[ $colors =~ ^rgb\(255,([0-9]+),[0-9]+\)\ rgb\(([0-9]+),[0-9]+,255\)$ ]]
	[ "${BASH_REMATCH[1]}" -lt 200 ]
	[ "${BASH_REMATCH[2]}" -lt 200 ]
}

@test "flamegraph: --diff without --flamegraph says what to add" {
	run -1 "$PA_CONVERT" --diff a.data b.data --pprof
	[[ $output == *"add --flamegraph"* ]]
}
