package main

import (
	"context"
	"database/sql"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/syncbuf"
	"github.com/text2sql-go/text2sql/server"
)

type dbExecutor struct{ db *sql.DB }

func (e dbExecutor) DB() *sql.DB { return e.db }

type nopStore struct{}

func (nopStore) Get(context.Context, string) ([]byte, bool, error)        { return nil, false, nil }
func (nopStore) Set(context.Context, string, []byte, time.Duration) error { return nil }

// An audit database on the data's own server, with the answer cache on,
// is named at start: its records would keep the cache from ever hitting.
func TestWarnSharedWAL(t *testing.T) {
	data, dsn := dbtest.Postgres(t)
	audit, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer audit.Close()
	version := func(context.Context) (string, error) { return "", nil }
	for _, tc := range []struct {
		name  string
		cache server.Cache
		warn  bool
	}{
		{"cache on", server.Cache{Store: nopStore{}, DataVersion: version}, true},
		{"cache off", server.Cache{}, false},
	} {
		var log syncbuf.Buffer
		warnSharedWAL(context.Background(), audit, dbExecutor{data}, &server.Config{Cache: tc.cache}, slog.New(slog.NewTextHandler(&log, nil)))
		assert.Equal(t, tc.warn, len(log.String()) > 0, "%s: %q", tc.name, log.String())
	}
}
