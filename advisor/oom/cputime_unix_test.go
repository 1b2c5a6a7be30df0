//go:build unix

package oom

import "syscall"

// cpuTimeNs is the CPU time (user + system) this process has used. The
// benchmark reports it per op because wall time on a shared machine
// measures the other tenants as much as the parser.
func cpuTimeNs() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
