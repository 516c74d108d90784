// The authorizer's state in C (auth.c, authorizer.go), with the
// declarations of the SQLite C API auth.c calls (see bounds.h).
#ifndef TEXT2SQL_SQLITE_AUTH_H
#define TEXT2SQL_SQLITE_AUTH_H

#include <stdint.h>

typedef struct sqlite3 sqlite3;

// auth_state is one connection's authorizer state. Go reads and clears
// calls and saw_select between statements, on the goroutine that holds
// the connection.
typedef struct auth_state {
	uintptr_t handle;   // runtime/cgo.Handle of the connection's Go *authState
	long long calls;    // authorizer calls since Go last counted them
	int saw_select;     // a SELECT was authorized since the last reset
	int nallow;         // the names in allow
	char **allow;       // allowed function names, lower-case ASCII, in strcmp order
	char *names;        // the memory of the names
} auth_state;

// auth_install allocates the state for handle and sets it as db's
// authorizer; NULL when the memory cannot be had or SQLite refuses.
// names holds the nallow allowed function names, each ended by a NUL,
// in strcmp order; the state owns it from then on (also on failure).
auth_state *auth_install(sqlite3 *db, uintptr_t handle, char *names, int nallow);

// auth_free frees a state installed on a connection now closed.
void auth_free(auth_state *a);

#endif
