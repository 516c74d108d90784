package stagekit

import (
	"fmt"
	"math"

	text2sql "github.com/text2sql-go/text2sql"
)

// MaxTemperature is the highest sampling temperature a stage accepts, the
// top of the range the model providers take.
const MaxTemperature = 2

// CheckDialect checks a stage's Options.Dialect: "" (the context's) or
// one of the three dialects. stage names the stage in the error, e.g.
// "planner"; the error wraps text2sql.ErrInvalidConfig.
func CheckDialect(stage string, d text2sql.Dialect) error {
	if d == "" || known(d) {
		return nil
	}
	return fmt.Errorf("%w: %s: unknown dialect %q (want %q, %q or %q)", text2sql.ErrInvalidConfig, stage, d,
		text2sql.DialectSQLite, text2sql.DialectPostgres, text2sql.DialectMySQL)
}

// known reports whether d is one of the three dialects.
func known(d text2sql.Dialect) bool {
	switch d {
	case text2sql.DialectSQLite, text2sql.DialectPostgres, text2sql.DialectMySQL:
		return true
	}
	return false
}

// ResolveDialect is the dialect a stage writes for: option (its
// Options.Dialect, checked by CheckDialect) when set, else the retrieved
// context's (r may be nil), else fallback (e.g. the schema's), else
// SQLite. An unknown dialect of r or fallback is passed over: a prompt
// can only be written for one of the three.
func ResolveDialect(option text2sql.Dialect, r *text2sql.Retrieval, fallback text2sql.Dialect) text2sql.Dialect {
	switch {
	case option != "":
		return option
	case r != nil && known(r.Dialect):
		return r.Dialect
	case known(fallback):
		return fallback
	}
	return text2sql.DialectSQLite
}

// CheckTemperature checks a stage's Options.Temperature: a number in
// [0, MaxTemperature]. stage names the stage in the error; the error wraps
// text2sql.ErrInvalidConfig.
func CheckTemperature(stage string, t float64) error {
	if math.IsNaN(t) || t < 0 || t > MaxTemperature {
		return fmt.Errorf("%w: %s: temperature %v is outside [0, %v]", text2sql.ErrInvalidConfig, stage, t, MaxTemperature)
	}
	return nil
}

// Reasks resolves a stage's Options.MaxReasks to the number of re-asks
// (Call.MaxReasks): 0 means the default, one; a negative value none.
func Reasks(n int) int {
	switch {
	case n == 0:
		return 1
	case n < 0:
		return 0
	}
	return n
}
