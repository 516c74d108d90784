package fingerprint

import (
	"os"
	"strconv"
	"sync"
)

// Program returns the identity of the running program, for the keys of
// caches of what its code derives (a schema snapshot, documents, a
// search index): its executable's path, size and modification time, so
// a new build, whose code may derive differently, never reads what an
// older one wrote. ok is false when the executable cannot be found; such
// caches are then not used.
func Program() (id string, ok bool) { return program() }

var program = sync.OnceValues(func() (string, bool) {
	path, err := os.Executable()
	if err != nil {
		return "", false
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	return path + "\x00" + strconv.FormatInt(st.Size(), 10) + "\x00" + strconv.FormatInt(st.ModTime().UnixNano(), 10), true
})
