/* Part of _fastscan.c (included once, there): finding the anchors (a Wu-Manber skip loop, in
 * plain C), their lines' starts, and counting newlines (memchr).
 *
 * Wu-Manber over byte trigrams (hashed to 12 bits with shifts and xors; 20 KB of tables): a
 * window of the shortest anchor's length moves by how far its last trigram is from the end of
 * any anchor's prefix, so most bytes are never looked at one by one, and one pass finds every
 * anchor. Measured against it on bench/bench_summary.py (CONTRIBUTING.md, "The native code"):
 * memmem once per anchor is about 2x slower (it reads the buffer once per anchor); a hand-written
 * SSSE3/AVX2 filter was 1.04x (SGLang) to 1.17x (vLLM) faster, too little for x86-only code. */
#define HBITS 12
#define HASH(p) \
    ((((unsigned)(unsigned char)(p)[0] << 4) ^ ((unsigned)(unsigned char)(p)[1] << 2) ^ (unsigned char)(p)[2]) & \
     ((1u << HBITS) - 1))
static unsigned char shift_tab[1 << HBITS];
static uint32_t cand_tab[1 << HBITS];
static Py_ssize_t mlen = 0; /* the window: the shortest anchor's length, at most 255 */

/* The tables for the anchors configure() stored. */
static void build_search(void) {
    Py_ssize_t m = PY_SSIZE_T_MAX;
    for (int a = 0; a < n_anch; a++)
        if (anch_len[a] < m) m = anch_len[a];
    mlen = m = m > 255 ? 255 : m;
    memset(shift_tab, (int)(m - 2), sizeof shift_tab);
    memset(cand_tab, 0, sizeof cand_tab);
    for (int a = 0; a < n_anch; a++)
        for (Py_ssize_t q = 2; q < m; q++) {
            unsigned h = HASH(anch[a] + q - 2);
            unsigned char sh = (unsigned char)(m - 1 - q);
            if (sh < shift_tab[h]) shift_tab[h] = sh;
            if (sh == 0) cand_tab[h] |= 1u << a;
        }
}

/* The first anchor starting in [p, end) (the one listed first when several start at one place),
 * its index in *which; NULL when none does. */
static const char *find_anchor(const char *p, const char *end, int *which) {
    Py_ssize_t m = mlen;
    if (end - p < m) return NULL;
    const char *w = p + (m - 1); /* the window's last byte */
    while (w < end) {
        unsigned h = HASH(w - 2);
        unsigned char sh = shift_tab[h];
        if (sh) {
            w += sh;
            continue;
        }
        uint32_t c = cand_tab[h];
        const char *start = w - (m - 1);
        for (int a = 0; c; a++, c >>= 1)
            if ((c & 1) && end - start >= anch_len[a] && memcmp(start, anch[a], (size_t)anch_len[a]) == 0) {
                *which = a;
                return start;
            }
        w++;
    }
    return NULL;
}

/* The start of the line holding p (buf: the buffer's start). A loop rather than memrchr, which
 * not every C library has: the anchors sit near their line's start. */
static const char *line_start(const char *buf, const char *p) {
    while (p > buf && p[-1] != '\n') p--;
    return p;
}

/* newlines in [s, e) */
static Py_ssize_t count_nl(const char *s, const char *e) {
    Py_ssize_t n = 0;
    while (s < e && (s = memchr(s, '\n', (size_t)(e - s))) != NULL) n++, s++;
    return n;
}
