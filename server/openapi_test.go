package server

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/wire"
)

// openAPI is the served document, decoded, with helpers to validate
// bodies against it.
type openAPI struct {
	doc map[string]any
}

func (o openAPI) obj(v any, path ...string) map[string]any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	m, _ := v.(map[string]any)
	return m
}

// rewrite copies v with "#/components/schemas/X" references turned into
// "#/$defs/X".
func rewrite(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				out[k] = strings.Replace(s, "#/components/schemas/", "#/$defs/", 1)
				continue
			}
			out[k] = rewrite(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rewrite(e)
		}
		return out
	}
	return v
}

// resolve compiles schema (from the document) with the document's
// component schemas as $defs.
func (o openAPI) resolve(t *testing.T, schema map[string]any) *jsonschema.Resolved {
	t.Helper()
	root := rewrite(schema).(map[string]any)
	root["$defs"] = rewrite(o.obj(o.doc, "components", "schemas"))
	b, _ := json.Marshal(root)
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal(b, &s), "schema")
	r, err := s.Resolve(nil)
	require.NoError(t, err, "resolving %s", b)
	return r
}

// response returns the documented response of an operation, following a
// reference to components/responses.
func (o openAPI) response(method, path string, status int) map[string]any {
	r := o.obj(o.doc, "paths", path, strings.ToLower(method), "responses", strconv.Itoa(status))
	if ref, ok := r["$ref"].(string); ok {
		r = o.obj(o.doc, "components", "responses", strings.TrimPrefix(ref, "#/components/responses/"))
	}
	return r
}

// check validates a real answer against the document.
func (o openAPI) check(t *testing.T, method, path string, r response) {
	t.Helper()
	doc := o.response(method, path, r.status)
	if !assert.NotNil(t, doc, "%s %s: status %d is not documented (%s)", method, path, r.status, r.body) {
		return
	}
	schema := o.obj(doc, "content", "application/json", "schema")
	if !assert.NotNil(t, schema, "%s %s %d: no JSON schema", method, path, r.status) {
		return
	}
	for h := range o.obj(doc, "headers") {
		assert.NotEqual(t, "", r.header.Get(h), "%s %s %d: documented header %s missing", method, path, r.status, h)
	}
	var v any
	if !assert.NoError(t, json.Unmarshal(r.body, &v), "%s %s %d", method, path, r.status) {
		return
	}
	assert.NoError(t, o.resolve(t, schema).Validate(v), "%s %s %d: the body does not match the document\n%s", method, path, r.status, r.body)
}

// checkRequest validates a request body against the document.
func (o openAPI) checkRequest(t *testing.T, method, path string, body any) {
	t.Helper()
	schema := o.obj(o.doc, "paths", path, strings.ToLower(method), "requestBody", "content", "application/json", "schema")
	require.NotNil(t, schema, "%s %s: no request schema", method, path)
	b, _ := json.Marshal(body)
	var v any
	json.Unmarshal(b, &v)
	assert.NoError(t, o.resolve(t, schema).Validate(v), "%s %s: request %s does not match the document", method, path, b)
}

func TestOpenAPI(t *testing.T) {
	judge := text2sql.JudgeFunc(func(_ context.Context, req text2sql.JudgeRequest) (*text2sql.Verdict, error) {
		if req.Current.N == 1 {
			return &text2sql.Verdict{OK: false, Stage: text2sql.StageSQL, Reason: "wrong columns", Hints: []string{"use code"}}, nil
		}
		return &text2sql.Verdict{OK: true}, nil
	})
	model := llmtest.New(answerJSON("SELECT nme FROM students"), answerJSON("SELECT title FROM courses LIMIT 2"),
		answerJSON("SELECT code FROM courses LIMIT 2")).RepeatLast()
	gen, _ := generator.New(model, generator.Options{})
	p, err := text2sql.New(text2sql.Config{Retriever: fixture.ret, Generator: gen, Executor: fixture.exec, Judge: judge,
		MaxRepairs: 3, DisableExampleReuse: true})
	require.NoError(t, err)
	srv := testServer(t, Config{Pipeline: p, RateLimit: RateLimit{Requests: 20, Window: time.Hour}, MaxBodyBytes: 2048, Feedback: feedbackRecorder(t),
		AnswerKeys: AnswerKeyMap{"7": "SELECT 1"}, Info: Info{Models: []string{"scripted"}, Dialect: text2sql.DialectSQLite,
			Fingerprint: "abc", Knowledge: map[text2sql.ItemKind]int{text2sql.ItemTable: 5}}})

	r := do(t, srv, "GET", "/openapi.json", "", nil)
	require.Equal(t, 200, r.status, "openapi.json: %d", r.status)
	require.True(t, strings.HasPrefix(r.header.Get("Content-Type"), "application/json"), "openapi.json: %d", r.status)
	var o openAPI
	r.json(t, &o.doc)
	assert.Equal(t, "3.1.0", o.doc["openapi"], "openapi %v", o.doc["openapi"])

	// The documented operations are exactly the routes.
	var documented []string
	for path, ops := range o.obj(o.doc, "paths") {
		for method := range ops.(map[string]any) {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(documented)
	registered := append(slices.Clone(routes), reviewRoutes...)
	sort.Strings(registered)
	assert.True(t, slices.Equal(documented, registered), "documented %v, registered %v", documented, registered)

	// The validation catches a wrong shape.
	health := o.resolve(t, o.obj(o.response("GET", "/health", 200), "content", "application/json", "schema"))
	for _, bad := range []string{`{"status":"fine"}`, `{"checks":{"database":"ok"}}`, `{"status":"ok","models":[],"dialect":"","index":{"fingerprint":"","embedder":"","documents":0},"knowledge":{},"auth":"none","mcp":true,"extra":1}`} {
		var v any
		json.Unmarshal([]byte(bad), &v)
		assert.NotNil(t, health.Validate(v), "%s validated", bad)
	}

	// Real answers, every documented shape that can be produced here.
	q := map[string]string{"question": "List two course codes"}
	run := map[string]any{"sql": "SELECT 1", "question_id": "7"}
	o.checkRequest(t, "POST", "/v1/generate", q)
	o.checkRequest(t, "POST", "/v1/run", run)
	o.checkRequest(t, "POST", "/v1/run", map[string]any{"sql": "SELECT 1", "question_id": 7})
	o.check(t, "GET", "/health", do(t, srv, "GET", "/health", "", nil))
	o.check(t, "GET", "/health", do(t, srv, "GET", "/health", testToken, nil))
	o.check(t, "GET", "/openapi.json", r)
	o.check(t, "POST", "/v1/generate", do(t, srv, "POST", "/v1/generate", testToken, q))
	o.check(t, "POST", "/v1/run", do(t, srv, "POST", "/v1/run", testToken, run))
	o.check(t, "POST", "/v1/run", do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": "DROP TABLE students"}))
	o.check(t, "POST", "/v1/run", do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": "SELECT NULL, 1.5, 'x', x'00ff'"}))
	charted := do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": "SELECT status, COUNT(*) FROM enrollments GROUP BY status"})
	require.Contains(t, string(charted.body), `"chart"`)
	o.check(t, "POST", "/v1/run", charted)
	// Conversations on a server of their own: their model calls and
	// requests leave the counts above alone.
	csrv := testServer(t, Config{Conversations: &Conversations{}})
	started := do(t, csrv, "POST", "/v1/conversations", testToken, map[string]any{})
	o.check(t, "POST", "/v1/conversations", started)
	var conv ConversationBody
	started.json(t, &conv)
	msg := map[string]string{"message": "Hello"}
	o.checkRequest(t, "POST", "/v1/conversations/{id}/messages", msg)
	o.check(t, "POST", "/v1/conversations/{id}/messages", do(t, csrv, "POST", "/v1/conversations/"+conv.ConversationID+"/messages", testToken, msg))
	msg["message"] = "List two course codes"
	o.check(t, "POST", "/v1/conversations/{id}/messages", do(t, csrv, "POST", "/v1/conversations/"+conv.ConversationID+"/messages", testToken, msg))
	saving := testServer(t, Config{Conversations: &Conversations{Store: openConversationStore(t)}})
	for _, c := range []struct{ method, path, route string }{
		{"GET", "/v1/conversations", "/v1/conversations"},
		{"GET", "/v1/saved", "/v1/saved"},
		{"DELETE", "/v1/saved/nope", "/v1/saved/{id}"},
		{"DELETE", "/v1/conversations/nope", "/v1/conversations/{id}"},
	} {
		o.check(t, c.method, c.route, do(t, saving, c.method, c.path, testToken, nil))
	}
	started = do(t, saving, "POST", "/v1/conversations", testToken, map[string]any{})
	started.json(t, &conv)
	savePath := "/v1/conversations/" + conv.ConversationID + "/saved"
	o.checkRequest(t, "POST", "/v1/conversations/{id}/saved", map[string]string{"note": "n"})
	o.check(t, "POST", "/v1/conversations/{id}/saved", do(t, saving, "POST", savePath, testToken, map[string]string{}))
	o.check(t, "POST", "/v1/conversations/{id}/messages", do(t, saving, "POST", "/v1/conversations/"+conv.ConversationID+"/messages", testToken, msg))
	o.check(t, "POST", "/v1/conversations/{id}/saved", do(t, saving, "POST", savePath, testToken, map[string]string{"note": "n"}))
	o.check(t, "GET", "/v1/saved", do(t, saving, "GET", "/v1/saved", testToken, nil))
	o.check(t, "GET", "/v1/conversations", do(t, saving, "GET", "/v1/conversations", testToken, nil))
	reused := do(t, saving, "POST", "/v1/conversations/"+conv.ConversationID+"/messages", testToken, msg)
	require.Contains(t, string(reused.body), `"saved_answer"`)
	o.check(t, "POST", "/v1/conversations/{id}/messages", reused)
	o.check(t, "DELETE", "/v1/conversations/{id}", do(t, saving, "DELETE", "/v1/conversations/"+conv.ConversationID, testToken, nil))
	vote := map[string]string{"question": "List two course codes", "sql": "SELECT code FROM courses LIMIT 2", "verdict": "up", "note": "ok"}
	o.checkRequest(t, "POST", "/v1/feedback", vote)
	o.check(t, "POST", "/v1/feedback", do(t, srv, "POST", "/v1/feedback", testToken, vote))
	vote["verdict"] = "down"
	o.check(t, "POST", "/v1/feedback", do(t, srv, "POST", "/v1/feedback", testToken, vote))
	o.check(t, "POST", "/v1/feedback", do(t, srv, "POST", "/v1/feedback", testToken, map[string]string{"question": "x", "sql": "DELETE FROM courses", "verdict": "up"}))
	ask := do(t, srv, "POST", "/v1/ask", testToken, q)
	var a wire.Answer
	ask.json(t, &a)
	assert.False(t, a.Status != text2sql.StatusVerified || len(a.Attempts) != 2 || a.Attempts[0].Verdict == nil || a.Attempts[0].Verdict.OK, "ask: %s", ask.body)
	o.check(t, "POST", "/v1/ask", ask)
	o.check(t, "POST", "/v1/ask", do(t, srv, "POST", "/v1/ask", testToken, map[string]string{"question": ""}))
	o.check(t, "POST", "/v1/ask", do(t, srv, "POST", "/v1/ask", "", q))
	o.check(t, "POST", "/v1/run", do(t, srv, "POST", "/v1/run", testToken, "[1,2"))
	o.check(t, "POST", "/v1/run", do(t, srv, "POST", "/v1/run", testToken, `{"sql":"`+strings.Repeat("x", 3000)+`"}`))
	for i := 0; i < 12; i++ {
		r = do(t, srv, "POST", "/v1/generate", testToken, q)
	}
	require.Equal(t, 429, r.status, "no 429: %d", r.status)
	o.check(t, "POST", "/v1/generate", r)

	// A reranker's report is in the context, as documented.
	reranked := text2sql.RetrieverFunc(func(ctx context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
		c, err := fixture.ret.Retrieve(ctx, req)
		if err == nil {
			c.Rerank = &text2sql.RerankReport{Reranker: "llm", Calls: []text2sql.ModelCall{{}, {}}, Tables: []string{"courses"}, Ignored: []string{"nope"}}
		}
		return c, err
	})
	p, err = text2sql.New(text2sql.Config{Retriever: reranked, Generator: gen, Executor: fixture.exec, DisableExampleReuse: true})
	require.NoError(t, err)
	srv = testServer(t, Config{Pipeline: p})
	gr := do(t, srv, "POST", "/v1/generate", testToken, q)
	o.check(t, "POST", "/v1/generate", gr)
	var g wire.Answer
	gr.json(t, &g)
	if assert.NotNil(t, g.Context, "%s", gr.body) && assert.NotNil(t, g.Context.Rerank, "%s", gr.body) {
		assert.Equal(t, wire.Rerank{Reranker: "llm", ModelCalls: 2, Tables: []string{"courses"}, Ignored: []string{"nope"}}, *g.Context.Rerank)
	}

	// Candidates: every one with its result group, one failing.
	cands := llmtest.New(answerJSON("SELECT title FROM courses LIMIT 2"), answerJSON("SELECT nme FROM students"),
		answerJSON("SELECT title FROM courses LIMIT 2"))
	gen3, _ := generator.New(cands, generator.Options{})
	p, err = text2sql.New(text2sql.Config{Retriever: fixture.ret, Generator: gen3, Executor: fixture.exec, DisableExampleReuse: true,
		Candidates: 3, AllCandidates: true})
	require.NoError(t, err)
	ar := do(t, testServer(t, Config{Pipeline: p}), "POST", "/v1/ask", testToken, q)
	o.check(t, "POST", "/v1/ask", ar)
	var sa wire.Answer
	ar.json(t, &sa)
	if assert.NotNil(t, sa.Selection, "%s", ar.body) {
		assert.Equal(t, text2sql.SelectVote, sa.Selection.Method)
		assert.Equal(t, 2, sa.Selection.Votes)
		require.Len(t, sa.Selection.Candidates, 3)
		assert.Equal(t, 3, cands.CallCount())
		assert.Equal(t, 1, sa.Selection.Groups)
		require.Len(t, sa.Attempts, 1)
		assert.NotNil(t, sa.Attempts[0].Selection)
	}

	// A failed answer and provider failures.
	srv = testServer(t, Config{Pipeline: newPipeline(t, sqlModel("DROP TABLE students"), -1)})
	o.check(t, "POST", "/v1/ask", do(t, srv, "POST", "/v1/ask", testToken, q))
	o.check(t, "POST", "/v1/generate", do(t, srv, "POST", "/v1/generate", testToken, map[string]string{"question": "  "}))
	srv = testServer(t, Config{Pipeline: newPipeline(t, nil, 0)})
	o.check(t, "POST", "/v1/generate", do(t, srv, "POST", "/v1/generate", testToken, q))
	fail := text2sql.ModelFunc(func(context.Context, text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
		return nil, &text2sql.ModelError{Provider: "openai", StatusCode: 500, Retryable: true}
	})
	srv = testServer(t, Config{Pipeline: newPipeline(t, fail, 0)})
	o.check(t, "POST", "/v1/ask", do(t, srv, "POST", "/v1/ask", testToken, q))

	// Every error code is documented.
	enum := o.obj(o.doc, "components", "schemas", "ErrorDetail", "properties", "code")["enum"].([]any)
	for c := range codeStatus {
		assert.True(t, slices.Contains(enum, any(string(c))), "code %s is not in the document", c)
	}
	for _, c := range []Code{CodeRepairsExhausted, CodeBudgetExhausted, CodeNoSQL, CodeInvalidOutput} {
		assert.True(t, slices.Contains(enum, any(string(c))), "code %s is not in the document", c)
	}
	assert.Len(t, OpenAPI(), len(openAPIDoc), "OpenAPI()")
}
