package schema

import (
	"strings"
)

// InferForeignKeys returns a copy of d in which every table also has the
// join keys its column names imply, marked Inferred, for schemas that
// declare few or no foreign keys (warehouse exports, CSV-loaded
// databases). A column c of table A is taken to reference table B when B
// has a one-column primary key p, c is not already in a declared foreign
// key of A, and either
//   - c is named as p is and p names B ("film_id" in inventory and
//     film.film_id; "CustomerId" in Invoice and Customer.CustomerId), or
//   - c is named as p is, p keys no other table of the namespace and is
//     not a generic name such as id, name or code ("order_id" in
//     Order_Items and Customer_Orders.order_id), or
//   - c ends with B's name followed by p ("customer_id" or "CustomerID"
//     in orders and customer.id; "OwnerUserId" and users.Id), or c
//     (without trailing digits) ends with B's name and p begins with it
//     ("link_to_member" and member.member_id, "away_player_2" and
//     Player.player_api_id), and in both cases the two types are alike
//     (both numeric, both text, or either undeclared).
//
// Names are compared without case and '_', and a table name in the plural
// (…s, …es, …ies) also matches its singular. A primary key that is also a
// primary key of the same name elsewhere is a one-to-one relation and is
// not inferred, nor is a key across namespaces. d itself is not changed; tables without inferred keys are
// shared with d.
func InferForeignKeys(d *Database) *Database {
	out := *d
	out.Tables = make([]*Table, len(d.Tables))
	type pk struct {
		t   *Table
		col *Column
	}
	var keys []pk
	keyed := map[string]int{} // namespace + folded key name → tables keyed by it
	for _, t := range d.Tables {
		if len(t.PrimaryKey) == 1 {
			if c := t.Column(t.PrimaryKey[0]); c != nil {
				keys = append(keys, pk{t, c})
				keyed[t.Schema+"\x00"+fold(c.Name)]++
			}
		}
	}
	for i, t := range d.Tables {
		out.Tables[i] = t
		declared := map[string]bool{}
		for _, fk := range t.ForeignKeys {
			for _, c := range fk.Columns {
				declared[fold(c)] = true
			}
		}
		var inferred []ForeignKey
		for ci := range t.Columns {
			c := &t.Columns[ci]
			if declared[fold(c.Name)] || ownKey(t, c.Name) {
				continue
			}
			for _, k := range keys {
				if k.t == t || k.t.Schema != t.Schema {
					continue // within one namespace: a catalog's are separate databases
				}
				same, ok := refers(c.Name, k.t, k.col.Name)
				if !ok && fold(c.Name) == fold(k.col.Name) && keyed[t.Schema+"\x00"+fold(c.Name)] == 1 && !generic[fold(c.Name)] {
					same, ok = true, true // order_id ~ Customer_Orders.order_id, the one table keyed by it
				}
				if !ok || !same && !alike(c.Type, k.col.Type) {
					continue
				}
				inferred = append(inferred, ForeignKey{Columns: []string{c.Name}, RefTable: k.t.Name, RefColumns: []string{k.col.Name}, Inferred: true})
				break
			}
		}
		if len(inferred) > 0 {
			ct := *t
			ct.ForeignKeys = append(append([]ForeignKey(nil), t.ForeignKeys...), inferred...)
			out.Tables[i] = &ct
		}
	}
	return &out
}

// generic are key names too common to say which table they key.
var generic = map[string]bool{
	"id": true, "name": true, "code": true, "type": true, "title": true, "key": true, "no": true,
	"number": true, "date": true, "year": true, "value": true, "description": true,
}

// ownKey reports whether col is t's one-column primary key: the same name
// as another table's key is then a one-to-one relation, not a reference.
func ownKey(t *Table, col string) bool {
	return len(t.PrimaryKey) == 1 && strings.EqualFold(t.PrimaryKey[0], col)
}

// refers reports whether column name c names table t's key column p;
// same is set when the names are the same (strong enough evidence to
// pass over unlike types, which loosely typed schemas have: a TEXT
// Stadium_ID referencing an INT one).
func refers(c string, t *Table, p string) (same, ok bool) {
	fc, fp := fold(c), fold(p)
	stem := strings.TrimRight(fc, "0123456789") // away_player_11 → awayplayer
	for _, tn := range singulars(fold(t.Name)) {
		switch {
		case fc == fp && strings.HasPrefix(fp, tn) && len(fp) > len(tn):
			return true, true // film_id ~ film.film_id
		case strings.HasSuffix(fc, tn+fp):
			return false, true // customer_id ~ customer.id; OwnerUserId ~ users.Id
		case len(tn) > 2 && strings.HasSuffix(stem, tn) && strings.HasPrefix(fp, tn) && len(fp) > len(tn):
			return false, true // link_to_member ~ member.member_id; away_player_11 ~ Player.player_api_id
		}
	}
	return false, false
}

// singulars returns a folded table name and its singular forms.
func singulars(n string) []string {
	out := []string{n}
	switch {
	case strings.HasSuffix(n, "ies") && len(n) > 3:
		out = append(out, n[:len(n)-3]+"y")
	case strings.HasSuffix(n, "es") && len(n) > 2:
		out = append(out, n[:len(n)-2], n[:len(n)-1])
	case strings.HasSuffix(n, "s") && len(n) > 1:
		out = append(out, n[:len(n)-1])
	}
	return out
}

// fold lower-cases s and drops '_'.
func fold(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "") }

// alike reports whether two declared types can hold the same keys.
func alike(a, b string) bool {
	ka, kb := typeClass(a), typeClass(b)
	return ka == "" || kb == "" || ka == kb
}

// typeClass is "number", "text" or "" (undeclared or other), by SQLite's
// affinity rules, which cover the other engines' type names too.
func typeClass(t string) string {
	u := strings.ToUpper(t)
	switch {
	case u == "":
		return ""
	case strings.Contains(u, "INT"), strings.Contains(u, "NUM"), strings.Contains(u, "DEC"),
		strings.Contains(u, "REAL"), strings.Contains(u, "FLOA"), strings.Contains(u, "DOUB"):
		return "number"
	case strings.Contains(u, "CHAR"), strings.Contains(u, "TEXT"), strings.Contains(u, "CLOB"), strings.Contains(u, "UUID"):
		return "text"
	}
	return ""
}
