package schema

import (
	"maps"
	"slices"
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
	ix := newKeyIndex(d)
	var cands []int
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
			fc := fold(c.Name)
			if declared[fc] || ownKey(t, c.Name) {
				continue
			}
			cands = ix.candidates(cands[:0], t.Schema, fc)
			for _, ki := range cands {
				if k := ix.keys[ki]; k.t != t && ix.matches(t, c, fc, k) {
					inferred = append(inferred, ForeignKey{Columns: []string{c.Name}, RefTable: k.t.Name, RefColumns: []string{k.col.Name}, Inferred: true})
					break
				}
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

// keyIndex holds the one-column primary keys of a database, in table
// order, indexed by the folded strings a column name must contain to
// refer to them, so that a column is compared with the few keys it may
// name rather than with every key (the comparison with all of them was
// quadratic in the tables: 53 s for 2,000).
type keyIndex struct {
	keys  []pk
	keyed map[nsName]int // tables keyed by a folded name
	// byName: keys whose name begins with a singular of their table's
	// name (film.film_id), by folded key name; byTail: keys by a
	// singular of their table's name followed by the key's name
	// (customer+id); byStem: keys by a singular of their table's name of
	// three letters or more that begins the key's name (member for
	// member_id). Keys are listed in table order.
	byName, byTail, byStem map[nsName][]int
	// tailLens are the lengths of byTail's and byStem's names: the
	// suffixes of a column name worth looking up.
	tailLens, stemLens []int
	// same: the key of each folded key name keyed by one table only.
	same map[nsName]int
}

// pk is a table's one-column primary key.
type pk struct {
	t   *Table
	col *Column
}

// nsName is a folded name within a namespace (Table.Schema).
type nsName struct{ ns, name string }

func newKeyIndex(d *Database) *keyIndex {
	ix := &keyIndex{keyed: map[nsName]int{}, byName: map[nsName][]int{}, byTail: map[nsName][]int{}, byStem: map[nsName][]int{}, same: map[nsName]int{}}
	tails, stems := map[int]bool{}, map[int]bool{}
	add := func(m map[nsName][]int, ns, name string, ki int) {
		if l := m[nsName{ns, name}]; len(l) == 0 || l[len(l)-1] != ki {
			m[nsName{ns, name}] = append(l, ki)
		}
	}
	for _, t := range d.Tables {
		if len(t.PrimaryKey) != 1 {
			continue
		}
		c := t.Column(t.PrimaryKey[0])
		if c == nil {
			continue
		}
		ki, fp := len(ix.keys), fold(c.Name)
		ix.keys = append(ix.keys, pk{t, c})
		ix.keyed[nsName{t.Schema, fp}]++
		ix.same[nsName{t.Schema, fp}] = ki
		for _, tn := range singulars(fold(t.Name)) {
			add(ix.byTail, t.Schema, tn+fp, ki)
			tails[len(tn+fp)] = true
			if strings.HasPrefix(fp, tn) && len(fp) > len(tn) {
				add(ix.byName, t.Schema, fp, ki)
				if len(tn) > 2 {
					add(ix.byStem, t.Schema, tn, ki)
					stems[len(tn)] = true
				}
			}
		}
	}
	ix.tailLens, ix.stemLens = slices.Sorted(maps.Keys(tails)), slices.Sorted(maps.Keys(stems))
	return ix
}

// candidates appends to dst, in table order and once each, the keys of
// namespace ns that a column of folded name fc may refer to: every key
// refers and the one-table rule of InferForeignKeys can accept.
func (ix *keyIndex) candidates(dst []int, ns, fc string) []int {
	dst = append(dst, ix.byName[nsName{ns, fc}]...)
	if k := (nsName{ns, fc}); ix.keyed[k] == 1 && !generic[fc] {
		dst = append(dst, ix.same[k])
	}
	for _, n := range ix.tailLens {
		if n <= len(fc) {
			dst = append(dst, ix.byTail[nsName{ns, fc[len(fc)-n:]}]...)
		}
	}
	stem := strings.TrimRight(fc, "0123456789")
	for _, n := range ix.stemLens {
		if n <= len(stem) {
			dst = append(dst, ix.byStem[nsName{ns, stem[len(stem)-n:]}]...)
		}
	}
	slices.Sort(dst)
	return slices.Compact(dst)
}

// matches reports whether column c of table t, of folded name fc, refers
// to key k by the rules of InferForeignKeys.
func (ix *keyIndex) matches(t *Table, c *Column, fc string, k pk) bool {
	if k.t.Schema != t.Schema {
		return false // within one namespace: a catalog's are separate databases
	}
	same, ok := refers(c.Name, k.t, k.col.Name)
	if !ok && fc == fold(k.col.Name) && ix.keyed[nsName{t.Schema, fc}] == 1 && !generic[fc] {
		same, ok = true, true // order_id ~ Customer_Orders.order_id, the one table keyed by it
	}
	return ok && (same || alike(c.Type, k.col.Type))
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
