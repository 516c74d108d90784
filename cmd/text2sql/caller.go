package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/postgres"
	"github.com/text2sql-go/text2sql/identity"
)

// callerFlags are the flags of execution as the caller: who the command
// acts for (--as) and how the database decides what they read (--run-as,
// --allow-roles, --rls-claims).
type callerFlags struct {
	as         string
	runAs      string
	allowRoles []string
	rlsClaims  bool
	loginMap   string
	// loaded are the maps of --run-as map:FILE and --login-map as the
	// executors loaded them, for rightsVersion; one list shared by the
	// copies each --login-map executor is opened with.
	loaded *[]string
}

func (c *callerFlags) bind(root *cobra.Command) {
	c.loaded = new([]string)
	f := root.PersistentFlags()
	f.StringVar(&c.as, "as", "", "act as this principal (its id; method \"cli\"), to try per-caller roles and row-level security locally; serve takes principals from --auth instead")
	f.StringVar(&c.runAs, "run-as", "", "PostgreSQL: the role statements run as — ROLE (one role for every caller), claim:NAME (the role in the principal's claim NAME, e.g. claim:role from a JWT) or map:FILE (YAML/JSON map of principal id to role)")
	f.StringSliceVar(&c.allowRoles, "allow-roles", nil, "with --run-as claim:NAME, the only roles a claim may name (comma-separated)")
	f.StringVar(&c.loginMap, "login-map", "", "a login per principal: YAML/JSON map of principal id to a DSN of the --dsn server (MySQL/MariaDB have no row-level security; PostgreSQL too); calls without a principal use --dsn")
	f.BoolVar(&c.rlsClaims, "rls-claims", false, "PostgreSQL: set the caller's claims for row-level security as PostgREST and Supabase do (request.jwt.claims, request.jwt.claim.sub), transaction-local")
}

// principal is the --as principal, or nil.
func (c *callerFlags) principal() *identity.Principal {
	if c.as == "" {
		return nil
	}
	return &identity.Principal{ID: c.as, Method: "cli"}
}

// decides reports whether the database decides per caller what it reads
// (a role, claims or a login per principal).
func (c *callerFlags) decides() bool { return c.runAs != "" || c.rlsClaims || c.loginMap != "" }

// perCaller reports whether --run-as chooses a role per principal.
func (c *callerFlags) perCaller() bool {
	return strings.HasPrefix(c.runAs, "claim:") || strings.HasPrefix(c.runAs, "map:")
}

// usage reports a usage error of these flags for the executor the flags
// name: only PostgreSQL chooses roles and claims per caller.
func (c *callerFlags) usage(postgresDSN bool) error {
	if (c.runAs != "" || c.rlsClaims) && !postgresDSN {
		return &exitErr{code: exitUsage, err: errors.New("--run-as and --rls-claims need a PostgreSQL --dsn " +
			"(MySQL and MariaDB: give each principal a login of its own; SQLite has no roles)")}
	}
	if len(c.allowRoles) > 0 && !strings.HasPrefix(c.runAs, "claim:") {
		return &exitErr{code: exitUsage, err: errors.New("--allow-roles goes with --run-as claim:NAME")}
	}
	return nil
}

// apply sets the role and claims options of --run-as and --rls-claims.
func (c *callerFlags) apply(opts *postgres.Options) error {
	opts.Claims = c.rlsClaims
	kind, arg, _ := strings.Cut(c.runAs, ":")
	switch {
	case c.runAs == "":
	case kind == "claim" && arg != "":
		opts.RoleFor = postgres.RoleFromClaim(arg, c.allowRoles...)
	case kind == "map" && arg != "":
		m, err := c.loadMap("--run-as map", arg, "role name")
		if err != nil {
			return err
		}
		opts.RoleFor = postgres.RoleMap(m)
	case kind == "claim" || kind == "map":
		return &exitErr{code: exitUsage, err: fmt.Errorf("--run-as %s: name the %s (--run-as %s:…)", c.runAs, map[string]string{"claim": "claim", "map": "file"}[kind], kind)}
	default:
		opts.Role = c.runAs
	}
	return nil
}

// loadMap reads a YAML or JSON map of principal id to a non-empty value
// (what names the value, for errors) and records it for rightsVersion.
func (c *callerFlags) loadMap(flag, path, what string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	var m map[string]string
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s %s: a map of principal id to %s: %w", flag, path, what, err)
	}
	for id, v := range m {
		if v == "" {
			return nil, fmt.Errorf("%s %s: principal %q has an empty %s", flag, path, id, what)
		}
	}
	if c.loaded != nil {
		b, _ := json.Marshal(m) // a map of strings always encodes, its keys sorted
		*c.loaded = append(*c.loaded, flag+" "+string(b))
	}
	return m, nil
}

// perPrincipal is the executor of --login-map: the default's schema and
// login, each call on its principal's login.
type perPrincipal struct {
	guarded // the --dsn executor
	route   *executor.PerPrincipal
}

func (p perPrincipal) Execute(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	return p.route.Execute(ctx, req)
}

func (p perPrincipal) Check(ctx context.Context, sql string) error { return p.route.Check(ctx, sql) }

func (p perPrincipal) Close() error { return p.route.Close() }

// withLogins wraps def in the executors of --login-map, each opened like
// def with its principal's DSN.
func (o *options) withLogins(ctx context.Context, def guarded) (guarded, error) {
	if o.caller.loginMap == "" {
		return def, nil
	}
	if o.dsn == "" {
		def.Close()
		return nil, &exitErr{code: exitUsage, err: errors.New("--login-map needs --dsn (a server with logins)")}
	}
	dsns, err := o.caller.loadMap("--login-map", o.caller.loginMap, "DSN")
	if err != nil {
		def.Close()
		return nil, err
	}
	byID := map[string]text2sql.Executor{}
	closeAll := func() {
		for _, e := range byID {
			e.(guarded).Close()
		}
		def.Close()
	}
	for id, dsn := range dsns {
		per := *o
		per.dsn, per.caller.loginMap = dsn, ""
		ex, err := per.openExecutor(ctx, "")
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("--login-map: principal %q: %w", id, err)
		}
		byID[id] = ex
	}
	route, err := executor.NewPerPrincipal(def, byID)
	if err != nil {
		closeAll()
		return nil, err
	}
	return perPrincipal{guarded: def, route: route}, nil
}

// rightsVersion is server.Config.RightsVersion: a hash of the flags that
// decide what a caller reads and of the maps the executors loaded — not
// the files as they are now, since an edit after loading changes nothing
// the database does until the next start.
func (c *callerFlags) rightsVersion() string {
	h := sha256.New()
	fmt.Fprintf(h, "run-as=%q rls-claims=%t allow-roles=%q login-map=%q\n", c.runAs, c.rlsClaims, c.allowRoles, c.loginMap)
	if c.loaded != nil {
		// Sorted: --login-map's executors load the --run-as map in the
		// map's random order.
		for _, m := range slices.Sorted(slices.Values(*c.loaded)) {
			fmt.Fprintf(h, "%q\n", m)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
