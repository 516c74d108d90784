// Declarations of the SQLite C API this package calls directly. The
// functions are those of the SQLite that github.com/mattn/go-sqlite3 links
// into the program (its amalgamation, or the system library with the
// libsqlite3 build tag); this package declares only what it uses instead
// of depending on the location of go-sqlite3's header.
#ifndef TEXT2SQL_SQLITE_BOUNDS_H
#define TEXT2SQL_SQLITE_BOUNDS_H

typedef struct sqlite3 sqlite3;

// bounds_register registers the linear-time replacements of instr,
// replace and the two-argument trim functions on db.
int bounds_register(sqlite3 *db);

// bounds_interrupt is sqlite3_interrupt.
void bounds_interrupt(sqlite3 *db);

// bounds_heap_limit is sqlite3_hard_heap_limit64.
long long bounds_heap_limit(long long n);

#endif
