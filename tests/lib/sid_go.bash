# SPDX-License-Identifier: Apache-2.0
# Debian sid's Go toolchain (scripts/sid-go), newer than Debian 12's go 1.19, or an
# older release's (bullseye: Go 1.15).
#
# Load after the shared helpers:  load lib/helpers
#                                 load lib/sid_go

# sid_go [SUITE]: the wrapper that runs sid's (SUITE's) go offline, also left in
# $SID_GO.  The first call of a run makes $PA_ROOT/build/sid-go (SUITE-go; a download of
# about 48 MB, bullseye's 40); later ones only check it.  Skips the test, with scripts/sid-go's reason, when the packages cannot be
# fetched (tried once per bats run); any other failure fails it.  Call it plainly, not
# in $(...), where skip cannot end the test:
#   sid_go
#   go_build "$SID_GO" ...
sid_go() {
	local suite=${1:-sid} out rc=0
	local dir=$PA_ROOT/build/$suite-go failed=$BATS_RUN_TMPDIR/$suite-go.unfetchable
	if [ -f "$failed" ]; then
		out=$(cat "$failed")
		rc=75
	else
		out=$("$PA_ROOT/scripts/sid-go" "$dir" "$suite" 2>&1) || rc=$?
		out=$(tail -1 <<<"$out")
		[ $rc -ne 75 ] || echo "$out" >"$failed"
	fi
	if [ $rc -eq 75 ]; then
		[ "$BASH_SUBSHELL" -eq 0 ] ||
			fail "$out (call sid_go plainly, not in \$(...), so that it can skip)" || return 1
		skip "$out"
	fi
	[ $rc -eq 0 ] || fail "scripts/sid-go $dir failed: $out" || return 1
	SID_GO=$dir/bin/go
	echo "$SID_GO"
}
