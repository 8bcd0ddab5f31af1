# SPDX-License-Identifier: Apache-2.0
# Go workloads (tests/workloads/go/), built by a chosen Go toolchain: /usr/bin/go
# (Debian 12's 1.19) or sid's (lib/sid_go).
#
# Load after the shared helpers:  load lib/helpers
#                                 load lib/go

# go_build GO SRC VARIANT OUT: builds SRC (a .go file, or a directory with a go.mod)
# with the toolchain GO into OUT, offline, with cgo on.  VARIANT is the link:
#   plain  as go builds it by default
#   sw     -ldflags="-s -w": no .symtab and no DWARF; .gopclntab remains
#   w      -ldflags=-w: no DWARF
#   pie    -buildmode=pie
# The build cache is $PA_ROOT/build/go-cache (shared by toolchains and tests); GOPATH
# is in the test's tmpdir, and nothing is read from or written to $HOME.  Fails the
# test with go's output when the build fails.
go_build() {
	local go=$1 src=$2 variant=$3 out=$4 dir target log
	local flags=()
	case $variant in
	plain) ;;
	sw) flags=(-ldflags="-s -w") ;;
	w) flags=(-ldflags=-w) ;;
	pie) flags=(-buildmode=pie) ;;
	*)
		fail "go_build: no variant $variant (plain, sw, w or pie)"
		return 1
		;;
	esac
	if [ -d "$src" ]; then
		dir=$src target=.
	else
		dir=$(dirname "$src") target=$(basename "$src")
	fi
	case $out in
	/*) ;;
	*) out=$PWD/$out ;;
	esac
	mkdir -p "$PA_ROOT/build/go-cache"
	log=$BATS_TEST_TMPDIR/go-build.log
	if ! (cd "$dir" && env GOCACHE="$PA_ROOT/build/go-cache" \
		GOPATH="$BATS_TEST_TMPDIR/gopath" GOENV=off GOFLAGS= GO111MODULE=on \
		GOPROXY=off GOSUMDB=off GOTOOLCHAIN=local CGO_ENABLED=1 \
		"$go" build -o "$out" "${flags[@]}" "$target") >"$log" 2>&1; then
		fail "go_build: $go build $variant $src failed: $(cat "$log")"
		return 1
	fi
}
