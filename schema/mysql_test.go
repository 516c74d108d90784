package schema_test

import (
	"context"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/schema"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Introspection of MariaDB/MySQL: tables and views, full column types
// (enum labels included), NOT NULL, comments, composite primary and
// foreign keys, reserved-word and mixed-case names.
func TestInspectMySQL(t *testing.T) {
	db, _ := dbtest.MySQL(t)
	dbtest.Exec(t, db,
		"CREATE TABLE Customers (CustomerID INT NOT NULL, Region CHAR(2) NOT NULL, `Full Name` VARCHAR(80) COMMENT 'as printed', mood ENUM('sad','ok'), PRIMARY KEY (Region, CustomerID)) COMMENT 'people who buy'",
		"CREATE TABLE `order` (id BIGINT PRIMARY KEY, region CHAR(2), customer INT, total DECIMAL(10,2), FOREIGN KEY (region, customer) REFERENCES Customers (Region, CustomerID))",
		"CREATE VIEW big_orders AS SELECT id, total FROM `order` WHERE total > 100",
	)
	got, err := schema.InspectMySQL(context.Background(), db)
	require.NoError(t, err)
	assert.Equal(t, text2sql.DialectMySQL, got.Dialect)
	assert.True(t, strings.HasPrefix(got.Name, "text2sql_test_"), "name %q", got.Name)
	var names []string
	for _, tb := range got.Tables {
		names = append(names, tb.Name+":"+string(tb.Kind)+":"+tb.Schema)
	}
	require.Equal(t, []string{"big_orders:view:", "Customers:table:", "order:table:"}, names, "tables")
	c := got.Lookup("Customers")
	wantCols := []schema.Column{
		{Name: "CustomerID", Type: "int(11)", NotNull: true},
		{Name: "Region", Type: "char(2)", NotNull: true},
		{Name: "Full Name", Type: "varchar(80)", Comment: "as printed"},
		{Name: "mood", Type: "enum('sad','ok')"},
	}
	assert.Equal(t, wantCols, c.Columns, "Customers columns")
	assert.Equal(t, "people who buy", c.Comment, "Customers comment")
	assert.Equal(t, []string{"Region", "CustomerID"}, c.PrimaryKey, "Customers primary key")
	o := got.Lookup("order")
	wantFK := []schema.ForeignKey{{Columns: []string{"region", "customer"}, RefTable: "Customers", RefColumns: []string{"Region", "CustomerID"}}}
	assert.Equal(t, wantFK, o.ForeignKeys, "order FKs")
	v := got.Lookup("big_orders")
	assert.Empty(t, v.Comment, "view %+v", v)
	assert.Len(t, v.Columns, 2, "view %+v", v)
	ddl := got.DDL([]*schema.Table{o})
	want := "CREATE TABLE `order` (\n  id bigint(20) NOT NULL,\n  region char(2),\n  customer int(11),\n  total decimal(10,2),\n  PRIMARY KEY (id),\n  FOREIGN KEY (region, customer) REFERENCES `Customers` (`Region`, `CustomerID`)\n);\n"
	assert.Equal(t, want, ddl, "DDL")
}
