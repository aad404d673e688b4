/* Part of _fastscan.c (included once, there, after _fastscan_search.h): on x86-64, a Teddy-style
 * SIMD filter (SSSE3, or AVX2 where the CPU has it, chosen at run time) in front of the portable
 * skip loop, and newlines counted 16 or 32 bytes at a time. Elsewhere, or on a CPU without SSSE3,
 * the portable code of _fastscan_search.h runs alone (search(0) forces it, for the tests).
 *
 * Kept because it measured worth it (bench/bench_summary.py and the scanner alone, 2026-12-01;
 * CONTRIBUTING.md, "The native code"): on a 204 MB vLLM log the scanner took 0.054 s with it and
 * 0.135 s with the skip loop alone (2.5x), the whole summary 1.5x the CPU time. */
/* The anchor (lowest index) of the buckets in `bits` that starts at s, or -1. */
static unsigned char bucket_of[MAXA];
static inline int verify(const char *s, const char *end, unsigned bits) {
    for (int a = 0; a < n_anch; a++)
        if ((bits >> bucket_of[a]) & 1 && end - s >= anch_len[a] && s[0] == anch[a][0] &&
            memcmp(s, anch[a], (size_t)anch_len[a]) == 0)
            return a;
    return -1;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_TEDDY 1
/* A Teddy-style filter (as in Hyperscan): the anchors are spread over 8 buckets; for each of the
 * first three bytes of an anchor, two 16-entry tables (by low and by high nibble) say which
 * buckets may start with such a byte there. 16 positions are tested at once with PSHUFB; the
 * few that pass are verified with memcmp. */
static unsigned char t_lo[3][16], t_hi[3][16];
static int use_teddy = 0; /* 1: SSSE3, 16 bytes a step; 2: AVX2, 32 */

static void fill_tables(void) {
    memset(t_lo, 0, sizeof t_lo);
    memset(t_hi, 0, sizeof t_hi);
    for (int a = 0; a < n_anch; a++)
        for (int j = 0; j < 3; j++) {
            unsigned char c = (unsigned char)anch[a][j];
            t_lo[j][c & 15] |= (unsigned char)(1u << bucket_of[a]);
            t_hi[j][c >> 4] |= (unsigned char)(1u << bucket_of[a]);
        }
}

/* How often log text passes the filter, as a model: the product over the three positions of
 * the weight of the bytes each bucket lets through, summed over the buckets; lower case and
 * spaces are common in logs, digits less, capitals and punctuation rarer. */
static double byte_weight(int c) {
    if ((c >= 'a' && c <= 'z') || c == ' ') return 1.0;
    if (c >= '0' && c <= '9') return 0.6;
    if (c >= 'A' && c <= 'Z') return 0.3;
    return 0.15;
}

/* The model's pass rate of bucket b alone (the product over the three positions of the weight
 * of the bytes that pass both of its nibble tables), from the anchors now in it. */
static double bucket_rate(int b) {
    unsigned short lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}; /* bit i: nibble i */
    for (int a = 0; a < n_anch; a++)
        if (bucket_of[a] == b)
            for (int j = 0; j < 3; j++) {
                unsigned char c = (unsigned char)anch[a][j];
                lo[j] |= (unsigned short)(1u << (c & 15));
                hi[j] |= (unsigned short)(1u << (c >> 4));
            }
    double p = 1.0;
    for (int j = 0; j < 3; j++) {
        double w = 0.0;
        for (int c = 0; c < 256; c++)
            if ((lo[j] >> (c & 15)) & (hi[j] >> (c >> 4)) & 1) w += byte_weight(c);
        p *= w;
    }
    return p;
}

static double sum8(const double *p) {
    double total = 0.0;
    for (int b = 0; b < 8; b++) total += p[b];
    return total;
}

static void build_teddy(void) {
    /* Buckets: anchors that begin alike share one (each byte set stays small, so few byte
     * combinations that no anchor has get through): start from a % 8 and move one anchor at a
     * time while the model's pass rate drops. A move changes two buckets' rates only: those two
     * are computed again, the others kept (configure() runs at every start). */
    double rate[8];
    for (int a = 0; a < n_anch; a++) bucket_of[a] = (unsigned char)(a % 8);
    for (int b = 0; b < 8; b++) rate[b] = bucket_rate(b);
    double best = sum8(rate);
    for (int improved = 1, rounds = 0; improved && rounds < 20; rounds++) {
        improved = 0;
        for (int a = 0; a < n_anch; a++)
            for (int b = 0; b < 8; b++) {
                unsigned char was = bucket_of[a];
                if (b == was) continue;
                double r_was = rate[was], r_b = rate[b];
                bucket_of[a] = (unsigned char)b;
                rate[was] = bucket_rate(was);
                rate[b] = bucket_rate(b);
                double r = sum8(rate);
                if (r < best - 1e-12) {
                    best = r;
                    improved = 1;
                } else {
                    bucket_of[a] = was;
                    rate[was] = r_was;
                    rate[b] = r_b;
                }
            }
    }
    fill_tables();
    __builtin_cpu_init();
    use_teddy = __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("popcnt");
    if (use_teddy && __builtin_cpu_supports("avx2")) use_teddy = 2;
}

/* The first of the positions in `bits` (offsets from p) where an anchor of the buckets the
 * filter let through (mask[i]) starts, or NULL. */
static inline const char *first_verified(const char *p, const char *end, unsigned bits, const unsigned char *mask,
                                         int *which) {
    while (bits) {
        int i = __builtin_ctz(bits);
        int a = verify(p + i, end, mask[i]);
        if (a >= 0) {
            *which = a;
            return p + i;
        }
        bits &= bits - 1;
    }
    return NULL;
}

__attribute__((target("ssse3,popcnt"))) static const char *find_teddy(const char *p, const char *end, int *which) {
    const __m128i low = _mm_set1_epi8(0x0f), zero = _mm_setzero_si128();
    __m128i lo[3], hi[3];
    for (int j = 0; j < 3; j++) {
        lo[j] = _mm_loadu_si128((const __m128i *)t_lo[j]);
        hi[j] = _mm_loadu_si128((const __m128i *)t_hi[j]);
    }
    while (end - p >= 18) {
        __m128i m = _mm_set1_epi8((char)0xff);
        for (int j = 0; j < 3; j++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + j));
            __m128i a = _mm_shuffle_epi8(lo[j], _mm_and_si128(v, low));
            __m128i b = _mm_shuffle_epi8(hi[j], _mm_and_si128(_mm_srli_epi16(v, 4), low));
            m = _mm_and_si128(m, _mm_and_si128(a, b));
        }
        unsigned bits = ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(m, zero)) & 0xffffu;
        if (bits) {
            unsigned char mb[16];
            _mm_storeu_si128((__m128i *)mb, m);
            const char *at = first_verified(p, end, bits, mb, which);
            if (at) return at;
        }
        p += 16;
    }
    for (; p < end; p++) {
        int a = verify(p, end, 0xffu);
        if (a >= 0) {
            *which = a;
            return p;
        }
    }
    return NULL;
}

__attribute__((target("avx2,popcnt"))) static const char *find_teddy2(const char *p, const char *end, int *which) {
    const __m256i low = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
    __m256i lo[3], hi[3];
    for (int j = 0; j < 3; j++) {
        lo[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)t_lo[j]));
        hi[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)t_hi[j]));
    }
    while (end - p >= 34) {
        __m256i m = _mm256_set1_epi8((char)0xff);
        for (int j = 0; j < 3; j++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(p + j));
            __m256i a = _mm256_shuffle_epi8(lo[j], _mm256_and_si256(v, low));
            __m256i b = _mm256_shuffle_epi8(hi[j], _mm256_and_si256(_mm256_srli_epi16(v, 4), low));
            m = _mm256_and_si256(m, _mm256_and_si256(a, b));
        }
        unsigned bits = ~(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, zero));
        if (bits) {
            unsigned char mb[32];
            _mm256_storeu_si256((__m256i *)mb, m);
            const char *at = first_verified(p, end, bits, mb, which);
            if (at) return at;
        }
        p += 32;
    }
    return find_teddy(p, end, which);
}

__attribute__((target("avx2,popcnt"))) static Py_ssize_t count_nl_avx2(const char *s, const char *e) {
    Py_ssize_t n = 0;
    const __m256i nl = _mm256_set1_epi8('\n');
    while (e - s >= 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)s);
        n += __builtin_popcount((unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nl)));
        s += 32;
    }
    while (s < e) n += *s++ == '\n';
    return n;
}

__attribute__((target("popcnt"))) static Py_ssize_t count_nl_sse(const char *s, const char *e) {
    Py_ssize_t n = 0;
    const __m128i nl = _mm_set1_epi8('\n');
    while (e - s >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)s);
        n += __builtin_popcount((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)));
        s += 16;
    }
    while (s < e) n += *s++ == '\n';
    return n;
}
#endif

/* The search for the anchors configure() stored: the skip loop's tables, and on x86-64 the
 * filter's buckets and the CPU's choice. */
static void configure_search(void) {
    build_search();
#ifdef HAVE_TEDDY
    build_teddy();
#endif
}

static inline const char *find_anchor(const char *p, const char *end, int *which) {
#ifdef HAVE_TEDDY
    if (use_teddy == 2) return find_teddy2(p, end, which);
    if (use_teddy) return find_teddy(p, end, which);
#endif
    return find_wm(p, end, which);
}


static inline Py_ssize_t count_nl(const char *s, const char *e) {
#ifdef HAVE_TEDDY
    if (use_teddy == 2) return count_nl_avx2(s, e);
    if (use_teddy) return count_nl_sse(s, e);
#endif
    return count_nl_words(s, e);
}

/* search(mode=None) -> the search in use, after setting it when a mode is given: 0 the skip
 * loop alone (any CPU), 1 SSSE3, 2 AVX2 (at most what the CPU has); for the tests, which check
 * that every mode finds the same lines. */
static PyObject *search(PyObject *Py_UNUSED(self), PyObject *args) {
    int mode = -1;
    if (!PyArg_ParseTuple(args, "|i", &mode)) return NULL;
#ifdef HAVE_TEDDY
    if (mode >= 0) {
        int have = __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("popcnt");
        if (have && __builtin_cpu_supports("avx2")) have = 2;
        if (mode > have) {
            PyErr_SetString(PyExc_ValueError, "this CPU does not have that search");
            return NULL;
        }
        use_teddy = mode;
    }
    return PyLong_FromLong(use_teddy);
#else
    if (mode > 0) {
        PyErr_SetString(PyExc_ValueError, "this build has only the portable search");
        return NULL;
    }
    return PyLong_FromLong(0);
#endif
}
