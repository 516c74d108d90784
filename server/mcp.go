package server

import (
	"cmp"
	"context"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/schema"
	"github.com/text2sql-go/text2sql/wire"
)

// MCP tool inputs and outputs. Outputs reuse the HTTP bodies.

// AskInput is the input of the MCP tools ask and generate_sql.
type AskInput struct {
	Question string `json:"question" jsonschema:"the question about the database, in plain English"`
}

// RunInput is the input of the MCP tool run_sql.
type RunInput struct {
	SQL        string `json:"sql" jsonschema:"one read-only SQL statement (SELECT, WITH … SELECT or VALUES) in the database's dialect"`
	QuestionID string `json:"question_id,omitempty" jsonschema:"optional: a question id whose answer key the result is checked against"`
}

// DescribeInput is the input of the MCP tool describe_schema.
type DescribeInput struct {
	Tables []string `json:"tables,omitempty" jsonschema:"optional: only these tables (as named in the schema); all tables when absent"`
}

// SchemaBody is the output of the MCP tool describe_schema.
type SchemaBody struct {
	Dialect string   `json:"dialect"`
	Tables  []string `json:"tables"` // the tables described, qualified names
	// DDL is CREATE TABLE / CREATE VIEW statements with columns, types,
	// keys, foreign keys and comments.
	DDL string `json:"ddl"`
	// Unknown are requested tables the schema does not have.
	Unknown []string `json:"unknown,omitempty"`
}

// ExamplesBody is the output of the MCP tool list_examples.
type ExamplesBody struct {
	Examples []ExampleBody `json:"examples"`
}

// ExampleBody is one verified question → SQL pair.
type ExampleBody struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	SQL      string `json:"sql"`
}

// principalHeader carries, inside the server only, the nonce under which
// the HTTP layer registered an authenticated MCP request's principal. Any
// value a client sends is removed first.
const principalHeader = "X-Text2sql-Internal-Call"

// stdioPrincipal is the principal of MCP calls that did not come over
// HTTP: the local user who started `text2sql mcp`.
var stdioPrincipal = &Principal{ID: "local", Method: "stdio"}

// NewMCPServer returns the MCP server of cfg, with the tools ask,
// generate_sql, run_sql (through Pipeline.Execute: the same guard as
// every other entry point), describe_schema and list_examples, for a host
// to run over stdio (mcp.StdioTransport) or another transport. New mounts
// the same server at /mcp behind its authentication.
//
// Calls arriving over stdio or an in-memory transport act as
// Config.LocalPrincipal ({ID: "local", Method: "stdio"} by default). Calls arriving over HTTP are
// accepted only through New's /mcp handler, which authenticated them; an
// HTTP mount of this server made any other way refuses every tool call.
// ask, generate_sql and run_sql spend the principal's rate-limit budget
// (Config.RateLimit). Errors: as New's.
func NewMCPServer(cfg Config) (*mcp.Server, error) {
	s, err := newService(cfg)
	if err != nil {
		return nil, err
	}
	return s.mcpServer()
}

func (s *service) mcpServer() (*mcp.Server, error) {
	version := s.cfg.Info.Version
	if version == "" {
		version = "dev"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "text2sql", Title: "text2sql", Version: version}, &mcp.ServerOptions{
		Instructions: "Answers questions about one SQL database. Use describe_schema and list_examples to learn it, " +
			"generate_sql to get SQL for a question, run_sql to run read-only SQL (writes and other statements are refused), " +
			"or ask to do all of it with automatic repair.",
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "ask",
		Description: "Answer a question about the database: retrieve context, write SQL, run it read-only, repair on errors. Returns the SQL, the rows and the repair trail.",
	}, s.questionTool("mcp ask", s.ask))
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "generate_sql",
		Description: "Write SQL for a question without running it. Returns the SQL, an explanation and the retrieved context.",
	}, s.questionTool("mcp generate_sql", s.generate))
	mcp.AddTool(srv, &mcp.Tool{
		Name: "run_sql",
		Description: "Run one read-only SQL statement through the guard (row cap, time limit). Writes, DDL, several statements, " +
			"PRAGMA/ATTACH and dangerous functions are refused with an error kind. Optionally check the result against a question's answer key.",
	}, func(ctx context.Context, req *mcp.CallToolRequest, in RunInput) (*mcp.CallToolResult, *RunResponse, error) {
		ctx, cancel, err := s.toolCall(ctx, req, true)
		if err != nil {
			return nil, nil, err
		}
		defer cancel()
		b, aerr := s.run(ctx, "mcp run_sql", in.SQL, in.QuestionID)
		if aerr != nil {
			return nil, nil, aerr
		}
		return &mcp.CallToolResult{IsError: !b.OK}, b, nil
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "describe_schema",
		Description: "Describe the database schema as CREATE TABLE statements: columns, types, keys, foreign keys, comments.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in DescribeInput) (*mcp.CallToolResult, *SchemaBody, error) {
		if _, _, err := s.toolCall(ctx, req, false); err != nil {
			return nil, nil, err
		}
		b, err := describe(s.cfg.Schema, in.Tables)
		return nil, b, err
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "list_examples",
		Description: "List the verified question → SQL examples of the knowledge base.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, *ExamplesBody, error) {
		if _, _, err := s.toolCall(ctx, req, false); err != nil {
			return nil, nil, err
		}
		b := &ExamplesBody{Examples: []ExampleBody{}}
		for _, e := range s.cfg.Examples {
			b.Examples = append(b.Examples, ExampleBody{ID: e.ID, Question: e.Question, SQL: e.SQL})
		}
		return nil, b, nil
	})
	return srv, nil
}

// questionTool is the handler of a tool answering its input's question
// with answer (s.ask or s.generate) for source; a failed answer is an
// error result that still carries its body.
func (s *service) questionTool(source string, answer func(ctx context.Context, source, question string) (*wire.Answer, *apiError)) mcp.ToolHandlerFor[AskInput, *wire.Answer] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in AskInput) (*mcp.CallToolResult, *wire.Answer, error) {
		ctx, cancel, err := s.toolCall(ctx, req, true)
		if err != nil {
			return nil, nil, err
		}
		defer cancel()
		b, aerr := answer(ctx, source, in.Question)
		if aerr != nil {
			return nil, nil, aerr
		}
		return &mcp.CallToolResult{IsError: b.Status == "failed"}, b, nil
	}
}

// toolCall returns the context of a tool call: its principal (and request
// id over HTTP), bounded by the request timeout. With limited set, the
// call spends a rate-limit token.
func (s *service) toolCall(ctx context.Context, req *mcp.CallToolRequest, limited bool) (context.Context, context.CancelFunc, error) {
	p, reqID := cmp.Or(s.cfg.LocalPrincipal, stdioPrincipal), ""
	tool := ""
	if req != nil && req.Params != nil {
		tool = req.Params.Name
	}
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		v, ok := s.inflight.Load(req.Extra.Header.Get(principalHeader))
		if !ok {
			s.obs.toolCall(ctx, tool, CodeUnauthorized)
			return nil, nil, errors.New("unauthorized: MCP over HTTP is served only through the authenticated /mcp endpoint")
		}
		ci := v.(*callInfo)
		p, reqID = ci.p, ci.reqID
		if ci.token != "" {
			ctx = identity.WithBearerToken(ctx, ci.token)
		}
	}
	if limited {
		if aerr := s.spend(ctx, "mcp "+tool, p.ID); aerr != nil {
			s.obs.toolCall(ctx, tool, aerr.code)
			return nil, nil, aerr
		}
	}
	s.obs.toolCall(ctx, tool, "")
	ctx = context.WithValue(identity.WithPrincipal(ctx, p), reqInfoKey{}, &reqInfo{id: reqID, principal: p.ID, route: "mcp " + tool})
	ctx, cancel := s.work(ctx)
	return ctx, cancel, nil
}

// mcpCall registers an authenticated MCP request's principal under a
// fresh nonce for the tool handlers, for the request's lifetime.
func (s *service) mcpCall(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(principalHeader)
		p, ok := identity.PrincipalFrom(r.Context())
		if !ok {
			s.fail(w, r, CodeUnauthorized, "a valid bearer token is required")
			return
		}
		nonce := newID() + newID()
		tok, _ := identity.BearerTokenFrom(r.Context())
		s.inflight.Store(nonce, &callInfo{p: p, reqID: requestID(r.Context()), token: tok})
		defer s.inflight.Delete(nonce)
		r.Header.Set(principalHeader, nonce)
		next.ServeHTTP(w, r)
	})
}

func describe(db *schema.Database, names []string) (*SchemaBody, error) {
	if db == nil {
		return nil, errors.New("no schema is configured for this service")
	}
	b := &SchemaBody{Dialect: string(db.Dialect), Tables: []string{}}
	tables := db.Tables
	if len(names) > 0 {
		tables = nil
		for _, n := range names {
			if t := db.Lookup(n); t != nil {
				tables = append(tables, t)
			} else {
				b.Unknown = append(b.Unknown, n)
			}
		}
	}
	for _, t := range tables {
		b.Tables = append(b.Tables, t.QualifiedName())
	}
	b.DDL = db.DDL(tables)
	return b, nil
}
