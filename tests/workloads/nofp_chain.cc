// SPDX-License-Identifier: Apache-2.0
// nofp_chain.cc [seconds]: the C++ variant of nofp_chain.c for tests/unwind.bats
// (g++ -O2 -fomit-frame-pointer): a virtual call, a std::vector and exceptions in
// the chain main -> Outer::run -> Mid::step -> chain_hot.
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

static volatile unsigned long sink;

namespace wl {
__attribute__((noinline)) unsigned long chain_hot(std::vector<unsigned long> &v, unsigned long x)
{
	for (int i = 0; i < 200000; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		v[i & 7] = x;
	}
	return x ^ v[3];
}

struct Step {
	virtual ~Step() = default;
	virtual unsigned long step(unsigned long x) = 0;
};

struct Mid : Step {
	std::vector<unsigned long> v = std::vector<unsigned long>(8);
	__attribute__((noinline)) unsigned long step(unsigned long x) override
	{
		if (x == 42)
			throw std::runtime_error("never");
		return chain_hot(v, x) + 1;
	}
};

struct Outer {
	Step *s;
	__attribute__((noinline)) unsigned long run(unsigned long x)
	{
		try {
			return s->step(x) + 3;
		} catch (const std::exception &) {
			return 0;
		}
	}
};
} // namespace wl

int main(int argc, char **argv)
{
	double secs = argc > 1 ? std::atof(argv[1]) : 3;
	wl::Mid mid;
	wl::Outer outer{&mid};
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(secs);
	while (std::chrono::steady_clock::now() < end)
		sink += outer.run(sink);
	return 0;
}
