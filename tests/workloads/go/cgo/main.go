// SPDX-License-Identifier: Apache-2.0

// cgo: Go calls the C function c_hot (hot.c, about 50% of the CPU), which calls back
// into the exported Go function goCallback (about 40%), so sampled stacks run
// Go -> C -> Go.  Each loop iteration, in C and in Go, is the same chain of dependent
// operations, so the shares follow from the iteration counts.  Prints "ready", then
// runs until killed, or for argv[1] seconds.  Build the directory with CGO_ENABLED=1.
package main

/*
#include <stdint.h>
uint64_t c_hot(uint64_t x, int rounds);
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

const mulK = 0x9e3779b97f4a7c15

// sink keeps the loops' results alive.
var sink uint64

// Not inlined into cgo's wrapper, so that its samples are main.goCallback's.
//
//export goCallback
//go:noinline
func goCallback(x C.uint64_t, n C.int) C.uint64_t {
	v := uint64(x)
	for i := 0; i < int(n); i++ {
		v = (v^(v>>7))*mulK + uint64(i)
	}
	return C.uint64_t(v)
}

func main() {
	var deadline time.Time
	if len(os.Args) > 1 {
		secs, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil || secs <= 0 {
			fmt.Fprintln(os.Stderr, "usage: cgo [SECONDS]")
			os.Exit(2)
		}
		deadline = time.Now().Add(time.Duration(secs * float64(time.Second)))
	}
	fmt.Println("ready")
	x := C.uint64_t(1)
	for deadline.IsZero() || time.Now().Before(deadline) {
		x = C.c_hot(x, 4)
	}
	sink = uint64(x)
}
