package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/postgres"
)

// callerFlags are the flags of execution as the caller: who the command
// acts for (--as) and how the database decides what they read (--run-as,
// --allow-roles, --rls-claims).
type callerFlags struct {
	as         string
	runAs      string
	allowRoles []string
	rlsClaims  bool
}

func (c *callerFlags) bind(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&c.as, "as", "", "act as this principal (its id; method \"cli\"), to try per-caller roles and row-level security locally; serve takes principals from --auth instead")
	f.StringVar(&c.runAs, "run-as", "", "PostgreSQL: the role statements run as — ROLE (one role for every caller), claim:NAME (the role in the principal's claim NAME, e.g. claim:role from a JWT) or map:FILE (YAML/JSON map of principal id to role)")
	f.StringSliceVar(&c.allowRoles, "allow-roles", nil, "with --run-as claim:NAME, the only roles a claim may name (comma-separated)")
	f.BoolVar(&c.rlsClaims, "rls-claims", false, "PostgreSQL: set the caller's claims for row-level security as PostgREST and Supabase do (request.jwt.claims, request.jwt.claim.sub), transaction-local")
}

// principal is the --as principal, or nil.
func (c *callerFlags) principal() *text2sql.Principal {
	if c.as == "" {
		return nil
	}
	return &text2sql.Principal{ID: c.as, Method: "cli"}
}

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
		m, err := loadRoleMap(arg)
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

// loadRoleMap reads a YAML or JSON map of principal id to role.
func loadRoleMap(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--run-as map: %w", err)
	}
	var m map[string]string
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("--run-as map %s: a map of principal id to role name: %w", path, err)
	}
	for id, role := range m {
		if role == "" {
			return nil, fmt.Errorf("--run-as map %s: principal %q has an empty role", path, id)
		}
	}
	return m, nil
}
