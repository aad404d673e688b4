/* Part of _fastscan.c (included once, there): finding the anchors (a Wu-Manber skip loop, in
 * plain C), their lines' starts, and counting newlines (a word at a time).
 *
 * Wu-Manber over byte trigrams (hashed to 12 bits with shifts and xors; 20 KB of tables): a
 * window of the shortest anchor's length moves by how far its last trigram is from the end of
 * any anchor's prefix, so most bytes are never looked at one by one, and one pass finds every
 * anchor. It is the search on every CPU but x86-64's with SSSE3, where the filter of
 * _fastscan_simd.h runs in front of it. memmem once per anchor was about 2x slower than this loop
 * on bench/bench_summary.py (it reads the buffer once per anchor). */
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
static const char *find_wm(const char *p, const char *end, int *which) {
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

/* newlines in [s, e), a word at a time (lines are short: one memchr call per line costs more) */
static Py_ssize_t count_nl_words(const char *s, const char *e) {
    Py_ssize_t n = 0;
    while (s < e && ((uintptr_t)s & 7)) n += *s++ == '\n';
    const uint64_t ones = 0x0101010101010101ULL, nl = ones * '\n', high = ones * 0x80;
    while (e - s >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        w ^= nl; /* a zero byte where a newline was */
        uint64_t z = ~(((w & ~high) + ~high) | w) & high; /* exact: 0x80 in each zero byte */
        n += __builtin_popcountll(z);
        s += 8;
    }
    while (s < e) n += *s++ == '\n';
    return n;
}
