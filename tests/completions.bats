#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The shell completions, run as the shells run them: completions/pa.bash through its
# functions with COMP_WORDS and COMP_CWORD set, completions/_pa in an interactive zsh
# (tests/lib/zsh_complete.zsh, in a pseudo-terminal).  That every option of every
# --help is completed is scripts/lint-options' job (make lint); here, that the
# completions behave: commands, values, files and the command after "--".

load lib/helpers

# bcomp WORD...: the bash completion of the last WORD (the one being typed, "" for a
# new word) of the command line WORD..., sorted, on one line between spaces.
bcomp() {
	local fn
	# shellcheck source=/dev/null
	source "$PA_ROOT/completions/pa.bash"
	fn=$(complete -p "$1" | sed -E 's/.*-F ([^ ]+) .*/\1/')
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	"$fn"
	echo " $(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')"
}

# offers "LIST" WORDS...: each word of LIST is offered for WORDS.
offers() {
	local want=$1 got w
	shift
	got=$(bcomp "$@")
	for w in $want; do
		[[ $got == *" $w "* ]] || fail "[$*] does not offer $w; offers:$got"
	done
}

# does_not_offer "LIST" WORDS...
does_not_offer() {
	local nope=$1 got w
	shift
	got=$(bcomp "$@")
	for w in $nope; do
		if [[ $got == *" $w "* ]]; then fail "[$*] offers $w; offers:$got"; fi
	done
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	mkdir sub
	touch afile
}

@test "completions: bash: perf-agent offers its commands first, its options after a dash" {
	offers "record report convert gpu-attach" perf-agent ""
	offers "record report" perf-agent re
	does_not_offer "--pid --profile" perf-agent ""
	does_not_offer "record" perf-agent -
	offers "--profile --continuous --push --spool-max --retry-max --basic-auth-file" perf-agent --
}

@test "completions: bash: perf-agent COMMAND completes as pa-COMMAND" {
	offers "--offcpu --offcpu-min --offcpu-state" perf-agent record --off
	offers "auto cfi fp dwarf" perf-agent record --unwind ""
	offers "--diff-abs" perf-agent report --diff-
	offers "--tid-label" perf-agent convert --t
	offers "--check --quiet" perf-agent gpu-attach --
	offers "sh" perf-agent record -p 1 -- s
	offers "afile" perf-agent record -- sh a
}

@test "completions: bash: perf-agent option values: times, directories, files, URLs, PIDs" {
	offers "1s 10s" perf-agent --interval ""
	offers "http:// https://" perf-agent --continuous --push ""
	offers "sub" perf-agent --spool ""
	does_not_offer "afile" perf-agent --spool ""
	offers "afile" perf-agent --cacert a
	offers "$$" perf-agent -p "$$"
}

@test "completions: bash: pa-gpu-attach: its options, then a command, then that command's files" {
	offers "--check" pa-gpu-attach --c
	offers "--quiet" pa-gpu-attach -q --q
	offers "sh" pa-gpu-attach -q s
	offers "sh" pa-gpu-attach -- s
	offers "afile" pa-gpu-attach python3 a
	does_not_offer "--check" pa-gpu-attach python3 --c
}

@test "completions: bash: pa-convert --event: a comma list with --pprof, one event with --folded" {
	offers "cpu-clock,offcpu-time" pa-convert --pprof --event cpu-clock,o
	offers "offcpu-time" pa-convert --folded --event o
}

# zcomp LINE...: zsh_complete.zsh's output for each LINE.
zcomp() {
	command -v zsh >/dev/null || fail "zsh not installed (make deps installs it)"
	run -0 timeout 120 zsh "$PA_ROOT/tests/lib/zsh_complete.zsh" "$PA_ROOT/completions" "$@"
}

# zoffers "LIST" LINE: each word of LIST is a candidate for LINE, in zcomp's $output.
zoffers() {
	local w got
	got=$(awk -v l="> $2" '$0 == l { on = 1; next } /^> / { on = 0 } on' <<<"$output")
	for w in $1; do
		grep -qxF -- "$w" <<<"$got" || fail "zsh: [$2] does not offer $w; offers: $got"
	done
}

@test "completions: zsh: _pa parses, and loads after compinit" {
	command -v zsh >/dev/null || fail "zsh not installed (make deps installs it)"
	run -0 zsh -n "$PA_ROOT/completions/_pa"
	run -0 env ZDOTDIR="$BATS_TEST_TMPDIR" zsh -fc "fpath=($PA_ROOT/completions \$fpath)
		autoload -U compinit && compinit -u -d $BATS_TEST_TMPDIR/.zcompdump
		source $PA_ROOT/completions/_pa
		print -r -- \${_comps[pa-record]} \${_comps[perf-agent]} \${_comps[pa-gpu-attach]}"
	[ "$output" = "_pa _pa _pa" ] || fail "compdef: $output"
}

@test "completions: zsh: options, values, comma lists and perf-agent's commands" {
	zcomp "pa-record --off" "pa-record --unwind " "pa-record -e cycles,cache-" \
		"pa-report --no-" "pa-convert --pprof --event cpu-clock," "perf-agent " \
		"perf-agent --sp" "perf-agent record --unw" "pa-gpu-attach --c" "perf-agent --push "
	zoffers "--offcpu --offcpu-min --offcpu-state" "pa-record --off"
	zoffers "auto cfi fp dwarf" "pa-record --unwind "
	zoffers "cache-misses" "pa-record -e cycles,cache-"
	zoffers "--no-children --no-demangle --no-inline" "pa-report --no-"
	zoffers "offcpu-time gpu-time" "pa-convert --pprof --event cpu-clock,"
	zoffers "record report convert gpu-attach" "perf-agent "
	zoffers "--spool --spool-max" "perf-agent --sp"
	zoffers "--unwind --unwind-rows" "perf-agent record --unw"
	zoffers "--check" "pa-gpu-attach --c"
	zoffers "http:// https://" "perf-agent --push "
}

@test "completions: zsh: the command after -- (pa-record, pa-gpu-attach), then its own arguments" {
	zcomp "pa-record -p 1 -- bas" "pa-record -- ls a" "pa-gpu-attach bas" \
		"pa-gpu-attach -q -- ls a" "perf-agent record -- ls a" "pa-record -o a" \
		"pa-report --diff a"
	zoffers "bash" "pa-record -p 1 -- bas"
	zoffers "afile" "pa-record -- ls a"
	zoffers "bash" "pa-gpu-attach bas"
	zoffers "afile" "pa-gpu-attach -q -- ls a"
	zoffers "afile" "perf-agent record -- ls a"
	zoffers "afile" "pa-record -o a"
	zoffers "afile" "pa-report --diff a"
}
