// Command gen writes the tiny test models of package tinymodel:
//
//	go run ./internal/tinymodel/gen -embedder embed/fastembed/testdata/tiny -cross-encoder rerank/crossencoder/testdata/tiny
//
// (the go:generate lines of embed/fastembed and rerank/crossencoder run it).
// The output is the same on every run; tinymodel's test checks that the
// committed files are up to date.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/text2sql-go/text2sql/internal/tinymodel"
)

func main() {
	embedDir := flag.String("embedder", "", "directory for the embedder's files")
	crossDir := flag.String("cross-encoder", "", "directory for the cross-encoder's files")
	flag.Parse()
	if err := run(*embedDir, *crossDir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(embedDir, crossDir string) error {
	if embedDir == "" && crossDir == "" {
		return fmt.Errorf("nothing to do: give -embedder DIR, -cross-encoder DIR or both")
	}
	embedder, cross, err := tinymodel.Files()
	if err != nil {
		return err
	}
	if embedDir != "" {
		if err := tinymodel.Write(embedDir, embedder); err != nil {
			return err
		}
	}
	if crossDir != "" {
		return tinymodel.Write(crossDir, cross)
	}
	return nil
}
