package birdschema

import (
	"fmt"
	"strings"
)

// PostgresName is the name a BIRD identifier has in BIRD's PostgreSQL
// databases: a plain identifier (letters, digits, underscores, not
// starting with a digit) folded to lower case, as PostgreSQL folds it
// unquoted; any other name ("Free Meal Count (K-12)", "T-BIL") exactly as
// written. The PostgreSQL gold queries of BIRD mini-dev are written
// against names of this form.
func PostgresName(name string) string {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return name
	}
	return strings.ToLower(name)
}

// PostgresType maps a column_types entry of tables.json to a PostgreSQL
// type: integer → bigint, real → double precision, date → date,
// datetime → timestamp, text and anything else → text.
func PostgresType(typ string) string {
	switch strings.ToLower(typ) {
	case "integer", "number":
		return "bigint"
	case "real":
		return "double precision"
	case "date":
		return "date"
	case "datetime":
		return "timestamp"
	}
	return "text"
}

// PostgresDDL returns the CREATE TABLE statements of s for PostgreSQL, one
// per table in the order of TableNames, in the schema sch (quoted), with
// names as PostgresName gives them (double-quoted) and types as
// PostgresType gives them, and primary keys (which PostgreSQL needs to
// accept a GROUP BY on the key with other columns of the table selected).
// Foreign keys are left out: the tables are for checking queries, not for
// holding data.
func (s *Schema) PostgresDDL(sch string) ([]string, error) {
	cols, err := s.columns()
	if err != nil {
		return nil, err
	}
	pks := s.primaryKeys(cols)
	out := make([]string, len(s.TableNames))
	for ti, tn := range s.TableNames {
		var defs []string
		seen := map[string]bool{}
		for ci, c := range cols {
			if ci == 0 || c.table != ti {
				continue
			}
			name := PostgresName(c.name)
			if seen[name] {
				continue // BIRD lists a few columns twice
			}
			seen[name] = true
			defs = append(defs, quote(name)+" "+PostgresType(c.typ))
		}
		if pk := pks[ti]; len(pk) > 0 {
			var names []string
			for _, ci := range pk {
				names = append(names, quote(PostgresName(cols[ci].name)))
			}
			defs = append(defs, "PRIMARY KEY ("+strings.Join(names, ", ")+")")
		}
		if len(defs) == 0 {
			return nil, fmt.Errorf("birdschema: %s: table %s has no columns", s.DBID, tn)
		}
		out[ti] = "CREATE TABLE " + quote(sch) + "." + quote(PostgresName(tn)) + " (\n  " + strings.Join(defs, ",\n  ") + "\n)"
	}
	return out, nil
}
