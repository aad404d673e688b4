/* Part of _fastscan.c (included once, there): finding the anchors and counting newlines, on
 * the C library's memmem and memchr (vectorised where the library is). */

/* Where each anchor next starts, for a reader that moves forward through one buffer: each
 * anchor is searched for (memmem) only when the reader has passed its last known start, so an
 * anchor that a buffer lacks costs one search, not one per line, and no byte is searched twice
 * for the same anchor. One per scan (the scans of several threads share nothing). */
typedef struct {
    const char *next[MAXA]; /* anchor a's first start at or after from[a]; NULL: none */
    const char *from[MAXA]; /* where that search began; NULL: not searched yet */
} finder_t;

/* The first anchor starting in [p, end) (the one listed first when several start at one place),
 * its index in *which; NULL when none does. p never moves back between calls with one F. */
static const char *find_anchor(finder_t *F, const char *p, const char *end, int *which) {
    const char *best = NULL;
    for (int a = 0; a < n_anch; a++) {
        const char *at = F->next[a];
        if (!F->from[a] || p < F->from[a] || (at && at < p)) {
            at = end - p >= anch_len[a] ? memmem(p, (size_t)(end - p), anch[a], (size_t)anch_len[a]) : NULL;
            F->next[a] = at, F->from[a] = p;
        }
        if (at && (!best || at < best)) best = at, *which = a;
    }
    return best;
}

/* newlines in [s, e) */
static Py_ssize_t count_nl(const char *s, const char *e) {
    Py_ssize_t n = 0;
    while (s < e && (s = memchr(s, '\n', (size_t)(e - s))) != NULL) n++, s++;
    return n;
}
