package cputime_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/cputime"
)

// TestThreadCountsWork: the thread's CPU time grows by about the work
// done on it, and not while it sleeps.
func TestThreadCountsWork(t *testing.T) {
	if runtime.GOOS != "linux" {
		_, ok := cputime.Thread()
		require.False(t, ok)
		t.Skip("thread CPU time is read on Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, ok := cputime.Thread()
	require.True(t, ok)
	time.Sleep(50 * time.Millisecond)
	c1, _ := cputime.Thread()
	assert.Less(t, c1-c0, 25*time.Millisecond, "sleeping is no CPU time")
	x := 0
	for i := range 50_000_000 {
		x ^= i * i
	}
	c2, _ := cputime.Thread()
	assert.Greater(t, c2-c1, time.Millisecond, "50 million multiplications are (x=%d)", x)
}
