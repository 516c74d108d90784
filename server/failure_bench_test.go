package server

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// BenchmarkRunAuditedPostgres is /v1/run audited to a PostgreSQL table,
// the audit failing closed (a ping before each statement) or open (no
// ping, as before): the price of not running unaudited statements.
func BenchmarkRunAuditedPostgres(b *testing.B) {
	_, dsn := dbtest.Postgres(b)
	db, err := sql.Open("pgx", dsn)
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(4)
	a, err := NewPostgresAuditor(context.Background(), db, "")
	require.NoError(b, err)
	for _, mode := range []struct {
		name     string
		failOpen bool
	}{{"closed", false}, {"open", true}} {
		b.Run(mode.name, func(b *testing.B) {
			h, err := New(Config{Pipeline: newPipeline(b, sqlModel("SELECT 1"), 0), Auth: NoAuth(), Auditor: a, AuditFailOpen: mode.failOpen,
				RateLimit: RateLimit{Unlimited: true}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest("POST", "/v1/run", strings.NewReader(`{"sql":"SELECT code, title FROM courses ORDER BY code LIMIT 5"}`))
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				require.Equal(b, 200, w.Code, "%s", w.Body.String())
			}
		})
	}
}
