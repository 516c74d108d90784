//go:build !race

package mysql

// raceEnabled: the race detector multiplies memory, so RSS bounds are
// not asserted under it.
const raceEnabled = false
