package server

import (
	"context"
	"database/sql"
	"fmt"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// Two replicas append to one PostgreSQL audit table under 200 concurrent
// requests: every statement leaves exactly one row. The service's role may
// only insert: the log is append-only for it.
func TestPostgresAuditorTwoReplicas(t *testing.T) {
	admin, dsn := dbtest.Postgres(t)
	ctx := context.Background()
	_, err := NewPostgresAuditor(ctx, admin, "bad name; DROP")
	assert.Error(t, err, "bad table name accepted")
	_, err = NewPostgresAuditor(ctx, admin, "") // the owner creates the table
	require.NoError(t, err)
	svc := dbtest.Name("t2s_audit")
	dbtest.Exec(t, admin, `CREATE ROLE `+svc+` LOGIN`, `GRANT INSERT ON text2sql_audit TO `+svc)
	t.Cleanup(func() {
		_, err := admin.Exec(`DROP OWNED BY ` + svc + `; DROP ROLE ` + svc)
		assert.NoError(t, err, "drop role")
	})
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.User(svc)

	const requests = 200
	var replicas []*httptest.Server
	for range 2 {
		db, err := sql.Open("pgx", u.String())
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		db.SetMaxOpenConns(4)
		a, err := NewPostgresAuditor(ctx, db, "")
		require.NoError(t, err, "the table exists: INSERT is enough")
		replicas = append(replicas, testServer(t, Config{Auditor: a}))
	}
	var wg sync.WaitGroup
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := do(t, replicas[i%2], "POST", "/v1/run", testToken, map[string]string{"sql": fmt.Sprintf("SELECT %d AS n", i)})
			assert.Equal(t, 200, r.status)
		}()
	}
	wg.Wait()
	var rows, distinct, ok int
	require.NoError(t, admin.QueryRow(`SELECT count(*), count(DISTINCT sql), count(*) FILTER (WHERE outcome = 'ok' AND principal = 'alice' AND NOT truncated)
		FROM text2sql_audit`).Scan(&rows, &distinct, &ok))
	assert.Equal(t, requests, rows, "one row per statement")
	assert.Equal(t, requests, distinct)
	assert.Equal(t, requests, ok)

	svcDB, err := sql.Open("pgx", u.String())
	require.NoError(t, err)
	defer svcDB.Close()
	for _, q := range []string{`DELETE FROM text2sql_audit`, `UPDATE text2sql_audit SET outcome = 'x'`, `SELECT count(*) FROM text2sql_audit`} {
		_, err := svcDB.Exec(q)
		assert.ErrorContains(t, err, "permission denied", q)
	}
}

// Replicas starting at the same moment on a database without the audit
// table all start: one creates it, the others wait for it and find it.
func TestPostgresAuditorReplicasStartTogether(t *testing.T) {
	admin, _ := dbtest.Postgres(t)
	ctx := context.Background()
	const replicas, rounds = 6, 5
	for round := range rounds {
		table := fmt.Sprintf("audit_start_%d", round)
		start := make(chan struct{})
		errs := make(chan error, replicas)
		var wg sync.WaitGroup
		for range replicas {
			wg.Go(func() {
				<-start
				_, err := NewPostgresAuditor(ctx, admin, table)
				errs <- err
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err, "round %d", round)
		}
	}
}
