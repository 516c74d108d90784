// The authorizer's fast path (authorizer.go): SQLite calls the authorizer
// for every SELECT, column read and function a statement holds, and a call
// from C into Go costs more than the whole decision for the actions that
// are always allowed. Those (SELECT, READ, WITH RECURSIVE) and calls of
// functions on the allow-list are answered here; every other action goes
// to authState.authorize in Go, which allows or denies it and records the
// denial.

#include <stdlib.h>
#include <string.h>
#include "auth.h"
#include "_cgo_export.h"

int sqlite3_set_authorizer(sqlite3 *,
	int (*)(void *, int, const char *, const char *, const char *, const char *), void *);

// The codes of https://www.sqlite.org/c3ref/c_alter_table.html used here.
#define SQLITE_OK 0
#define SQLITE_READ 20
#define SQLITE_SELECT 21
#define SQLITE_FUNCTION 31
#define SQLITE_RECURSIVE 33

// MAX_NAME bounds the function names looked up here, terminator included;
// a longer name is left to Go, as is one with a byte beyond ASCII.
#define MAX_NAME 64

// allowed reports whether name, folded to lower case as SQLite folds
// function names (ASCII only), is on a's allow-list. 0 means "ask Go",
// never "deny".
static int allowed(const auth_state *a, const char *name) {
	char low[MAX_NAME];
	size_t n = 0;
	for (; name[n] != 0; n++) {
		unsigned char c = (unsigned char)name[n];
		if (c >= 0x80 || n + 1 >= MAX_NAME) {
			return 0;
		}
		low[n] = (c >= 'A' && c <= 'Z') ? (char)(c + ('a' - 'A')) : (char)c;
	}
	low[n] = 0;
	int lo = 0, hi = a->nallow;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int cmp = strcmp(a->allow[mid], low);
		if (cmp == 0) {
			return 1;
		}
		if (cmp < 0) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return 0;
}

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
	case SQLITE_FUNCTION:
		if (arg2 != NULL && allowed(a, arg2)) {
			return SQLITE_OK;
		}
		break;
	}
	return goAuthorize(a->handle, op, (char *)arg1, (char *)arg2, (char *)arg3, a->saw_select);
}

auth_state *auth_install(sqlite3 *db, uintptr_t handle, char *names, int nallow) {
	auth_state *a = calloc(1, sizeof *a);
	char **allow = calloc(nallow > 0 ? nallow : 1, sizeof *allow);
	if (a == NULL || allow == NULL) {
		free(a);
		free(allow);
		free(names);
		return NULL;
	}
	char *name = names;
	for (int i = 0; i < nallow; i++) {
		allow[i] = name;
		name += strlen(name) + 1;
	}
	a->handle = handle;
	a->names = names;
	a->allow = allow;
	a->nallow = nallow;
	if (sqlite3_set_authorizer(db, authorize, a) != SQLITE_OK) {
		auth_free(a);
		return NULL;
	}
	return a;
}

void auth_free(auth_state *a) {
	free(a->names);
	free(a->allow);
	free(a);
}
