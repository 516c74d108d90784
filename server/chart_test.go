package server

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// /v1/run and /v1/ask carry a chart for a grouped count on the demo, and
// none for a single value.
func TestChartInResponses(t *testing.T) {
	const grouped = "SELECT status, COUNT(*) AS n FROM enrollments GROUP BY status ORDER BY n DESC"
	srv := testServer(t, Config{Pipeline: newPipeline(t, sqlModel(grouped), 0)})

	var run struct {
		RowCount int `json:"row_count"`
		Chart    *struct {
			Schema string `json:"$schema"`
			Mark   struct {
				Type string `json:"type"`
			} `json:"mark"`
			Data struct {
				Values []map[string]any `json:"values"`
			} `json:"data"`
		} `json:"chart"`
	}
	r := do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": grouped})
	require.Equal(t, 200, r.status, "%s", r.body)
	r.json(t, &run)
	require.NotNil(t, run.Chart, "%s", r.body)
	assert.Equal(t, "bar", run.Chart.Mark.Type)
	assert.Equal(t, "https://vega.github.io/schema/vega-lite/v5.json", run.Chart.Schema)
	assert.Len(t, run.Chart.Data.Values, run.RowCount)

	r = do(t, srv, "POST", "/v1/run", testToken, map[string]string{"sql": "SELECT COUNT(*) FROM students"})
	require.Equal(t, 200, r.status, "%s", r.body)
	var single map[string]any
	r.json(t, &single)
	assert.NotContains(t, single, "chart", "a single value has no chart")

	r = do(t, srv, "POST", "/v1/ask", testToken, map[string]string{"question": "How many enrollments per status?"})
	require.Equal(t, 200, r.status, "%s", r.body)
	var ask struct {
		Chart *struct {
			Mark struct {
				Type string `json:"type"`
			} `json:"mark"`
		} `json:"chart"`
	}
	r.json(t, &ask)
	require.NotNil(t, ask.Chart, "%s", r.body)
	assert.Equal(t, "bar", ask.Chart.Mark.Type)

	// The page's Vega builds are served from the embedded assets.
	r = do(t, srv, "GET", "/assets/vendor/vega-lite.min.js", "", nil)
	assert.Equal(t, 200, r.status)
	assert.Greater(t, len(r.body), 100_000)
	r = do(t, srv, "GET", "/assets/vendor/", "", nil)
	assert.Equal(t, 404, r.status, "no directory listing")
}
