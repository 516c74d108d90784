package sqlite

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The parts of SQLite's file formats (https://www.sqlite.org/fileformat.html)
// that move on every commit.
const (
	// changeCounterOffset is where the database header keeps the file
	// change counter, which every commit in rollback-journal mode
	// increments (4 bytes).
	changeCounterOffset, changeCounterLen = 24, 4
	// walHeaderLen covers the WAL header through its salts: a checkpoint
	// that restarts the log changes the checkpoint sequence and salts,
	// and within one log every commit appends frames (its size grows).
	walHeaderLen = 24
)

// DataVersion returns a token that changes on every commit to the
// database file: the file change counter of its header, and with a
// write-ahead log the log's size and header (checkpoint sequence and
// salts). Used as the data version of the service's answer cache
// (server.Cache.DataVersion). An error means the files cannot be read
// (removed, no permission).
func (e *Executor) DataVersion(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	counter, _, err := readAt(e.path, changeCounterOffset, changeCounterLen)
	if err != nil {
		return "", fmt.Errorf("sqlite: data version: %w", err)
	}
	v := hex.EncodeToString(counter)
	wal, size, err := readAt(e.path+"-wal", 0, walHeaderLen)
	switch {
	case err == nil:
		v += fmt.Sprintf("/%d/%x", size, wal)
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("sqlite: data version: %w", err)
	}
	return v, nil
}

// readAt returns up to n bytes of the file at path from off (fewer when
// the file is shorter: an empty log is a valid state) and its size.
func readAt(path string, off int64, n int) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	b := make([]byte, n)
	k, err := f.ReadAt(b, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	return b[:k], st.Size(), nil
}
