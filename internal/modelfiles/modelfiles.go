// Package modelfiles keeps local model directories: it checks that a
// directory holds a model's files and, unless offline, downloads what is
// missing, either one archive (a fastembed .tar.gz) or one URL per file (a
// Hugging Face repository). Files are written under temporary names and
// renamed, so an interrupted download leaves no half file under a final
// name.
package modelfiles

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// MaxDownload bounds the bytes read from one download (archive or file):
// the largest catalogued model, bge-base-en-v1.5, unpacks to about 440 MB.
const MaxDownload = 2 << 30

// MissingError says a model directory lacks files and they were not
// downloaded: offline, or the download failed (Err). Its message is one
// line naming the directory to fill, the files needed and where to get
// them.
type MissingError struct {
	Model   string   // the model's name
	Dir     string   // the directory that must hold the files
	Missing []string // the files not there, relative to Dir
	// URLs are where the files come from: one archive to unpack into
	// Dir's parent, or one URL per missing file.
	URLs    []string
	Archive bool  // URLs[0] is an archive whose top directory is Dir's base name
	Err     error // the download's error; nil when offline
}

// Error returns the one-line message.
func (e *MissingError) Error() string {
	msg := fmt.Sprintf("model %s is not in %s (missing %s): ", e.Model, e.Dir, strings.Join(e.Missing, ", "))
	if e.Archive {
		msg += fmt.Sprintf("download %s and unpack it into %s", e.URLs[0], filepath.Dir(e.Dir))
	} else {
		msg += fmt.Sprintf("download %s into %s", strings.Join(e.URLs, " and "), e.Dir)
	}
	if e.Err != nil {
		msg += fmt.Sprintf(" (the download failed: %v)", e.Err)
	}
	return msg
}

// Unwrap returns the download's error.
func (e *MissingError) Unwrap() error { return e.Err }

// FileError says a model file is there but unusable: unreadable, not a
// model the runtime can load, a malformed tokenizer.json.
type FileError struct {
	Path string // the file
	Err  error  // what is wrong
}

// Error names the file and the fault.
func (e *FileError) Error() string {
	return fmt.Sprintf("model file %s is unusable: %v (delete it to download it again)", e.Path, e.Err)
}

// Unwrap returns Err.
func (e *FileError) Unwrap() error { return e.Err }

// Spec is a model directory and where its files come from.
type Spec struct {
	Model string   // the model's name, for messages
	Dir   string   // the directory holding the files
	Files []string // the files needed, slash-separated relative paths
	// Archive, when set, is the URL of a .tar.gz holding the files, at its
	// top level or under one top directory. Otherwise each file is
	// BaseURL + "/" + its path.
	Archive string
	BaseURL string
	Offline bool         // never download; a missing file is a *MissingError
	Client  *http.Client // nil: http.DefaultClient
}

// Ensure returns nil when every file of s is in s.Dir, else downloads the
// missing ones (unless offline) and returns nil when they are then all
// there. Its errors are a *MissingError (offline, download failed, or the
// download lacked a file), or the caller's context error.
func Ensure(ctx context.Context, s Spec) error {
	missing := s.missing()
	if len(missing) == 0 {
		return nil
	}
	if s.Offline {
		return s.error(missing, nil)
	}
	var err error
	if s.Archive != "" {
		err = s.fetchArchive(ctx)
	} else {
		for _, f := range missing {
			if err = s.fetchFile(ctx, f); err != nil {
				break
			}
		}
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if err == nil {
		if missing = s.missing(); len(missing) > 0 {
			err = errors.New("the download does not contain them")
		}
	}
	if err != nil {
		return s.error(s.missing(), err)
	}
	return nil
}

func (s Spec) missing() []string {
	var out []string
	for _, f := range s.Files {
		if st, err := os.Stat(filepath.Join(s.Dir, filepath.FromSlash(f))); err != nil || st.IsDir() {
			out = append(out, f)
		}
	}
	return out
}

func (s Spec) error(missing []string, err error) *MissingError {
	e := &MissingError{Model: s.Model, Dir: s.Dir, Missing: missing, Err: err}
	if s.Archive != "" {
		e.URLs, e.Archive = []string{s.Archive}, true
	} else {
		for _, f := range missing {
			e.URLs = append(e.URLs, s.BaseURL+"/"+f)
		}
	}
	return e
}

func (s Spec) get(ctx context.Context, url string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return resp.Body, nil
}

// fetchFile downloads one file to a temporary name beside it and renames it.
func (s Spec) fetchFile(ctx context.Context, name string) error {
	body, err := s.get(ctx, s.BaseURL+"/"+name)
	if err != nil {
		return err
	}
	defer body.Close()
	return writeFile(filepath.Join(s.Dir, filepath.FromSlash(name)), io.LimitReader(body, MaxDownload))
}

// fetchArchive unpacks the archive's regular files into s.Dir, dropping a
// top directory named as the model or as s.Dir's base.
func (s Spec) fetchArchive(ctx context.Context) error {
	body, err := s.get(ctx, s.Archive)
	if err != nil {
		return err
	}
	defer body.Close()
	gz, err := gzip.NewReader(io.LimitReader(body, MaxDownload))
	if err != nil {
		return fmt.Errorf("%s: %w", s.Archive, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.Archive, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if first, rest, ok := strings.Cut(name, "/"); ok && (first == s.Model || first == filepath.Base(s.Dir)) {
			name = rest
		}
		if !fs.ValidPath(name) {
			return fmt.Errorf("%s: entry %q leaves the model directory", s.Archive, h.Name)
		}
		if err := writeFile(filepath.Join(s.Dir, filepath.FromSlash(name)), tr); err != nil {
			return err
		}
	}
}

// writeFile copies r into path through a temporary file in its directory.
func writeFile(p string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// DefaultRoot is the directory under which models live when the caller
// names none: os.UserCacheDir()/text2sql/models, or
// os.TempDir()/text2sql-<uid>/models where there is no user cache
// directory (no $HOME).
func DefaultRoot() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "text2sql", "models")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("text2sql-%d", os.Getuid()), "models")
}
