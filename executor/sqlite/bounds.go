package sqlite

// #include "bounds.h"
import "C"

import (
	"fmt"
	"reflect"
	"sync"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// registerBounded replaces instr, replace and the two-argument trim
// functions on conn with the linear-time equivalents of bounds.c. SQLite
// interrupts a statement only between VM instructions, so a built-in
// whose one call is quadratic in its input (instr(10 MB, 400 KB) ran 95 s)
// would outlast any time limit.
func registerBounded(conn *sqlite3.SQLiteConn) error {
	if rc := C.bounds_register(dbHandle(conn)); rc != 0 {
		return fmt.Errorf("sqlite: registering bounded functions: %w", sqlite3.ErrNo(rc))
	}
	return nil
}

// dbHandle returns conn's sqlite3 handle, which go-sqlite3 keeps in an
// unexported field and exposes no other way.
func dbHandle(conn *sqlite3.SQLiteConn) *C.sqlite3 {
	return (*C.sqlite3)(reflect.ValueOf(conn).Elem().FieldByName("db").UnsafePointer())
}

// heapLimit guards the process's SQLite hard heap limit (one per process,
// sqlite3_hard_heap_limit64), and ours is the value Open last set.
var heapLimit struct {
	sync.Mutex
	ours int64
}

// limitHeap bounds the memory SQLite may allocate in this process to at
// least max bytes (max > 0): past the bound an allocation fails and the
// statement with SQLITE_NOMEM. With several executors the largest
// MaxMemory holds, so no executor's statements are refused below their
// own bound. A limit the host set itself (one Open did not set) is left
// as it is.
func limitHeap(max int64) {
	heapLimit.Lock()
	defer heapLimit.Unlock()
	cur := hardHeapLimit(-1)
	if cur != 0 && cur != heapLimit.ours || cur >= max {
		return
	}
	hardHeapLimit(max)
	heapLimit.ours = max
}

// hardHeapLimit is sqlite3_hard_heap_limit64: it sets the limit to n
// bytes (0: none) and returns the previous one; a negative n only
// returns it.
func hardHeapLimit(n int64) int64 { return int64(C.bounds_heap_limit(C.longlong(n))) }
