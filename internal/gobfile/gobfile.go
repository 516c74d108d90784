// Package gobfile keeps a value in a file, gob-encoded, replaced whole:
// for the caches of derived data (a schema snapshot, a retriever's
// documents), which many processes may read while one writes.
package gobfile

import (
	"bufio"
	"bytes"
	"encoding/gob"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Write encodes v into the file at path: into a temporary file in the
// same directory (created with mode 0700 if missing), then renamed over
// path, so a reader sees the old file or the new one, never a part.
// Errors are the encoder's and the file system's.
func Write(path string, v any) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		if rerr := os.Remove(f.Name()); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// Read decodes the file at path into v, which must be a pointer. Errors
// are the file system's (fs.ErrNotExist when there is no file) and the
// decoder's.
func Read(path string, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// Decoded as read: the file is not held in memory beside its value.
	return gob.NewDecoder(bufio.NewReaderSize(f, readBuffer)).Decode(v)
}

// readBuffer is Read's buffer: large enough that a cache of tens of
// megabytes is read in a few thousand system calls.
const readBuffer = 1 << 16
