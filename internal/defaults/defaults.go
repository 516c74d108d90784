// Package defaults fills the options a caller left unset.
package defaults

import "cmp"

// Positive sets *v to def when *v is zero or negative: the convention of
// every size, count and duration option in this module, where zero means
// "the documented default" and a negative value has no meaning.
func Positive[T cmp.Ordered](v *T, def T) {
	var zero T
	if *v <= zero {
		*v = def
	}
}
