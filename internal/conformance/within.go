package conformance

import (
	"context"
	"fmt"
	"time"
)

// Within runs call under ctx and returns its error, or, as the second
// result, a violation "<what> still running after <d>" when call has not
// returned within d (it is then left running).
func Within(ctx context.Context, d time.Duration, what string, call func(ctx context.Context) error) (error, error) {
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	select {
	case err := <-done:
		return err, nil
	case <-time.After(d):
		return nil, fmt.Errorf("%s still running after %v", what, d)
	}
}
