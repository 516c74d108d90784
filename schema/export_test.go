package schema

// InferForeignKeysQuadratic is InferForeignKeys as it was before its keys
// were indexed: every column compared with every one-column key, first
// match in table order. The tests hold the indexed one to its results.
func InferForeignKeysQuadratic(d *Database) *Database {
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
					continue
				}
				same, ok := refers(c.Name, k.t, k.col.Name)
				if !ok && fold(c.Name) == fold(k.col.Name) && keyed[t.Schema+"\x00"+fold(c.Name)] == 1 && !generic[fold(c.Name)] {
					same, ok = true, true
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
