package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/text2sql-go/text2sql/executor/catalog"
)

// sourceFlags are the repeatable database flags as given.
type sourceFlags struct {
	db, dsn, mcp []string
}

// member is one database of a catalog: the flag that named it (db, dsn
// or mcp), its NAME and its path, DSN or MCP server.
type member struct {
	flag, name, spec string
}

// libpqKeys are the first words of PostgreSQL key=value DSNs: "host=…" is
// a DSN, not a database named host.
var libpqKeys = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true, "password": true, "passfile": true,
	"sslmode": true, "sslrootcert": true, "sslcert": true, "sslkey": true, "connect_timeout": true,
	"application_name": true, "options": true, "service": true, "target_session_attrs": true,
	"fallback_application_name": true, "client_encoding": true, "keepalives": true, "keepalives_idle": true,
	"keepalives_interval": true, "keepalives_count": true, "tcp_user_timeout": true, "channel_binding": true,
	"gssencmode": true, "gsslib": true, "gssdelegation": true, "krbsrvname": true, "require_auth": true,
	"requirepeer": true, "requiressl": true, "sslpassword": true, "sslcrl": true, "sslcrldir": true, "sslsni": true,
	"sslcompression": true, "sslnegotiation": true, "sslcertmode": true, "ssl_min_protocol_version": true,
	"ssl_max_protocol_version": true, "load_balance_hosts": true, "replication": true,
}

// named splits a --db or --dsn value NAME=SPEC; ok is false when the
// value has no name: a file that exists, a key=value DSN, or no '=' after
// an identifier.
func named(flag, v string) (m member, ok bool) {
	name, spec := mcpSpec(v)
	switch {
	case name == "":
		return member{flag: flag, spec: v}, false
	case flag == "db":
		if _, err := os.Stat(v); err == nil {
			return member{flag: flag, spec: v}, false
		}
	case flag == "dsn":
		if libpqKeys[strings.ToLower(name)] {
			return member{flag: flag, spec: v}, false
		}
	}
	return member{flag: flag, name: name, spec: spec}, true
}

// resolveSources reads the database flags: one unnamed --db, --dsn or
// --mcp (an --mcp may be named) is one database, as before catalogs;
// several, or a named --db or --dsn, are the members of a catalog, each
// needing a NAME. copying is load's reading: one --db copied to one
// --dsn.
func (o *options) resolveSources(copying bool) error {
	if copying {
		if len(o.sources.db) > 1 || len(o.sources.dsn) > 1 || len(o.sources.mcp) > 0 {
			return &exitErr{code: exitUsage, err: errors.New("load copies one --db into one --dsn")}
		}
		o.db, o.dsn = strings.Join(o.sources.db, ""), strings.Join(o.sources.dsn, "")
		return nil
	}
	var all []member
	anyNamed := false
	for _, f := range []struct {
		flag string
		vs   []string
	}{{"db", o.sources.db}, {"dsn", o.sources.dsn}, {"mcp", o.sources.mcp}} {
		for _, v := range f.vs {
			var m member
			if f.flag == "mcp" {
				name, _ := mcpSpec(v)
				m = member{flag: f.flag, name: name, spec: v} // openMCP splits NAME= itself
			} else {
				var ok bool
				m, ok = named(f.flag, v)
				anyNamed = anyNamed || ok
			}
			all = append(all, m)
		}
	}
	o.db, o.dsn, o.mcp, o.members = "", "", "", nil
	if len(all) == 1 && !anyNamed {
		o.use(all[0])
		return nil
	}
	if len(all) == 0 {
		return nil
	}
	usage := func(format string, args ...any) error {
		return &exitErr{code: exitUsage, err: fmt.Errorf(format, args...)}
	}
	if o.demo {
		return usage("--demo is one database; it does not join a catalog of --db/--dsn/--mcp")
	}
	if o.caller.decides() {
		return usage("--run-as, --rls-claims and --login-map apply to one PostgreSQL database, not to a catalog of several")
	}
	seen := map[string]bool{}
	for _, m := range all {
		if m.name == "" {
			why := ""
			if _, err := os.Stat(m.spec); err == nil && m.flag == "db" && strings.Contains(m.spec, "=") {
				why = " (read as a path: the file " + m.spec + " exists)"
			}
			return usage("--%s %s%s: in a catalog of several databases, name each: --%s NAME=%s", m.flag, m.spec, why, m.flag, strings.TrimPrefix(m.spec, "="))
		}
		if seen[strings.ToLower(m.name)] {
			return usage("database name %q given twice", m.name)
		}
		seen[strings.ToLower(m.name)] = true
	}
	o.members = all
	return nil
}

// use makes m the one database of o: its --db, --dsn or --mcp.
func (o *options) use(m member) {
	switch m.flag {
	case "db":
		o.db = m.spec
	case "dsn":
		o.dsn = m.spec
	default:
		o.mcp = m.spec
	}
}

// openCatalog opens every member and puts them in one catalog.
func (o *options) openCatalog(ctx context.Context) (guarded, error) {
	var dbs []catalog.Database
	closeAll := func() {
		for _, d := range dbs {
			d.Executor.(guarded).Close()
		}
	}
	for _, m := range o.members {
		ex, err := o.openSource(ctx, m)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("database %s: %w", m.name, err)
		}
		dbs = append(dbs, catalog.Database{Name: m.name, Executor: ex})
	}
	c, err := catalog.New(dbs, catalog.Options{MaxRows: o.maxRows, Timeout: o.timeout})
	if err != nil {
		closeAll()
		return nil, &exitErr{code: exitUsage, err: err}
	}
	return c, nil
}

// catalogKey identifies a catalog for its persistent index: the members'
// names and keys.
func (o *options) catalogKey() (string, error) {
	parts := make([]string, len(o.members))
	for i, m := range o.members {
		one := &options{}
		one.use(m)
		k, err := one.indexKey(m.spec)
		if err != nil {
			return "", err
		}
		parts[i] = m.name + "=" + k
	}
	return "catalog:" + strings.Join(parts, ";"), nil
}
