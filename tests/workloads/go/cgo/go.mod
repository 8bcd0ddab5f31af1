module perf-agent/tests/workloads/go/cgo

go 1.19
