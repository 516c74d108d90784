//go:build race

package retriever

const raceEnabled = true
