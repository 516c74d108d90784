package eval

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The text classifier agrees with the parsed-form classifier (the
// official rules on Spider's own parse) on every Spider dev query.
func TestSpiderHardnessOfSQLAgrees(t *testing.T) {
	ds := spiderDev(t)
	require.NotEmpty(t, ds.Questions)
	for _, q := range ds.Questions {
		assert.Equal(t, q.Difficulty, SpiderHardnessOfSQL(q.GoldSQL), "%d: from the text vs from the parse: %s", q.Index, q.GoldSQL)
	}
}

func TestSpiderHardnessCases(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT count(*) FROM singer":                                                              HardnessEasy,
		"SELECT name FROM singer WHERE age > 20":                                                   HardnessEasy,
		"SELECT name, country FROM singer WHERE age > 20":                                          HardnessMedium,
		"SELECT T1.name FROM a AS T1 JOIN b AS T2 ON T1.id = T2.id WHERE T2.x = 1":                 HardnessMedium,
		"SELECT name FROM a WHERE x BETWEEN 1 AND 5 AND y LIKE '%z%' ORDER BY name LIMIT 3":        HardnessExtra,
		"SELECT name FROM a WHERE id NOT IN (SELECT id FROM b)":                                    HardnessHard,
		"SELECT name FROM a INTERSECT SELECT name FROM b":                                          HardnessHard,
		"SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > 1 ORDER BY count(*) DESC":          HardnessExtra,
		"SELECT name FROM a WHERE x = 1 UNION SELECT name FROM b WHERE y = (SELECT max(y) FROM b)": HardnessHard,
		"SELECT name FROM a WHERE x = 1 AND y = 2 UNION SELECT name FROM b":                        HardnessExtra,
		"SELECT name FROM a WHERE x < ANY (SELECT y FROM b)":                                       HardnessHard,
		"SELECT first\\_name FROM a WHERE b\\_c = 1 AND d LIKE 'x%'":                               HardnessMedium,
		"SELECT name FROM a; SELECT name FROM b WHERE x = 1 AND y = 2 ORDER BY name":               HardnessEasy,
		"": HardnessEasy,
	} {
		assert.Equal(t, want, SpiderHardnessOfSQL(sql), "%q", sql)
	}
	_, err := SpiderHardness(json.RawMessage(`[1]`))
	assert.Error(t, err, "a non-object")
	_, err = SpiderHardness(json.RawMessage(`{`))
	assert.Error(t, err, "bad JSON")
	// A parsed form with odd shapes does not panic.
	h, err := SpiderHardness(json.RawMessage(`{"select": 3, "from": [], "where": [[true], "or", "x"], "orderBy": ["asc", [[0, null, 5]]], "having": ["and"]}`))
	require.NoError(t, err)
	assert.NotEmpty(t, h)
}
