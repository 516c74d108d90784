package bm25

import (
	"bytes"
	"encoding/gob"
	"fmt"
)

// stored is an Index as MarshalBinary writes it: the terms in id order
// and their postings as parallel arrays.
type stored struct {
	Params  Params
	N       int
	AvgLen  float64
	Terms   []string
	Docs    [][]int32
	Weights [][]float32
}

// MarshalBinary encodes the index (gob), so an index of documents that
// have not changed can be read back with UnmarshalBinary rather than
// tokenized and built again.
func (ix *Index) MarshalBinary() ([]byte, error) {
	s := stored{Params: ix.params, N: ix.n, AvgLen: ix.avgLen, Terms: make([]string, len(ix.terms)),
		Docs: make([][]int32, len(ix.postings)), Weights: make([][]float32, len(ix.postings))}
	for t, id := range ix.terms {
		s.Terms[id] = t
	}
	for id, ps := range ix.postings {
		s.Docs[id], s.Weights[id] = make([]int32, len(ps)), make([]float32, len(ps))
		for i, p := range ps {
			s.Docs[id][i], s.Weights[id][i] = p.doc, p.w
		}
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(s); err != nil {
		return nil, fmt.Errorf("bm25: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary returns the index MarshalBinary encoded in data; an
// error when data is not such an encoding.
func UnmarshalBinary(data []byte) (*Index, error) {
	var s stored
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil {
		return nil, fmt.Errorf("bm25: %w", err)
	}
	if len(s.Docs) != len(s.Terms) || len(s.Weights) != len(s.Terms) {
		return nil, fmt.Errorf("bm25: %d terms, %d posting lists, %d weight lists", len(s.Terms), len(s.Docs), len(s.Weights))
	}
	ix := &Index{params: s.Params, n: s.N, avgLen: s.AvgLen, terms: make(map[string]int32, len(s.Terms)), postings: make([][]posting, len(s.Terms))}
	for id, t := range s.Terms {
		if len(s.Docs[id]) != len(s.Weights[id]) {
			return nil, fmt.Errorf("bm25: term %q: %d postings, %d weights", t, len(s.Docs[id]), len(s.Weights[id]))
		}
		ix.terms[t] = int32(id)
		ps := make([]posting, len(s.Docs[id]))
		for i, d := range s.Docs[id] {
			if d < 0 || int(d) >= s.N {
				return nil, fmt.Errorf("bm25: term %q: document %d of %d", t, d, s.N)
			}
			ps[i] = posting{doc: d, w: s.Weights[id][i]}
		}
		ix.postings[id] = ps
	}
	ix.initPool()
	return ix, nil
}
