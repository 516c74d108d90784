// Package cputime reads the CPU time of the calling thread, for the
// latency benchmarks: on a machine other processes load, wall-clock
// percentiles measure the scheduler as much as the call, its CPU time
// the call alone.
package cputime

import "time"

// Thread returns the CPU time, user and system, the calling OS thread
// has used since it started (Linux: CLOCK_THREAD_CPUTIME_ID, nanosecond
// resolution), and false where the platform reports none. The caller
// locks its goroutine to the thread (runtime.LockOSThread) for the span
// it measures; time spent by other goroutines (the garbage collector's
// background workers) is not counted.
func Thread() (time.Duration, bool) { return thread() }
