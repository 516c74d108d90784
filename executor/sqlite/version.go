package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The parts of SQLite's file formats (https://www.sqlite.org/fileformat.html,
// https://www.sqlite.org/walformat.html) that move on every commit.
const (
	// changeCounterOffset is where the database header keeps the file
	// change counter, which every commit in rollback-journal mode
	// increments (4 bytes). WAL mode leaves it alone.
	changeCounterOffset, changeCounterLen = 24, 4
	// walHeaderLen covers the WAL header through its salts, which a
	// checkpoint that restarts the log changes.
	walHeaderLen = 24
	// shmHeaderLen is the first copy of the wal-index header in the -shm
	// file: its iChange counter moves on every transaction and mxFrame
	// on every commit, whichever process wrote, even when a restarted
	// log is rewritten in place at the same size.
	shmHeaderLen = 48
)

// DataVersion returns a token that changes on every commit to the
// database, by any process, and is the same in every process reading the
// file (so replicas share cache entries): the file change counter of the
// header, the file's size and modification time (a checkpoint writes
// it, also when the last connection then deletes the log), and with a
// write-ahead log its size and header and the wal-index header of -shm.
// Used as the data version of the service's answer cache
// (server.Cache.DataVersion). A checkpoint that changes the file twice
// within the file system's timestamp resolution with no log left is the
// one write it can miss. An error means the files cannot be read
// (removed, no permission).
func (e *Executor) DataVersion(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	counter, st, err := readAt(e.path, changeCounterOffset, changeCounterLen)
	if err != nil {
		return "", fmt.Errorf("sqlite: data version: %w", err)
	}
	v := fmt.Sprintf("%x/%d/%d", counter, st.Size(), st.ModTime().UnixNano())
	for _, part := range []struct {
		suffix string
		n      int
	}{{"-wal", walHeaderLen}, {"-shm", shmHeaderLen}} {
		b, st, err := readAt(e.path+part.suffix, 0, part.n)
		switch {
		case err == nil:
			v += fmt.Sprintf("%s/%d/%x", part.suffix, st.Size(), b)
		case !errors.Is(err, fs.ErrNotExist):
			return "", fmt.Errorf("sqlite: data version: %w", err)
		}
	}
	return v, nil
}

// readAt returns up to n bytes of the file at path from off (fewer when
// the file is shorter: an empty log is a valid state) and its metadata.
func readAt(path string, off int64, n int) ([]byte, fs.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	b := make([]byte, n)
	k, err := f.ReadAt(b, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	return b[:k], st, nil
}
