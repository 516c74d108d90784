// Package mcpexec is an Executor and schema source backed by an MCP
// server (Model Context Protocol, https://modelcontextprotocol.io): the
// database is reached through the server's query tool, so adding a
// database is registering a server, not writing code.
//
// Open connects over stdio (a command) or streamable HTTP (a URL),
// discovers the tools and reads the schema: from a describe_schema tool
// (text2sql's own MCP server, SQLite dialect) or from information_schema
// through the query tool (PostgreSQL, e.g. the reference server
// @modelcontextprotocol/server-postgres). Every statement is checked by
// the engine's own rules before it leaves: PostgreSQL's parser
// (executor/postgres.Guard, with the built-in function catalog) or
// SQLite's authorizer on an empty copy of the schema (executor/sqlite).
// The server's own limits still apply behind it; the result is capped at
// MaxRows here.
//
// # Time limits
//
// The executor cannot set a limit on the server per statement: the
// reference PostgreSQL server runs each query as BEGIN TRANSACTION READ
// ONLY; <query>; ROLLBACK, and nothing can be sent before the query.
// Options.Timeout bounds how long Execute waits; on its own it would not
// stop the statement, which would run on after Execute returned (and after
// the MCP server and the program exited), holding one of the MCP server's
// pooled connections. So Open reads the statement_timeout the server's
// sessions have (through the query tool, from pg_settings) and refuses a
// server without one, or with one longer than Options.Timeout
// (ErrUnboundedServer), unless Options.AllowUnboundedServer: the login the
// MCP server connects as must carry the limit (text2sql grant prints
// ALTER ROLE … SET statement_timeout). With it the server cancels a
// statement at its own limit, whatever the client does. Open's own
// catalog queries run under that limit too, so it cannot be tighter than
// they need (seconds on a large catalog). What this path
// cannot guarantee: a request whose Timeout is shorter than the server's
// limit holds only on the client side (the statement runs on up to the
// server's limit); memory is bounded only by what the login carries
// (work_mem, temp_file_limit), not per statement; and a text2sql server
// reached by URL (describe_schema) bounds its statements itself, so it is
// not asked.
package mcpexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/schema"
)

// Options configure Open. Exactly one of Command and URL is required.
type Options struct {
	// Command runs a server on stdio, e.g. {"npx", "-y",
	// "@modelcontextprotocol/server-postgres", "postgres://…"}.
	Command []string
	// Env is added to the command's environment.
	Env []string
	// URL is a server's streamable HTTP endpoint, e.g.
	// "http://127.0.0.1:8080/mcp".
	URL string
	// HTTPClient sends the HTTP requests (http.DefaultClient when nil),
	// e.g. one that adds a bearer token.
	HTTPClient *http.Client
	// Dialect is the database's dialect when the server does not say
	// (describe_schema does); DialectPostgres when empty.
	Dialect text2sql.Dialect
	// MaxRows caps a result when the request does not (default
	// executor.DefaultMaxRows).
	MaxRows int
	// Timeout bounds one call of the query tool when the request does not
	// (default executor.DefaultTimeout).
	Timeout time.Duration
	// ConnectTimeout bounds Open: starting the server, discovery and the
	// schema (default 60 s, enough for npx to fetch a server once).
	ConnectTimeout time.Duration
	// MaxResponseBytes bounds one HTTP response from the server (default
	// DefaultMaxResponseBytes); a longer one fails the call.
	MaxResponseBytes int64
	// AllowUnboundedServer opens a PostgreSQL server whose sessions have
	// no statement_timeout, or one longer than Timeout, instead of
	// failing with ErrUnboundedServer. Timeout then bounds only how long
	// Execute waits: a longer statement runs on on the server until it
	// ends or the server's own limit stops it.
	AllowUnboundedServer bool
}

// ErrUnboundedServer is returned by Open when the PostgreSQL server behind
// the MCP server would not stop a statement at the time limit itself: its
// sessions have no statement_timeout, or a longer one than
// Options.Timeout. The error says what they have and how to set it.
var ErrUnboundedServer = errors.New("mcpexec: the database server does not stop statements at the time limit")

// DefaultMaxResponseBytes is Options.MaxResponseBytes's default: the
// message size the MCP SDK's stdio transport accepts, so both transports
// bound a result alike.
const DefaultMaxResponseBytes = 16 << 20

// DefaultConnectTimeout is Options.ConnectTimeout's default.
const DefaultConnectTimeout = 60 * time.Second

// ErrNoQueryTool is returned by Open when the server has no tool that
// takes one SQL string.
var ErrNoQueryTool = errors.New("mcpexec: the MCP server has no query tool (a tool taking one sql or query string)")

// queryTools are the names of query tools of known servers, in the order
// they are preferred: text2sql's, the reference PostgreSQL and SQLite
// servers', common others.
var queryTools = []string{"run_sql", "query", "read_query", "execute_sql", "sql_query"}

// Executor runs statements through an MCP server's query tool.
type Executor struct {
	session *mcpsdk.ClientSession
	tool    string // the query tool
	arg     string // its SQL argument
	schema  *schema.Database
	guard   text2sql.Guard
	// wrapLimit bounds each statement's rows with a LIMIT around it
	// (PostgreSQL servers, which send every row).
	wrapLimit bool
	// ownServer: the server is text2sql's (it has describe_schema) and
	// bounds its statements itself.
	ownServer bool
	// serverTimeout is the statement_timeout of the server's sessions,
	// read at Open (0: none, or not asked).
	serverTimeout time.Duration
	opts          Options
	closers       []func() error
}

var _ text2sql.Executor = (*Executor)(nil)

// Open connects to the server and reads the schema. Errors:
// text2sql.ErrInvalidConfig (neither or both of Command and URL),
// ErrNoQueryTool, ErrUnboundedServer (see the package documentation),
// the connection's or the schema queries' errors.
func Open(ctx context.Context, opts Options) (*Executor, error) {
	if (len(opts.Command) == 0) == (opts.URL == "") {
		return nil, fmt.Errorf("%w: mcpexec: give exactly one of Command and URL", text2sql.ErrInvalidConfig)
	}
	if opts.MaxRows < 0 || opts.Timeout < 0 || opts.ConnectTimeout < 0 {
		return nil, fmt.Errorf("%w: mcpexec: negative limit in Options", text2sql.ErrInvalidConfig)
	}
	if opts.MaxRows == 0 {
		opts.MaxRows = executor.DefaultMaxRows
	}
	if opts.Timeout == 0 {
		opts.Timeout = executor.DefaultTimeout
	}
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	ctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancel()
	var transport mcpsdk.Transport
	if opts.URL != "" {
		client := http.DefaultClient
		if opts.HTTPClient != nil {
			client = opts.HTTPClient
		}
		bounded := *client
		bounded.Transport = limitTransport{next: client.Transport, max: opts.MaxResponseBytes}
		transport = &mcpsdk.StreamableClientTransport{Endpoint: opts.URL, HTTPClient: &bounded}
	} else {
		cmd := exec.Command(opts.Command[0], opts.Command[1:]...)
		cmd.Env = append(os.Environ(), opts.Env...)
		transport = &mcpsdk.CommandTransport{Command: cmd}
	}
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "text2sql", Version: "v1"}, nil)
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, fmt.Errorf("mcpexec: connecting: %w", err)
	}
	e := &Executor{session: session, opts: opts, closers: []func() error{session.Close}}
	if err := e.discover(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// discover finds the query tool and reads the schema.
func (e *Executor) discover(ctx context.Context) error {
	tools := map[string]*mcpsdk.Tool{}
	for t, err := range e.session.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcpexec: listing tools: %w", err)
		}
		tools[t.Name] = t
	}
	for _, name := range queryTools {
		if t := tools[name]; t != nil {
			if arg := sqlArgument(t); arg != "" {
				e.tool, e.arg = name, arg
				break
			}
		}
	}
	if e.tool == "" {
		return ErrNoQueryTool
	}
	if tools["describe_schema"] != nil {
		e.ownServer = true
		return e.fromDDL(ctx)
	}
	return e.fromInformationSchema(ctx)
}

// sqlArgument is the name of the tool's one string argument named sql or
// query, or "".
func sqlArgument(t *mcpsdk.Tool) string {
	b, err := json.Marshal(t.InputSchema)
	if err != nil {
		return ""
	}
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(b, &s) != nil {
		return ""
	}
	for _, name := range []string{"sql", "query"} {
		if p, ok := s.Properties[name]; ok && p.Type == "string" {
			return name
		}
	}
	return ""
}

// fromDDL reads describe_schema's {dialect, ddl}. A SQLite schema is
// created in an empty private database file (createSchema: tables,
// indexes and views only), whose read-only executor is the guard
// (SQLite's authorizer, the real tables and columns) and whose
// introspection is the schema.
func (e *Executor) fromDDL(ctx context.Context) error {
	res, err := e.session.CallTool(ctx, &mcpsdk.CallToolParams{Name: "describe_schema", Arguments: map[string]any{}})
	if err != nil {
		return fmt.Errorf("mcpexec: describe_schema: %w", err)
	}
	var body struct {
		Dialect text2sql.Dialect `json:"dialect"`
		DDL     string           `json:"ddl"`
	}
	if err := structured(res, &body); err != nil {
		return fmt.Errorf("mcpexec: describe_schema: %w", err)
	}
	if body.Dialect != text2sql.DialectSQLite {
		return e.fromInformationSchema(ctx)
	}
	dir, err := os.MkdirTemp("", "text2sql-mcp-schema-")
	if err != nil {
		return fmt.Errorf("mcpexec: %w", err)
	}
	e.closers = append(e.closers, func() error { return os.RemoveAll(dir) })
	path := filepath.Join(dir, "schema.sqlite")
	if err := createSchema(ctx, path, body.DDL); err != nil {
		return fmt.Errorf("mcpexec: creating the schema from describe_schema: %w", err)
	}
	g, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		return fmt.Errorf("mcpexec: %w", err)
	}
	e.closers = append(e.closers, g.Close)
	e.schema, e.guard = g.Schema(), g
	return nil
}

// structured decodes a tool result's structured content (or, without
// one, its first text content) into v. A tool error is an error.
func structured(res *mcpsdk.CallToolResult, v any) error {
	if res.IsError {
		return fmt.Errorf("tool error: %s", text(res))
	}
	var b []byte
	if res.StructuredContent != nil {
		var err error
		if b, err = json.Marshal(res.StructuredContent); err != nil {
			return err
		}
	} else {
		b = []byte(text(res))
	}
	return json.Unmarshal(b, v)
}

// text joins a result's text contents.
func text(res *mcpsdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcpsdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ServerTimeout returns the statement_timeout of the PostgreSQL server's
// sessions as Open read it: 0 when they have none (Open then failed unless
// Options.AllowUnboundedServer) or when the server is text2sql's own, which
// is not asked.
func (e *Executor) ServerTimeout() time.Duration { return e.serverTimeout }

// Schema returns the schema read by Open.
func (e *Executor) Schema() *schema.Database { return e.schema }

// Check runs the guard on sql without sending it: nil or a *SQLError.
func (e *Executor) Check(ctx context.Context, sql string) error { return e.guard.Check(ctx, sql) }

// Execute checks req.SQL with the guard and, when it passes, calls the
// query tool with it. A refusal, a tool error (the server's message, e.g.
// PostgreSQL's) and a timeout are in Result.Error; the error return is
// for a broken connection or a cancelled ctx. Rows past MaxRows are
// dropped and the result marked truncated.
func (e *Executor) Execute(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	start := time.Now()
	sql, err := e.prepare(ctx, req.SQL)
	if err != nil {
		var serr *text2sql.SQLError
		if errors.As(err, &serr) {
			return &text2sql.Result{Columns: []string{}, Error: serr, Duration: time.Since(start)}, nil
		}
		return nil, err
	}
	maxRows, timeout := positiveOr(req.MaxRows, e.opts.MaxRows), e.opts.Timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	if e.wrapLimit {
		// The reference servers send every row: bound what crosses the
		// connection (one message past the client's limit would end the
		// session). The wrapper is checked as the statement was.
		sql = fmt.Sprintf("SELECT * FROM (\n%s\n) AS text2sql_rows LIMIT %d", sqltext.TrimTerminators(sql), maxRows+1)
		if err := e.guard.Check(ctx, sql); err != nil {
			return &text2sql.Result{Columns: []string{}, Error: lint.EngineError("", "the statement cannot be bounded: "+err.Error(), e.schema, req.SQL), Duration: time.Since(start)}, nil
		}
	}
	out, err := e.call(ctx, sql, maxRows, timeout)
	if out != nil {
		out.Duration = time.Since(start)
	}
	return out, err
}

// prepare runs the guard on sql and returns the text to send: the guard's
// (relations qualified, for PostgreSQL's; see postgres.Guard.Prepare), or
// sql. A refusal is a *text2sql.SQLError.
func (e *Executor) prepare(ctx context.Context, sql string) (string, error) {
	if p, ok := e.guard.(interface {
		Prepare(string) (string, *text2sql.SQLError)
	}); ok {
		text, serr := p.Prepare(sql)
		if serr != nil {
			return "", serr
		}
		return text, nil
	}
	return sql, e.guard.Check(ctx, sql)
}

// call sends sql to the query tool, unchecked: Execute's guard comes
// first, and this package's own catalog queries are constants.
func (e *Executor) call(ctx context.Context, sql string, maxRows int, timeout time.Duration) (*text2sql.Result, error) {
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := e.session.CallTool(callCtx, &mcpsdk.CallToolParams{Name: e.tool, Arguments: map[string]any{e.arg: sql}})
	out := &text2sql.Result{Columns: []string{}}
	var wire *jsonrpc.Error
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && callCtx.Err() != nil:
		out.Error = &text2sql.SQLError{Kind: text2sql.KindTimeout, Message: fmt.Sprintf("the query took longer than %v", timeout)}
	case errors.As(err, &wire):
		// The tool threw (the reference servers relay the engine's error
		// so): the statement failed, the connection did not.
		out.Error = lint.EngineError("", wire.Message, e.schema, sql)
	case err != nil:
		return nil, fmt.Errorf("mcpexec: %s: %w", e.tool, err)
	default:
		e.read(res, sql, out)
	}
	if len(out.Rows) > maxRows {
		out.Rows, out.Truncated = out.Rows[:maxRows], true
	}
	out.RowCount = len(out.Rows)
	return out, nil
}

// positiveOr is a when it is positive, else b (a request's 0 means the default).
func positiveOr(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// read fills out from a query tool's result: text2sql's run_sql
// structured {ok, columns, rows, truncated, error}, or a JSON array of
// row objects in text (the reference servers), keys in their order.
func (e *Executor) read(res *mcpsdk.CallToolResult, sql string, out *text2sql.Result) {
	if res.IsError {
		// The engine's message as the server relays it: classified by
		// its wording, with a hint for an unknown table or column.
		out.Error = lint.EngineError("", strings.TrimSpace(text(res)), e.schema, sql)
		return
	}
	if res.StructuredContent != nil {
		var body struct {
			Columns   []string  `json:"columns"`
			Rows      [][]any   `json:"rows"`
			Truncated bool      `json:"truncated"`
			Error     *sqlError `json:"error"`
		}
		if err := structured(res, &body); err != nil {
			out.Error = &text2sql.SQLError{Kind: text2sql.KindRuntime, Message: "unreadable result: " + err.Error()}
			return
		}
		if body.Error != nil {
			out.Error = &text2sql.SQLError{Kind: body.Error.Kind, Message: body.Error.Message, Hint: body.Error.Hint}
			return
		}
		for i, r := range body.Rows {
			if len(r) != len(body.Columns) {
				out.Error = &text2sql.SQLError{Kind: text2sql.KindRuntime, Message: fmt.Sprintf("unreadable result: row %d has %d values for %d columns", i+1, len(r), len(body.Columns))}
				return
			}
		}
		out.Columns, out.Rows, out.Truncated = body.Columns, body.Rows, body.Truncated
		if out.Columns == nil {
			out.Columns = []string{}
		}
		return
	}
	cols, rows, err := objectRows([]byte(text(res)))
	if err != nil {
		out.Error = &text2sql.SQLError{Kind: text2sql.KindRuntime, Message: "unreadable result: " + err.Error()}
		return
	}
	out.Columns, out.Rows = cols, rows
}

type sqlError struct {
	Kind    text2sql.ErrorKind `json:"kind"`
	Message string             `json:"message"`
	Hint    string             `json:"hint"`
}

// objectRows decodes a JSON array of objects into columns (the first
// object's keys, in order) and rows. Numbers stay json.Number-free: whole
// numbers become int64, others float64.
func objectRows(b []byte) ([]string, [][]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, nil, fmt.Errorf("not a JSON array of rows")
	}
	cols := []string{}
	var rows [][]any
	for dec.More() {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return nil, nil, fmt.Errorf("a row is not a JSON object")
		}
		row := make([]any, len(cols))
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, nil, err
			}
			key, _ := tok.(string)
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, nil, err
			}
			i := slices.Index(cols, key)
			if i < 0 {
				if len(rows) > 0 {
					return nil, nil, fmt.Errorf("row %d has a column %q the first row lacks", len(rows)+1, key)
				}
				cols = append(cols, key)
				row = append(row, nil)
				i = len(cols) - 1
			}
			row[i] = number(v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, nil, err
		}
		rows = append(rows, row)
	}
	return cols, rows, nil
}

// number turns a json.Number into int64 or float64; other values as they are.
func number(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	f, _ := n.Float64()
	return f
}

// limitTransport bounds the bodies of the responses next returns.
type limitTransport struct {
	next http.RoundTripper // nil: http.DefaultTransport
	max  int64
}

func (t limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(r)
	if err == nil {
		resp.Body = &limitedBody{ReadCloser: resp.Body, max: t.max, left: t.max}
	}
	return resp, err
}

// limitedBody fails a read past its bound instead of returning a cut body.
type limitedBody struct {
	io.ReadCloser
	max, left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 && err != nil {
			return 0, err // the body ended exactly at the bound
		}
		return 0, fmt.Errorf("mcpexec: the server's response is over %d bytes (Options.MaxResponseBytes)", b.max)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// Close ends the session (stopping a stdio server) and removes the
// private schema copy.
func (e *Executor) Close() error {
	var errs []error
	for i := len(e.closers) - 1; i >= 0; i-- {
		errs = append(errs, e.closers[i]())
	}
	return errors.Join(errs...)
}
