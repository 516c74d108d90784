// Built-in SQLite functions whose single call can run far past the time
// limit (SQLite checks for an interrupt only between VM instructions, never
// inside a function), replaced with equivalents whose work is linear in
// their input: instr and replace search with memmem (glibc and the BSDs
// use the two-way algorithm, linear in haystack + needle) instead of a
// memcmp at every position, and the two-argument trim functions refuse a
// character set longer than TRIM_MAX_CHARS instead of comparing every
// character of the input with every character of the set. Results are
// those of SQLite 3.54's own functions (func.c), byte for byte.

#define _GNU_SOURCE
#include <string.h>
#include <stddef.h>
#include "bounds.h"

typedef struct sqlite3_context sqlite3_context;
typedef struct sqlite3_value sqlite3_value;
typedef long long sqlite3_int64;

int sqlite3_create_function_v2(sqlite3 *, const char *, int, int, void *,
	void (*)(sqlite3_context *, int, sqlite3_value **),
	void (*)(sqlite3_context *, int, sqlite3_value **),
	void (*)(sqlite3_context *), void (*)(void *));
int sqlite3_value_type(sqlite3_value *);
int sqlite3_value_bytes(sqlite3_value *);
const unsigned char *sqlite3_value_text(sqlite3_value *);
const void *sqlite3_value_blob(sqlite3_value *);
sqlite3_value *sqlite3_value_dup(const sqlite3_value *);
void sqlite3_value_free(sqlite3_value *);
void sqlite3_result_int(sqlite3_context *, int);
void sqlite3_result_text(sqlite3_context *, const char *, int, void (*)(void *));
void sqlite3_result_error(sqlite3_context *, const char *, int);
void sqlite3_result_error_toobig(sqlite3_context *);
void sqlite3_result_error_nomem(sqlite3_context *);
void *sqlite3_malloc64(unsigned long long);
void sqlite3_free(void *);
sqlite3 *sqlite3_context_db_handle(sqlite3_context *);
int sqlite3_limit(sqlite3 *, int, int);
void *sqlite3_user_data(sqlite3_context *);
sqlite3_int64 sqlite3_hard_heap_limit64(sqlite3_int64);
void sqlite3_interrupt(sqlite3 *);

#define SQLITE_OK 0
#define SQLITE_UTF8 1
#define SQLITE_BLOB 4
#define SQLITE_NULL 5
#define SQLITE_DETERMINISTIC 0x000000800
#define SQLITE_INNOCUOUS 0x000200000
#define SQLITE_LIMIT_LENGTH 0
#define SQLITE_TRANSIENT ((void (*)(void *))-1)

// TRIM_MAX_CHARS bounds the characters of trim's second argument: the
// input is compared with each of them at every trimmed position, so one
// call costs input length x set size. 64 characters is more than any set
// of characters a query trims, and keeps a call over a 1 MiB value well
// under a second.
#define TRIM_MAX_CHARS 32

// continuation reports whether byte c continues a UTF-8 sequence.
static int continuation(unsigned char c) { return (c & 0xc0) == 0x80; }

// instrFunc is SQLite's instr(haystack, needle): the 1-based character
// (byte, for two blobs) position of needle's first occurrence, 0 when
// there is none, 1 for an empty needle, NULL when either is NULL.
static void instrFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
	(void)argc;
	int th = sqlite3_value_type(argv[0]), tn = sqlite3_value_type(argv[1]);
	if (th == SQLITE_NULL || tn == SQLITE_NULL) return;
	if (sqlite3_value_bytes(argv[1]) == 0) {
		sqlite3_result_int(ctx, 1);
		return;
	}
	sqlite3_value *c1 = 0, *c2 = 0;
	sqlite3_value *h = argv[0], *n = argv[1];
	int isText = 1;
	if (th == SQLITE_BLOB && tn == SQLITE_BLOB) {
		isText = 0;
	} else if (th == SQLITE_BLOB || tn == SQLITE_BLOB) {
		// One blob, one not: SQLite compares both as text, converting
		// copies so the arguments keep their types.
		h = c1 = sqlite3_value_dup(argv[0]);
		n = c2 = sqlite3_value_dup(argv[1]);
		if (!c1 || !c2) goto oom;
	}
	const unsigned char *zh = isText ? sqlite3_value_text(h) : sqlite3_value_blob(h);
	int nh = sqlite3_value_bytes(h);
	const unsigned char *zn = isText ? sqlite3_value_text(n) : sqlite3_value_blob(n);
	int nn = sqlite3_value_bytes(n);
	if (!zn || (nh && !zh)) goto oom;
	const unsigned char *hit = 0;
	if (isText && continuation(zn[0])) {
		// SQLite tries text matches only where a character starts (and
		// at the first byte), so a needle starting inside a character
		// can only match at the first byte.
		if (nn <= nh && memcmp(zh, zn, nn) == 0) hit = zh;
	} else if (nn <= nh) {
		hit = memmem(zh, nh, zn, nn);
	}
	int pos = 0;
	if (hit) {
		pos = 1;
		if (!isText) {
			pos += (int)(hit - zh);
		} else if (hit > zh) {
			pos++; // the first byte starts a position whatever it is
			for (const unsigned char *p = zh + 1; p < hit; p++) pos += !continuation(*p);
		}
	}
	sqlite3_result_int(ctx, pos);
	goto done;
oom:
	sqlite3_result_error_nomem(ctx);
done:
	sqlite3_value_free(c1);
	sqlite3_value_free(c2);
}

// replaceFunc is SQLite's replace(s, pattern, rep): s with every
// non-overlapping occurrence of pattern, from the left, replaced by rep;
// s unchanged when pattern is empty or starts with a NUL byte; NULL when
// an argument is NULL. A result longer than SQLITE_LIMIT_LENGTH is an
// SQLITE_TOOBIG error.
static void replaceFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
	(void)argc;
	const unsigned char *s = sqlite3_value_text(argv[0]);
	if (!s) return;
	int ns = sqlite3_value_bytes(argv[0]);
	const unsigned char *pat = sqlite3_value_text(argv[1]);
	if (!pat) return;
	if (pat[0] == 0) {
		sqlite3_result_text(ctx, (const char *)s, ns, SQLITE_TRANSIENT);
		return;
	}
	int np = sqlite3_value_bytes(argv[1]);
	const unsigned char *rep = sqlite3_value_text(argv[2]);
	if (!rep) return;
	int nr = sqlite3_value_bytes(argv[2]);
	// Count the matches first, so the result's length is known before
	// anything is allocated.
	long long matches = 0;
	for (const unsigned char *p = s, *end = s + ns; (p = memmem(p, end - p, pat, np)) != 0; p += np) matches++;
	long long nout = ns + matches * ((long long)nr - np);
	int limit = sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LENGTH, -1);
	if (nout > limit) {
		sqlite3_result_error_toobig(ctx);
		return;
	}
	unsigned char *out = sqlite3_malloc64(nout + 1);
	if (!out) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	unsigned char *o = out;
	const unsigned char *p = s, *end = s + ns, *hit;
	while ((hit = memmem(p, end - p, pat, np)) != 0) {
		memcpy(o, p, hit - p);
		o += hit - p;
		memcpy(o, rep, nr);
		o += nr;
		p = hit + np;
	}
	memcpy(o, p, end - p);
	o += end - p;
	*o = 0;
	sqlite3_result_text(ctx, (const char *)out, (int)(o - out), sqlite3_free);
}

// trimFunc is SQLite's two-argument trim, ltrim and rtrim (user data 3, 1,
// 2): the characters of the second argument removed from the start (1),
// the end (2) or both of the first. A set of more than TRIM_MAX_CHARS
// characters is an error.
static void trimFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
	(void)argc;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
	const unsigned char *in = sqlite3_value_text(argv[0]);
	if (!in) return;
	unsigned nin = (unsigned)sqlite3_value_bytes(argv[0]);
	const unsigned char *set = sqlite3_value_text(argv[1]);
	if (!set) return;
	// The set's characters as SQLite splits them (SQLITE_SKIP_UTF8).
	const unsigned char *chars[TRIM_MAX_CHARS];
	unsigned lens[TRIM_MAX_CHARS];
	int nchar = 0;
	for (const unsigned char *z = set; *z; nchar++) {
		if (nchar == TRIM_MAX_CHARS) {
			sqlite3_result_error(ctx, "trim: the set of characters to remove has more than 32 characters", -1);
			return;
		}
		chars[nchar] = z;
		if (*z++ >= 0xc0) {
			while (continuation(*z)) z++;
		}
		lens[nchar] = (unsigned)(z - chars[nchar]);
	}
	int flags = (int)(ptrdiff_t)sqlite3_user_data(ctx);
	if (nchar > 0 && (flags & 1)) {
		while (nin > 0) {
			int i;
			for (i = 0; i < nchar; i++) {
				if (lens[i] <= nin && memcmp(in, chars[i], lens[i]) == 0) break;
			}
			if (i == nchar) break;
			in += lens[i];
			nin -= lens[i];
		}
	}
	if (nchar > 0 && (flags & 2)) {
		while (nin > 0) {
			int i;
			for (i = 0; i < nchar; i++) {
				if (lens[i] <= nin && memcmp(in + nin - lens[i], chars[i], lens[i]) == 0) break;
			}
			if (i == nchar) break;
			nin -= lens[i];
		}
	}
	sqlite3_result_text(ctx, (const char *)in, (int)nin, SQLITE_TRANSIENT);
}

int bounds_register(sqlite3 *db) {
	static const struct {
		const char *name;
		int nargs;
		int flags;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} fns[] = {
		{"instr", 2, 0, instrFunc},
		{"replace", 3, 0, replaceFunc},
		{"trim", 2, 3, trimFunc},
		{"ltrim", 2, 1, trimFunc},
		{"rtrim", 2, 2, trimFunc},
	};
	const int enc = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
		int rc = sqlite3_create_function_v2(db, fns[i].name, fns[i].nargs, enc,
			(void *)(ptrdiff_t)fns[i].flags, fns[i].fn, 0, 0, 0);
		if (rc != SQLITE_OK) return rc;
	}
	return SQLITE_OK;
}

long long bounds_heap_limit(long long n) { return sqlite3_hard_heap_limit64(n); }

void bounds_interrupt(sqlite3 *db) { sqlite3_interrupt(db); }
