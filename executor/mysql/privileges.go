package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// readPrivileges are the privileges that only read: every other privilege
// a login holds (FILE, SUPER, PROCESS, RELOAD, SHUTDOWN, CREATE USER,
// INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, EXECUTE, LOCK TABLES, ALL
// PRIVILEGES, the administrative privileges of MariaDB 10.5 and MySQL 8,
// and any added later) is reported as elevated.
var readPrivileges = map[string]bool{"SELECT": true, "USAGE": true, "SHOW VIEW": true, "SHOW DATABASES": true}

// elevatedPrivileges reads the login's grants (SHOW GRANTS: the user's
// own and those of its default role) and names what goes beyond reading,
// e.g. "ALL PRIVILEGES ON *.*", "FILE ON *.*", "GRANT OPTION ON *.*".
func elevatedPrivileges(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SHOW GRANTS")
	if err != nil {
		return nil, fmt.Errorf("mysql: SHOW GRANTS: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, fmt.Errorf("mysql: SHOW GRANTS: %w", err)
		}
		lines = append(lines, line)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mysql: SHOW GRANTS: %w", err)
	}
	return ElevatedGrants(lines), nil
}

// ElevatedGrants names the privileges beyond reading in the lines of
// SHOW GRANTS ("GRANT SELECT, FILE ON *.* TO `u`@`%` WITH GRANT OPTION"):
// each privilege that is not SELECT, USAGE, SHOW VIEW or SHOW DATABASES,
// with the object it is granted on, and GRANT OPTION. Lines that are not
// GRANT … ON … (role grants, SET DEFAULT ROLE) name nothing. It returns
// nil when the grants only read.
func ElevatedGrants(lines []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, line := range lines {
		upper := strings.ToUpper(line)
		if !strings.HasPrefix(upper, "GRANT ") {
			continue
		}
		on := strings.Index(upper, " ON ")
		to := strings.LastIndex(upper, " TO ")
		if on < 0 || to < on {
			continue
		}
		object := strings.TrimSpace(line[on+4 : to])
		for _, p := range splitPrivileges(upper[len("GRANT "):on]) {
			if p != "" && !readPrivileges[p] {
				add(p + " ON " + object)
			}
		}
		if strings.Contains(upper[to:], "WITH GRANT OPTION") {
			add("GRANT OPTION ON " + object)
		}
	}
	return out
}

// splitPrivileges splits a privilege list at the commas outside column
// lists: "SELECT (a, b), INSERT" → "SELECT", "INSERT".
func splitPrivileges(list string) []string {
	var out []string
	depth, start := 0, 0
	flush := func(end int) {
		p := list[start:end]
		if i := strings.IndexByte(p, '('); i >= 0 {
			p = p[:i]
		}
		out = append(out, strings.Join(strings.Fields(p), " "))
	}
	for i := 0; i < len(list); i++ {
		switch list[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				flush(i)
				start = i + 1
			}
		}
	}
	flush(len(list))
	return out
}
