package tinymodel

import (
	"os"
	"path/filepath"
)

// Embedder and cross-encoder directory layouts: the embedder's as in a
// fastembed archive, the cross-encoder's as in a Hugging Face ONNX export.
const (
	EmbedderModelFile     = "model_optimized.onnx"
	CrossEncoderModelFile = "onnx/model.onnx"
	TokenizerFile         = "tokenizer.json"
)

// Files returns the files of the embedder and of the cross-encoder
// directory, path (slash-separated, relative to the directory) → contents.
func Files() (embedder, crossEncoder map[string][]byte, err error) {
	tok, err := Tokenizer()
	if err != nil {
		return nil, nil, err
	}
	embedder = map[string][]byte{EmbedderModelFile: Embedder(Hidden), TokenizerFile: tok}
	crossEncoder = map[string][]byte{CrossEncoderModelFile: CrossEncoder(), TokenizerFile: tok}
	return embedder, crossEncoder, nil
}

// Write writes files into dir, creating directories as needed.
func Write(dir string, files map[string][]byte) error {
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
