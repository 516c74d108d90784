package server

import (
	"net/http/httptest"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
)

// For the tests of package server_test (the telemetry sub-packages import
// server, so their tests against the real service live there).
var (
	ServerForTest = testServer
	TokenForTest  = testToken
)

// NewMapStoreForTest returns an in-memory AnswerStore.
func NewMapStoreForTest() AnswerStore { return &mapStore{} }

// PipelineForTest is newPipeline with the default scripted model.
func PipelineForTest(t testing.TB) *text2sql.Pipeline {
	return newPipeline(t, sqlModel("SELECT code, title FROM courses ORDER BY code LIMIT 3"), 0)
}

// DoForTest is do, returning the status and body.
func DoForTest(t testing.TB, srv *httptest.Server, method, path, token string, body any) (int, []byte) {
	r := do(t, srv, method, path, token, body)
	return r.status, r.body
}
