package server

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/text2sql-go/text2sql/chart"
)

//go:embed web
var webFS embed.FS

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the OpenAPI 3.1 document served at /openapi.json.
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(openAPIDoc)
}

// pageCSP allows only the page's own script, style and API calls.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// pageHandler serves the web page: / is web/index.html, /assets/* the
// rest of web/.
func pageHandler() http.Handler {
	sub, err := fs.Sub(webFS, "web")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(sub)
	vendor := chart.Assets()
	vendorFiles := http.FileServerFS(vendor)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", pageCSP)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-cache")
		if r.URL.Path == "/" {
			http.ServeFileFS(w, r, sub, "index.html")
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = r.URL.Path[len("/assets"):]
		dir, srv := sub, files
		if rest, ok := strings.CutPrefix(r2.URL.Path, "/vendor/"); ok {
			// The Vega builds the page loads when a result has a chart.
			r2.URL.Path = "/" + rest
			dir, srv = vendor, vendorFiles
		}
		// A missing asset (or a directory, which the file server would
		// list) gets the API's JSON 404, not the file server's plain text.
		name := strings.TrimPrefix(path.Clean(r2.URL.Path), "/")
		if st, err := fs.Stat(dir, name); !fs.ValidPath(name) || err != nil || st.IsDir() {
			writeError(w, r, CodeNotFound, "no such asset")
			return
		}
		srv.ServeHTTP(w, r2)
	})
}
