// Package onnxrt loads the ONNX Runtime shared library once per process and
// runs models on sessions that are opened once and reused for every call.
//
// The library is github.com/yalue/onnxruntime_go v1.27.0, built against the
// C API of ONNX Runtime 1.24.1 (API level 24): the shared library must be
// that version (.ci/install-onnxruntime.sh installs it). Where the library
// is: Find.
package onnxrt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// LibraryEnv is the environment variable naming the ONNX Runtime shared
// library file, used when no path is given in code.
const LibraryEnv = "ONNXRUNTIME_LIB"

// Version is the ONNX Runtime release whose C API the bindings use.
const Version = "1.24.1"

// InstallDir is where .ci/install-onnxruntime.sh puts the library; Find
// looks there after LibraryEnv.
const InstallDir = "/usr/local/lib/onnxruntime"

// ErrRuntime is matched by every *RuntimeError.
var ErrRuntime = errors.New("onnx runtime unavailable")

// RuntimeError says the ONNX Runtime shared library could not be found or
// loaded.
type RuntimeError struct {
	Path string // the library file tried; empty when none was found
	Err  error  // the loader's error
}

// Error names the file and how to install the library.
func (e *RuntimeError) Error() string {
	where := e.Path
	if where == "" {
		where = "no library found"
	}
	return fmt.Sprintf("onnx runtime %s (%s): %v; install it with .ci/install-onnxruntime.sh or from https://github.com/microsoft/onnxruntime/releases/tag/v%s and set %s to the libonnxruntime file", Version, where, e.Err, Version, LibraryEnv)
}

// Unwrap returns Err.
func (e *RuntimeError) Unwrap() error { return e.Err }

// Is makes e match ErrRuntime.
func (e *RuntimeError) Is(target error) bool { return target == ErrRuntime }

// libraryName is the shared library's file name on this system.
func libraryName() string {
	switch runtime.GOOS {
	case "darwin":
		return "libonnxruntime.dylib"
	case "windows":
		return "onnxruntime.dll"
	}
	return "libonnxruntime.so"
}

// SearchDirs are the directories Find looks in, in order, when no path is
// given: InstallDir, $LD_LIBRARY_PATH's, /usr/local/lib, /usr/lib, the
// multiarch /usr/lib/*-linux-gnu, /opt/homebrew/lib.
func SearchDirs() []string {
	dirs := []string{InstallDir}
	dirs = append(dirs, filepath.SplitList(os.Getenv("LD_LIBRARY_PATH"))...)
	dirs = append(dirs, "/usr/local/lib", "/usr/lib")
	multiarch, _ := filepath.Glob("/usr/lib/*-linux-gnu")
	return append(append(dirs, multiarch...), "/opt/homebrew/lib")
}

// Find returns the library file to load and where its name came from: path
// when non-empty ("option"), else $ONNXRUNTIME_LIB ("ONNXRUNTIME_LIB"), else
// the first libonnxruntime.so (.dylib, onnxruntime.dll) in SearchDirs
// ("search"). It does not load anything. A named file that does not exist,
// or no file found, is a *RuntimeError.
func Find(path string) (file, source string, err error) {
	switch {
	case path != "":
		file, source = path, "option"
	case os.Getenv(LibraryEnv) != "":
		file, source = os.Getenv(LibraryEnv), LibraryEnv
	default:
		for _, dir := range SearchDirs() {
			p := filepath.Join(dir, libraryName())
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, "search", nil
			}
		}
		return "", "search", &RuntimeError{Err: fmt.Errorf("%s is unset and no %s is in %s, LD_LIBRARY_PATH or the system library directories", LibraryEnv, libraryName(), InstallDir)}
	}
	if st, err := os.Stat(file); err != nil || st.IsDir() {
		if err == nil {
			err = errors.New("is a directory")
		}
		return file, source, &RuntimeError{Path: file, Err: err}
	}
	return file, source, nil
}

var env struct {
	sync.Mutex
	path string // the library loaded; "" before the first successful Init
}

// Init loads the library (path as for Find) and creates the process-wide
// runtime environment, once: later calls return nil if the same file, or
// any file when path is empty, is already loaded, and a *RuntimeError when
// another file is asked for (one process holds one runtime). The
// environment lives until the process ends.
func Init(path string) error {
	env.Lock()
	defer env.Unlock()
	if env.path != "" {
		if path == "" || path == env.path {
			return nil
		}
		return &RuntimeError{Path: path, Err: fmt.Errorf("this process already loaded %s", env.path)}
	}
	file, _, err := Find(path)
	if err != nil {
		return err
	}
	ort.SetSharedLibraryPath(file)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return &RuntimeError{Path: file, Err: err}
	}
	env.path = file
	return nil
}

// Loaded returns the library file Init loaded and its ONNX Runtime version,
// or two empty strings before a successful Init.
func Loaded() (file, version string) {
	env.Lock()
	defer env.Unlock()
	if env.path == "" {
		return "", ""
	}
	return env.path, ort.GetVersion()
}
