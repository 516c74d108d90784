// The authorizer's fast path (authorizer.go): SQLite calls the authorizer
// for every SELECT, column read and function a statement holds, and a call
// from C into Go costs more than the whole decision for the actions that
// are always allowed. Those (SELECT, READ, WITH RECURSIVE) are answered
// here; every other action goes to authState.authorize in Go, which
// allows or denies it and records the denial.

#include <stdlib.h>
#include "auth.h"
#include "_cgo_export.h"

int sqlite3_set_authorizer(sqlite3 *,
	int (*)(void *, int, const char *, const char *, const char *, const char *), void *);

// The codes of https://www.sqlite.org/c3ref/c_alter_table.html used here.
#define SQLITE_OK 0
#define SQLITE_READ 20
#define SQLITE_SELECT 21
#define SQLITE_RECURSIVE 33

static int authorize(void *p, int op, const char *arg1, const char *arg2, const char *arg3, const char *db) {
	auth_state *a = p;
	a->calls++;
	switch (op) {
	case SQLITE_SELECT:
		a->saw_select = 1;
		return SQLITE_OK;
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	}
	return goAuthorize(a->handle, op, (char *)arg1, (char *)arg2, (char *)arg3, a->saw_select);
}

auth_state *auth_install(sqlite3 *db, uintptr_t handle) {
	auth_state *a = calloc(1, sizeof *a);
	if (a == NULL) {
		return NULL;
	}
	a->handle = handle;
	if (sqlite3_set_authorizer(db, authorize, a) != SQLITE_OK) {
		free(a);
		return NULL;
	}
	return a;
}

void auth_free(auth_state *a) { free(a); }
