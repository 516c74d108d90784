package server

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/feedback"
	fbsqlite "github.com/text2sql-go/text2sql/feedback/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/wire"
)

const (
	bobToken   = "tok-bob-0123456789abcdef0"
	carolToken = "tok-carol-0123456789abcdef"
	coursesQ   = "How many courses are offered by the university?"
	plantedSQL = "SELECT 0 AS n"
)

// teaching is one replica of a service that learns from feedback: its
// example store on a shared file, example reuse on, carol a reviewer.
type teaching struct {
	model *llmtest.Model
	audit *recorder
}

// teachingServer starts a replica on the example store at path (its own
// handle, as another process would have) with cache as its answer cache.
func teachingServer(t *testing.T, path string, cache Cache) (*teaching, func(method, url, token string, body any) response) {
	t.Helper()
	st, err := fbsqlite.Open(path, fbsqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	model := sqlModel("SELECT count(*) AS n FROM courses")
	gen, err := generator.New(model, generator.Options{Dialect: text2sql.DialectSQLite})
	require.NoError(t, err)
	p, err := text2sql.New(text2sql.Config{Retriever: &feedback.Retriever{Base: fixture.ret, Store: st}, Generator: gen, Executor: fixture.exec, MaxRows: 100})
	require.NoError(t, err)
	auth, err := NewStaticTokens(map[string]string{"alice": testToken, "bob": bobToken, "carol": carolToken})
	require.NoError(t, err)
	reviewer, err := ParseReviewers("carol", nil)
	require.NoError(t, err)
	tc := &teaching{model: model, audit: &recorder{}}
	srv := testServer(t, Config{Pipeline: p, Auth: auth, Feedback: &feedback.Recorder{Store: st, Guard: fixture.exec},
		Reviewer: reviewer, Auditor: tc.audit, Cache: cache})
	return tc, func(method, url, token string, body any) response { return do(t, srv, method, url, token, body) }
}

// asked returns the example /v1/ask reused for the token's principal
// ("" when the model answered) and the answer's SQL.
func asked(t *testing.T, call func(string, string, string, any) response, token string) (reused, sql string) {
	t.Helper()
	r := call("POST", "/v1/ask", token, map[string]string{"question": coursesQ})
	require.Equal(t, 200, r.status, "%s", r.body)
	var a wire.Answer
	r.json(t, &a)
	return a.ReusedExample, a.SQL
}

func vote(t *testing.T, call func(string, string, string, any) response, token, sql, verdict string) FeedbackResponse {
	t.Helper()
	r := call("POST", "/v1/feedback", token, map[string]string{"question": coursesQ, "sql": sql, "verdict": verdict})
	require.Equal(t, 200, r.status, "%s", r.body)
	var out FeedbackResponse
	r.json(t, &out)
	return out
}

// Break 1 of issue 38: bob's single up-vote is reused for bob only, not
// for alice, until a reviewer approves it; then for both, audited with
// the reviewer and the votes.
func TestUpVoteNotReusedForOthers(t *testing.T) {
	tc, call := teachingServer(t, filepath.Join(t.TempDir(), "examples.sqlite"), Cache{})
	id := feedback.ExampleID(coursesQ)

	out := vote(t, call, bobToken, plantedSQL, "up")
	assert.Equal(t, "pending", out.Status)
	reused, sql := asked(t, call, testToken)
	assert.Empty(t, reused, "bob's vote answered alice")
	assert.NotEqual(t, plantedSQL, sql)
	assert.Equal(t, 1, tc.model.CallCount(), "alice's question reached the model")
	reused, _ = asked(t, call, bobToken)
	assert.Equal(t, id, reused, "bob's own later question")
	assert.Equal(t, 1, tc.model.CallCount())

	// Only a reviewer reviews.
	for _, tok := range []string{testToken, bobToken} {
		r := call("POST", "/v1/examples/"+id+"/approve", tok, nil)
		assert.Equal(t, 403, r.status, "%s", r.body)
		assert.Equal(t, CodeNotReviewer, r.code(t))
		assert.Equal(t, CodeNotReviewer, call("GET", "/v1/examples", tok, nil).code(t))
	}
	r := call("GET", "/v1/examples", carolToken, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	var queue ExampleListBody
	r.json(t, &queue)
	require.Len(t, queue.Examples, 1)
	assert.Equal(t, feedback.StatusPending, queue.Examples[0].Status)
	assert.Equal(t, "bob", queue.Examples[0].By)
	assert.Equal(t, 404, call("POST", "/v1/examples/fb-00000000/approve", carolToken, nil).status)

	r = call("POST", "/v1/examples/"+id+"/approve", carolToken, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	for _, tok := range []string{testToken, bobToken} {
		reused, sql = asked(t, call, tok)
		assert.Equal(t, id, reused, "after the approval")
		assert.Equal(t, plantedSQL, sql)
	}
	assert.Equal(t, 1, tc.model.CallCount())
	r = call("GET", "/v1/examples", carolToken, nil)
	r.json(t, &queue)
	assert.Empty(t, queue.Examples, "the queue is empty")

	var approval *AuditEvent
	for _, e := range tc.audit.all() {
		if e.Outcome == "example approve" {
			approval = &e
		}
	}
	require.NotNil(t, approval, "the approval is audited")
	assert.Equal(t, "carol", approval.Principal)
	assert.Equal(t, plantedSQL, approval.SQL)
	assert.Equal(t, id+" proposed by bob; 1 up, 0 down", approval.Message)
	assert.Equal(t, id+" pending; 1 up, 0 down", tc.audit.all()[0].Message, "the vote is audited with what it did")
}

// Break 2 of issue 38: bob's down-vote flags alice's reviewed example for
// review and leaves it in use; carol's takes it out of use.
func TestDownVoteDoesNotStopReviewed(t *testing.T) {
	_, call := teachingServer(t, filepath.Join(t.TempDir(), "examples.sqlite"), Cache{})
	id := feedback.ExampleID(coursesQ)
	const good = "SELECT count(*) AS n FROM courses"
	for range 3 {
		vote(t, call, testToken, good, "up")
	}
	require.Equal(t, 200, call("POST", "/v1/examples/"+id+"/approve", carolToken, nil).status)

	out := vote(t, call, bobToken, good, "down")
	assert.Equal(t, []string{id}, out.Flagged)
	reused, _ := asked(t, call, testToken)
	assert.Equal(t, id, reused, "bob's down-vote stopped alice's reviewed example")
	var queue ExampleListBody
	call("GET", "/v1/examples", carolToken, nil).json(t, &queue)
	require.Len(t, queue.Examples, 1, "flagged for review")
	assert.True(t, queue.Examples[0].Review)

	vote(t, call, carolToken, good, "down")
	reused, _ = asked(t, call, testToken)
	assert.Empty(t, reused, "a reviewer's down-vote withdraws it")
	r := call("POST", "/v1/examples/"+id+"/reject", carolToken, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	var rev ExampleReviewBody
	r.json(t, &rev)
	assert.Equal(t, feedback.StatusRejected, rev.Example.Status)
	assert.Equal(t, "carol", rev.Example.Reviewer)
}

// Two replicas on one example store share the review state: bob's vote
// on one is not alice's answer on the other, carol's approval on the
// other is both's on the first, bob's down-vote on either stops nothing.
func TestReviewSharedByReplicas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "examples.sqlite")
	a, callA := teachingServer(t, path, Cache{})
	b, callB := teachingServer(t, path, Cache{})
	id := feedback.ExampleID(coursesQ)

	vote(t, callA, bobToken, plantedSQL, "up")
	reused, _ := asked(t, callB, testToken)
	assert.Empty(t, reused, "bob's vote on A answered alice on B")
	reused, _ = asked(t, callB, bobToken)
	assert.Equal(t, id, reused)

	require.Equal(t, 200, callB("POST", "/v1/examples/"+id+"/approve", carolToken, nil).status)
	for _, tok := range []string{testToken, bobToken} {
		reused, _ = asked(t, callA, tok)
		assert.Equal(t, id, reused, "approved on B, reused on A")
	}
	vote(t, callA, bobToken, plantedSQL, "down")
	reused, _ = asked(t, callB, testToken)
	assert.Equal(t, id, reused)
	assert.Equal(t, 1, a.model.CallCount()+b.model.CallCount(), "only alice's first question reached a model")
}

// An answer from an example that serves only its author is not cached: a
// shared cache would hand bob's proposal to alice.
func TestPersonalAnswerNotCached(t *testing.T) {
	store := &mapStore{}
	tc, call := teachingServer(t, filepath.Join(t.TempDir(), "examples.sqlite"), Cache{Store: store, Scope: SharedScope})
	vote(t, call, bobToken, plantedSQL, "up")
	reused, _ := asked(t, call, bobToken)
	require.NotEmpty(t, reused)
	reused, sql := asked(t, call, testToken)
	assert.Empty(t, reused)
	assert.NotEqual(t, plantedSQL, sql, "alice got bob's proposal from the cache")
	assert.Equal(t, 1, tc.model.CallCount())
}

// The quota: an ordinary principal's votes past it answer 429 vote_quota,
// audited; a reviewer's are not counted.
func TestVoteQuotaRoute(t *testing.T) {
	tc, call := teachingServer(t, filepath.Join(t.TempDir(), "examples.sqlite"), Cache{})
	var last response
	for i := range feedback.DefaultQuotaPending + 1 {
		last = call("POST", "/v1/feedback", bobToken, map[string]string{"question": "q" + strings.Repeat("x", i), "sql": "SELECT 1", "verdict": "up"})
	}
	assert.Equal(t, 429, last.status, "%s", last.body)
	assert.Equal(t, CodeVoteQuota, last.code(t))
	events := tc.audit.all()
	assert.Equal(t, "vote_quota", events[len(events)-1].Outcome)
	assert.Equal(t, 200, call("POST", "/v1/feedback", testToken, map[string]string{"question": "q", "sql": "SELECT 1", "verdict": "up"}).status, "alice's quota is her own")
	for i := range feedback.DefaultQuotaPending + 1 {
		r := call("POST", "/v1/feedback", carolToken, map[string]string{"question": "r" + strings.Repeat("x", i), "sql": "SELECT 1", "verdict": "up"})
		require.Equal(t, 200, r.status, "%s", r.body)
	}
}

// ParseReviewers: principal ids, claims (plain or in a list) and database
// roles.
func TestParseReviewers(t *testing.T) {
	role := func(p *Principal) (string, error) {
		return map[string]string{"dana": "t2s_reviewer", "erin": "reader"}[p.ID], nil
	}
	is, err := ParseReviewers("carol, claim:roles=reviewer, claim:team=data, role:t2s_reviewer", role)
	require.NoError(t, err)
	for p, want := range map[*Principal]bool{
		{ID: "carol"}: true,
		{ID: "x", Claims: map[string]any{"roles": []any{"reader", "reviewer"}}}: true,
		{ID: "x", Claims: map[string]any{"team": "data"}}:                       true,
		{ID: "x", Claims: map[string]any{"team": "sales", "roles": "reader"}}:   false,
		{ID: "dana"}:  true,
		{ID: "erin"}:  false,
		{ID: "Carol"}: false,
	} {
		assert.Equal(t, want, is(p), "%+v", p)
	}
	assert.False(t, is(nil))
	for _, bad := range []string{"", "carol,,", "claim:", "claim:roles", "claim:=x", "role:"} {
		_, err := ParseReviewers(bad, role)
		assert.Error(t, err, bad)
	}
	_, err = ParseReviewers("role:t2s_reviewer", nil)
	assert.Error(t, err, "role: without roles per principal")
}

// The review routes' answers match the OpenAPI document.
func TestOpenAPIExamples(t *testing.T) {
	_, call := teachingServer(t, filepath.Join(t.TempDir(), "examples.sqlite"), Cache{})
	var o openAPI
	call("GET", "/openapi.json", "", nil).json(t, &o.doc)
	id := feedback.ExampleID(coursesQ)
	o.check(t, "POST", "/v1/feedback", call("POST", "/v1/feedback", bobToken, map[string]string{"question": coursesQ, "sql": plantedSQL, "verdict": "up"}))
	o.check(t, "GET", "/v1/examples", call("GET", "/v1/examples", carolToken, nil))
	o.check(t, "GET", "/v1/examples", call("GET", "/v1/examples", bobToken, nil))
	o.check(t, "POST", "/v1/examples/{id}/approve", call("POST", "/v1/examples/"+id+"/approve", carolToken, nil))
	o.check(t, "POST", "/v1/examples/{id}/approve", call("POST", "/v1/examples/nope/approve", carolToken, nil))
	o.check(t, "POST", "/v1/examples/{id}/reject", call("POST", "/v1/examples/"+id+"/reject", carolToken, nil))
	o.check(t, "GET", "/v1/examples", call("GET", "/v1/examples?all=true", carolToken, nil))
}
