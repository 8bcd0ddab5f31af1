// SPDX-License-Identifier: Apache-2.0
/*
 * cuda_sync [STEPS]: a training loop's shape, without a GPU.  Each step (default 10)
 * sleeps 100 ms in load_batch(), then 100 ms in train_step() ->
 * cudaStreamSynchronize(), a stand-in for the runtime's, which blocks the thread
 * until the GPU has run the step's kernels.  Off the CPU, both are sleeps; a reader
 * labels the second as waiting on the GPU.
 */
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void nap(void)
{
	struct timespec ts = {0, 100000000};

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) int cudaStreamSynchronize(void *stream)
{
	(void)stream;
	nap();
	return 0;
}

__attribute__((noinline)) void load_batch(void)
{
	nap();
}

__attribute__((noinline)) void train_step(void)
{
	cudaStreamSynchronize(NULL);
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 10, i;

	for (i = 0; i < steps; i++) {
		load_batch();
		train_step();
	}
	return 0;
}
