// SPDX-License-Identifier: Apache-2.0

// hot: a CPU-bound Go program whose profile is known in advance.  main.hotLeaf takes
// about 70% of the CPU and main.warmMid about 25%; warmMid's loop is made of inlined
// calls (inlinedAdd, and inlinedOuter, which inlines inlinedInner), so its samples
// land in inlined code.  Each loop iteration is the same chain of dependent
// operations, so the shares follow from the iteration counts.  Prints "ready", then
// runs until killed, or for argv[1] seconds.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

const (
	mulK      = 0x9e3779b97f4a7c15
	hotIters  = 2800000
	warmIters = 1000000
)

// sink keeps the loops' results alive.
var sink uint64

//go:noinline
func hotLeaf(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x = (x^(x>>7))*mulK + uint64(i)
	}
	return x
}

func inlinedInner(x uint64) uint64 {
	return x ^ (x >> 7)
}

func inlinedOuter(x uint64) uint64 {
	return inlinedInner(x) * mulK
}

func inlinedAdd(a, b uint64) uint64 {
	return a + b
}

//go:noinline
func warmMid(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x = inlinedAdd(inlinedOuter(x), uint64(i))
	}
	return x
}

func main() {
	var deadline time.Time
	if len(os.Args) > 1 {
		secs, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil || secs <= 0 {
			fmt.Fprintln(os.Stderr, "usage: hot [SECONDS]")
			os.Exit(2)
		}
		deadline = time.Now().Add(time.Duration(secs * float64(time.Second)))
	}
	fmt.Println("ready")
	x := uint64(1)
	for deadline.IsZero() || time.Now().Before(deadline) {
		x = hotLeaf(x, hotIters)
		x = warmMid(x, warmIters)
	}
	sink = x
}
