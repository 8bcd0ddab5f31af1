// SPDX-License-Identifier: Apache-2.0
#include <stdint.h>

#include "_cgo_export.h"

#define MUL_K	 0x9e3779b97f4a7c15ULL
#define C_ITERS	 500000
#define GO_ITERS 400000

uint64_t c_hot(uint64_t x, int rounds)
{
	for (int r = 0; r < rounds; r++) {
		for (uint64_t i = 0; i < C_ITERS; i++)
			x = (x ^ (x >> 7)) * MUL_K + i;
		x = goCallback(x, GO_ITERS);
	}
	return x;
}
