# SPDX-License-Identifier: Apache-2.0
"""train.py [STEPS]: the PyTorch workload of the GPU check (tests/gpu/check.sh).

A two-layer MLP trained with SGD on random data: STEPS steps (default 30) of
train_step() after three warm_up() ones, timed by CUDA events around the steps (the
GPU time they took, start to end) and by the wall clock:

    train steps STEPS gpu_ns NS wall_s SECONDS
"""
import sys
import time

import torch


def train_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()


def warm_up(model, opt, x, y):
    for _ in range(3):
        train_step(model, opt, x, y)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096)
    ).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(4096, 4096, device=dev)
    y = torch.randn(4096, 4096, device=dev)
    warm_up(model, opt, x, y)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    for _ in range(steps):
        train_step(model, opt, x, y)
    end.record()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    print(f"train steps {steps} gpu_ns {start.elapsed_time(end) * 1e6:.0f} wall_s {wall:.6f}")


if __name__ == "__main__":
    main()
