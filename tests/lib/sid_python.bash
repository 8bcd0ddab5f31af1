# SPDX-License-Identifier: Apache-2.0
# Debian sid's CPython 3.14 and 3.15 (scripts/sid-python), newer than Debian 12 ships.
#
# Load after the shared helpers:  load lib/helpers
#                                 load lib/sid_python

# sid_python VER: the wrapper that runs sid's pythonVER (3.14 or 3.15), also left in
# $SID_PYTHON; VER-shared (e.g. 3.14-shared) is the same interpreter from its
# libpython.  The first call of a run makes $PA_ROOT/build/sid-python (a download of
# about 25 MB); later ones only check it.  Skips the test, with scripts/sid-python's
# reason, when the packages cannot be fetched (tried once per bats run); any other
# failure fails it.  Call it plainly, not in $(...), where skip cannot end the test:
#   sid_python 3.14
#   run "$SID_PYTHON" -c ...
sid_python() {
	local v=$1 dir=$PA_ROOT/build/sid-python out rc=0
	local failed=$BATS_RUN_TMPDIR/sid-python.unfetchable
	case $v in
	3.14 | 3.15 | 3.14-shared | 3.15-shared) ;;
	*)
		fail "sid_python: no Debian sid python$v (3.14 or 3.15, or VER-shared)"
		return 1
		;;
	esac
	if [ -f "$failed" ]; then
		out=$(cat "$failed")
		rc=75
	else
		out=$("$PA_ROOT/scripts/sid-python" "$dir" 2>&1) || rc=$?
		out=$(tail -1 <<<"$out")
		[ $rc -ne 75 ] || echo "$out" >"$failed"
	fi
	if [ $rc -eq 75 ]; then
		[ "$BASH_SUBSHELL" -eq 0 ] ||
			fail "$out (call sid_python plainly, not in \$(...), so that it can skip)" || return 1
		skip "$out"
	fi
	[ $rc -eq 0 ] || fail "scripts/sid-python $dir failed: $out" || return 1
	SID_PYTHON=$dir/bin/python$v
	echo "$SID_PYTHON"
}
