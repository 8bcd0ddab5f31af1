#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Every drop is counted and said: what pa-record could not follow or keep, and what
# the readers left out of a file.  One observable fact per test.

load lib/helpers

@test "drops: a forked child that does not fit the targets table is counted and named" {
	require_root
	w=$(wl forker)
	PA_RECORD_MAX_TARGETS=1 pa_record -o p.data -- "$w" fork 1 0.2 2>rec.err >/dev/null ||
		fail "pa-record failed: $(cat rec.err)"
	cat rec.err
	grep -q '^pa-record: warning: 1 forked processes were not followed (more than 1 processes); record them with -a$' rec.err ||
		fail "the child left out was not reported"
	# The control: with room, it is followed and nothing is said.
	pa_record -o q.data -- "$w" fork 1 0.2 2>rec.err >/dev/null || fail "$(cat rec.err)"
	if grep -q 'not followed' rec.err; then fail "a drop reported with room to spare"; fi
}

@test "drops: PA_RECORD_MAX_TARGETS takes a count" {
	PA_RECORD_MAX_TARGETS=0 run -1 "$PA_RECORD" -o p.data -- true
	[[ $output == "pa-record: error: PA_RECORD_MAX_TARGETS=0: not a count;"* ]]
}

# set_sample_ids IN OUT N: a copy of perf.data IN whose first N samples name event id
# 0xdead (pa-record's samples lead with PERF_SAMPLE_IDENTIFIER).
set_sample_ids() {
	perl -e '
		my ($in, $out, $n) = @ARGV;
		open(my $f, "<:raw", $in) or die "$in: $!"; local $/; my $d = <$f>; close $f;
		my ($off, $size) = unpack("Q<Q<", substr($d, 40, 16));
		my $p = $off;
		while ($n > 0 && $p + 8 <= $off + $size) {
			my ($type, $misc, $len) = unpack("L<S<S<", substr($d, $p, 8));
			die "bad record at $p" if $len < 8;
			if ($type == 9) { substr($d, $p + 8, 8) = pack("Q<", 0xdead); $n--; }
			$p += $len;
		}
		die "too few samples" if $n;
		open($f, ">:raw", $out) or die "$out: $!"; print $f $d; close $f;
	' "$@"
}

@test "drops: pa-report and pa-convert count samples whose event id the file does not describe" {
	require_root
	# Two events: with one, perf and we take every sample for it whatever its id.
	w=$(wl offcpu_sleep)
	# Plain records (-z0): the sample ids are rewritten in place.
	pa_record -q -z0 --offcpu -o p.data -- "$w" 1 >/dev/null || fail "pa-record failed"
	set_sample_ids p.data bad.data 5 || fail "could not rewrite the sample ids"
	run "$PA_REPORT" -i bad.data --no-children --sort sym -g none
	[ "$status" -eq 0 ] || fail "pa-report failed: $output"
	grep -q 'warning: bad.data: 5 samples name an event id the file does not describe; left out' <<<"$output" ||
		fail "no count of the samples left out: $output"
	run "$PA_CONVERT" -i bad.data --folded
	[ "$status" -eq 0 ] || fail "pa-convert failed: $output"
	grep -q '5 samples name an event id' <<<"$output" || fail "pa-convert said nothing"
	run "$PA_REPORT" -i p.data --no-children --sort sym -g none
	if grep -q 'event id the file does not describe' <<<"$output"; then fail "reported on a good file"; fi
}

@test "drops: samples the ring buffer could not take are PERF_RECORD_LOST_SAMPLES, as perf and pa-report count them" {
	require_root
	require_perf
	w=$(wl cpu_split)
	PA_RECORD_DROP_EVERY=4 pa_record -o p.data -- "$w" 1 2>rec.err >/dev/null ||
		fail "pa-record failed: $(cat rec.err)"
	cat rec.err
	read -r kept lost < <(sed -nE 's/^pa-record: ([0-9]+) samples, ([0-9]+) lost,.*/\1 \2/p' rec.err)
	[ "${lost:-0}" -gt 0 ] || fail "no drop counted"
	# One in four dropped: a third of what was kept, give or take the rounding.
	[ $((lost * 3)) -ge $((kept - 3)) ] && [ $((lost * 3)) -le $((kept + 6)) ] ||
		fail "$lost lost for $kept kept, not one in four"
	perf report -i p.data --stdio 2>&1 | grep -qx "# Total Lost Samples: $lost" ||
		fail "perf does not count $lost lost samples"
	"$PA_REPORT" -i p.data --no-children -g none | grep -qx "# Lost samples: $lost" ||
		fail "pa-report does not count $lost lost samples"
}
