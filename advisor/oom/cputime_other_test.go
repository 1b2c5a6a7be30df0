//go:build !unix

package oom

// cpuTimeNs is not measured off Unix; the benchmark then reports 0.
func cpuTimeNs() int64 { return 0 }
