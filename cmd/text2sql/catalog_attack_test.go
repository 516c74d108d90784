package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A libpq key=value DSN is one database, whatever keyword it starts
// with: "keepalives=1 host=db" used to be read as a database named
// keepalives with the DSN "1 host=db", and "channel_binding=require
// host=db" as one named channel_binding (pgx then refused the rest,
// naming a database the user never meant).
func TestAttackKeyValueDSNIsNotANamedMember(t *testing.T) {
	for _, v := range []string{
		"host=db dbname=prod",
		"keepalives=1 host=db dbname=prod",
		"channel_binding=require host=db",
		"GSSENCMODE=disable host=db",
		"sslnegotiation=direct host=db sslmode=require",
		"fallback_application_name=x host=db",
	} {
		m, ok := named("dsn", v)
		assert.False(t, ok, v)
		assert.Equal(t, v, m.spec, v)
		assert.Empty(t, m.name, v)
	}
	m, ok := named("dsn", "sales=postgres://u@db/sales")
	assert.True(t, ok)
	assert.Equal(t, "sales", m.name)
	assert.Equal(t, "postgres://u@db/sales", m.spec)
}
