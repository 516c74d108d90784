package shareddata

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLiterals(t *testing.T) {
	assert.Equal(t, []Literal{{"country", "France"}}, Literals(`SELECT avg(age) FROM singer WHERE country  =  'France'`))
	assert.Equal(t, []Literal{{"song_name", "Hey"}}, Literals(`SELECT name FROM singer WHERE song_name LIKE '%Hey%'`))
	assert.Equal(t, []Literal{{"pettype", "cat"}, {"Directed_by", "Ben Jones"}, {"name", "O'Neil"}},
		Literals(`SELECT 1 FROM t AS T3 WHERE T3.pettype = 'cat' OR Directed_by = "Ben Jones" OR name = 'O''Neil'`))
	assert.Empty(t, Literals(`SELECT 1 FROM t WHERE a = 5 AND b LIKE '%' AND c > 'x' AND 'y' = d`))
}
