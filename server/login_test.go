package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
)

// privileged is an executor whose login reports elevated powers, as the
// PostgreSQL and MySQL executors do for a superuser.
type privileged struct {
	text2sql.Executor
	privs []string
}

func (p privileged) ElevatedPrivileges() []string { return p.privs }

// /health reports the login's standing as the document describes it:
// elevated with the powers named, not elevated, or absent when the
// executor cannot tell.
func TestHealthLogin(t *testing.T) {
	var o openAPI
	do(t, testServer(t, Config{}), "GET", "/openapi.json", "", nil).json(t, &o.doc)
	for _, tc := range []struct {
		name string
		ex   any
		want *Login
	}{
		{"elevated", privileged{fixture.exec, []string{"superuser", "member of pg_execute_server_program"}},
			&Login{Elevated: true, Privileges: []string{"superuser", "member of pg_execute_server_program"}}},
		{"read-only", privileged{fixture.exec, nil}, &Login{Privileges: []string{}}},
		{"unknown", fixture.exec, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			login := LoginOf(tc.ex)
			require.Equal(t, tc.want, login)
			srv := testServer(t, Config{Info: Info{Login: login}})
			r := do(t, srv, "GET", "/health", testToken, nil)
			o.check(t, "GET", "/health", r)
			var h HealthResponse
			r.json(t, &h)
			assert.Equal(t, tc.want, h.Login)
			if tc.want == nil {
				assert.NotContains(t, string(r.body), `"login"`)
			}
		})
	}
}
