package conversation

import (
	"context"
	"time"
)

// Saved is a stored conversation: its id, its owner (the principal that
// started it; "" without callers) and its State.
type Saved struct {
	ID      string    `json:"id"`
	Owner   string    `json:"owner"`
	State   State     `json:"state"`
	Updated time.Time `json:"updated"`
}

// Store keeps conversations between requests, processes and replicas
// (package conversation/sqlite is one). Implementations must be safe for
// concurrent use.
type Store interface {
	// Load returns the conversation with that id, or nil.
	Load(ctx context.Context, id string) (*Saved, error)
	// Save inserts or replaces s.
	Save(ctx context.Context, s Saved) error
	// List returns the owner's conversations, most recently updated
	// first, at most limit (limit <= 0: all).
	List(ctx context.Context, owner string, limit int) ([]Saved, error)
	// Delete removes the conversation with that id and reports whether
	// there was one.
	Delete(ctx context.Context, id string) (bool, error)
}
