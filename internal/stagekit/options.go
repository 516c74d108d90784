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
	switch d {
	case "", text2sql.DialectSQLite, text2sql.DialectPostgres, text2sql.DialectMySQL:
		return nil
	}
	return fmt.Errorf("%w: %s: unknown dialect %q", text2sql.ErrInvalidConfig, stage, d)
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
