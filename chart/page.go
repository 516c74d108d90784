package chart

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
)

// vendor holds the UMD builds of vega 5.33.1, vega-lite 5.23.0,
// vega-embed 6.29.0 and vega-interpreter 1.2.1 from the npm registry
// (vendor/update.sh refreshes them; BSD-3-Clause, vendor/LICENSE).
//
//go:embed vendor/*.js vendor/LICENSE
var vendor embed.FS

// Scripts are the vendored files a page loads, in load order.
var Scripts = []string{"vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "vega-interpreter.min.js"}

// Assets returns the vendored Vega builds (the files of Scripts and
// LICENSE) for a server to serve.
func Assets() fs.FS {
	sub, err := fs.Sub(vendor, "vendor")
	if err != nil {
		panic(err) // the embedded directory is fixed at build time
	}
	return sub
}

// EmbedOptions are vega-embed's options for the charts of this package:
// canvas rendering, no action menu, and Vega's expression interpreter
// instead of generated code, so the chart draws under a
// Content-Security-Policy without 'unsafe-eval'. A page passes them as
// vegaEmbed(el, spec, {...EmbedOptions, expr: vega.expressionInterpreter}).
const EmbedOptions = `{"renderer": "canvas", "actions": false, "ast": true}`

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>{{.Title}}</title>
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1d232a; }
pre { background: #f3f5f7; padding: .75rem; overflow-x: auto; }
#chart { width: 100%; }
</style>
{{range .Scripts}}<script>{{.}}</script>
{{end}}</head>
<body>
<h1>{{.Title}}</h1>
{{if .SQL}}<pre><code>{{.SQL}}</code></pre>
{{end}}<div id="chart"></div>
<script>
vegaEmbed("#chart", {{.Spec}}, Object.assign({{.Options}}, {expr: vega.expressionInterpreter}));
</script>
</body>
</html>
`))

// Page returns a self-contained HTML page that draws spec (the Vega
// scripts inline; its Content-Security-Policy allows no network at all),
// headed by title and showing sql when it is not empty. Errors: a nil spec, or one that does not marshal.
func Page(spec *Spec, title, sql string) ([]byte, error) {
	if spec == nil {
		return nil, fmt.Errorf("chart: Page needs a spec")
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	var scripts []template.JS
	for _, name := range Scripts {
		b, err := vendor.ReadFile("vendor/" + name)
		if err != nil {
			return nil, fmt.Errorf("chart: %w", err)
		}
		scripts = append(scripts, template.JS(b)) // vendored builds, not input
	}
	var buf bytes.Buffer
	err = pageTemplate.Execute(&buf, map[string]any{
		"Title": title, "SQL": sql, "Scripts": scripts,
		"Spec": template.JS(specJSON), "Options": template.JS(EmbedOptions),
	})
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	return buf.Bytes(), nil
}
