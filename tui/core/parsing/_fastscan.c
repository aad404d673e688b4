/* Optional native scanner for tui/core/parsing/fastscan.py (the pure-Python scanner, whose
 * patterns are compiled from tui/core/parsing/grammar.py, is the reference; the tests check
 * that both give what the line parser gives, on generated and real lines).
 *
 * configure(anchors) takes grammar.ANCHORS (bytes, at least 3 long each): every literal text
 * the line parser acts on, in the order of grammar.ANCHORS (0 "Decode batch",
 * 1 "SpecDecoding metrics:", 3 "Avg prompt throughput" are the ones with canonical shapes).
 *
 * scan(buf, year) reads a buffer of whole lines. Anchors are found with a Teddy-style SIMD
 * filter where the CPU has SSSE3 or AVX2, else a Wu-Manber skip loop (see find_anchor; most
 * bytes are never looked at one by one); every line holding an anchor must be a line of the
 * common form of grammar.SHAPES, else the result is None (an anchor without a shape: the caller
 * reads the buffer with the line parser) or False (a shaped anchor on a line of another form:
 * the Python scanner may read it). scan(buf, year, True) gives instead the offset of the line
 * the scan stopped at (the first one it cannot read, so that the caller reads that line apart
 * and the rest fast), or -1 when it reads the whole buffer. The result is
 *   (n_lines, family, n, line_nos, cols, tags, tag_idx, pp, pp_k, vllm)
 * family 0 none, 1 sglang, 2 vllm; line_nos int64 (1-based within buf); cols 13 columns of n
 * doubles in the order of columns.NUMERIC_FIELDS plus the paired engine index, NaN where not
 * printed; tags the distinct
 * SGLang rank tags and tag_idx (uint8) each record's; pp the per-position values, pp_k (uint8)
 * how many each record has; vllm None or (proc, head_unpaired, tail_engine, have_stamp,
 * first_stamp, last_md) for the caller's engine pairing and year check.
 * Numbers are converted without strtod: locale-independent, and correctly rounded (an exact
 * integer of at most 15 digits divided by an exact power of ten), i.e. equal to float().
 */
#define _GNU_SOURCE
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <signal.h>

#define MAXA 32
#define NCOL 15 /* columns.NUMERIC_FIELDS, then the paired vLLM engine index */
enum { C_TS, C_AL, C_AR, C_ACC, C_DRAFT, C_ND, C_RUN, C_TOK, C_USAGE, C_TP, C_QUEUE, C_ALD, C_ARD, C_ELAPSED, C_ENG };
enum { A_DECODE = 0, A_SPEC = 1, A_ENGINE = 3, A_LLAMA = 4 };

static char *anch[MAXA];
static Py_ssize_t anch_len[MAXA];
static int n_anch = 0;
static Py_ssize_t mlen = 0;
/* Wu-Manber over byte trigrams (hashed to 11 bits: the tables stay in L1 next to the data): a
 * window of the shortest anchor's length moves by how far its last trigram is from the end of
 * any anchor's prefix. */
#define HBITS 11
#define HASH(p) \
    ((((unsigned)(unsigned char)(p)[0] * 31u + (unsigned char)(p)[1]) * 31u + (unsigned char)(p)[2]) & \
     ((1u << HBITS) - 1))
static unsigned char shift_tab[1 << HBITS];
static uint32_t cand_tab[1 << HBITS];

typedef struct {
    char *v;
    Py_ssize_t n, cap;
} buf_t;

static int push(buf_t *b, const void *x, Py_ssize_t k) {
    if (b->n + k > b->cap) {
        Py_ssize_t cap = b->cap ? b->cap * 2 : 1 << 15;
        while (cap < b->n + k) cap *= 2;
        char *v = (char *)realloc(b->v, (size_t)cap);
        if (!v) return -1;
        b->v = v;
        b->cap = cap;
    }
    memcpy(b->v + b->n, x, (size_t)k);
    b->n += k;
    return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_word(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline int lit_n(const char **p, const char *end, const char *s, size_t k) {
    if ((size_t)(end - *p) < k || memcmp(*p, s, k) != 0) return 0;
    *p += k;
    return 1;
}
/* a literal of known length (string constants only) */
#define lit(p, end, s) lit_n((p), (end), (s), sizeof(s) - 1)

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* \d+ (want_fraction 0) or \d+\.\d+ (1); extra_scale adds powers of ten to the divisor
 * (percent: 2). At most 15 digits, else refused. */
static int number(const char **p, const char *end, int want_fraction, int extra_scale, double *out) {
    const char *q = *p;
    unsigned long long m = 0;
    int nd = 0, frac = 0;
    while (q < end && is_digit(*q)) {
        if (++nd > 15) return 0;
        m = m * 10 + (unsigned long long)(*q++ - '0');
    }
    if (nd == 0) return 0;
    if (want_fraction) {
        if (q >= end || *q != '.') return 0;
        q++;
        const char *f = q;
        while (q < end && is_digit(*q)) {
            if (++nd > 15) return 0;
            m = m * 10 + (unsigned long long)(*q++ - '0');
        }
        frac = (int)(q - f);
        if (frac == 0) return 0;
    }
    *out = (double)m / POW10[frac + (extra_scale > 0 ? extra_scale : 0)];
    *p = q;
    return 1;
}

static int decimal(const char **p, const char *e, double *o) { return number(p, e, 1, 0, o); }
static int integer(const char **p, const char *e, double *o) { return number(p, e, 0, 0, o); }
static int percent(const char **p, const char *e, double *o) { return number(p, e, 1, 2, o) && lit(p, e, "%"); }

static int two(const char *s, int *v) {
    if (!is_digit(s[0]) || !is_digit(s[1])) return 0;
    *v = (s[0] - '0') * 10 + (s[1] - '0');
    return 1;
}

/* days since 1970-01-01 of a proleptic Gregorian date (linear in d, like calendar.timegm) */
static long long days_from_civil(long long y, long long m, long long d) {
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    long long yoe = y - era * 400;
    long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* ( [A-Z][A-Z_]*\d+)* exactly over [s, e) */
static int tags_ok(const char *s, const char *e) {
    const char *p = s;
    while (p < e) {
        if (*p != ' ') return 0;
        p++;
        if (p >= e || !(*p >= 'A' && *p <= 'Z')) return 0;
        p++;
        while (p < e && ((*p >= 'A' && *p <= 'Z') || *p == '_')) p++;
        if (p >= e || !is_digit(*p)) return 0;
        while (p < e && is_digit(*p)) p++;
    }
    return 1;
}

static int end_of_line(const char *p, const char *e) {
    if (p < e && *p == '\r') p++;
    return p == e;
}

/* SGLang: "[YYYY-MM-DD HH:MM:SS TAGS] Decode batch[,.] ..." over [s, e) (e at the newline). */
static int decode_line(const char *s, const char *e, const char **tag_s, const char **tag_e, double *v) {
    const char *p = s;
    static const char shape[] = "[dddd-dd-dd dd:dd:dd";
    if (e - p < 20) return 0;
    for (int i = 0; i < 20; i++) {
        char c = p[i], want = shape[i];
        if (want == 'd' ? !is_digit(c) : c != want) return 0;
    }
    int y = (p[1] - '0') * 1000 + (p[2] - '0') * 100 + (p[3] - '0') * 10 + (p[4] - '0');
    int mo = 0, d = 0, h = 0, mi = 0, sec = 0; /* the shape check above made them digits */
    two(p + 6, &mo), two(p + 9, &d), two(p + 12, &h), two(p + 15, &mi), two(p + 18, &sec);
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return 0;
    v[C_TS] = (double)(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec);
    p += 20;
    const char *t = p;
    while (p < e && *p != ']') p++;
    if (p >= e || !tags_ok(t, p)) return 0;
    *tag_s = t;
    *tag_e = p;
    if (!lit(&p, e, "] Decode batch")) return 0;
    if (p >= e || (*p != ',' && *p != '.')) return 0;
    p++;
    if (!lit(&p, e, " #running-req: ") || !integer(&p, e, &v[C_RUN])) return 0;
    if (!lit(&p, e, ", #token: ") || !integer(&p, e, &v[C_TOK])) return 0;
    if (!lit(&p, e, ", token usage: ") || !decimal(&p, e, &v[C_USAGE])) return 0;
    if (!lit(&p, e, ", accept len: ") || !decimal(&p, e, &v[C_AL])) return 0;
    if (!lit(&p, e, ", accept rate: ") || !decimal(&p, e, &v[C_AR])) return 0;
    if (!lit(&p, e, ", ")) return 0;
    if (!(lit(&p, e, "cuda") || lit(&p, e, "npu") || lit(&p, e, "cpu"))) return 0;
    if (!lit(&p, e, " graph: ")) return 0;
    if (!(lit(&p, e, "True") || lit(&p, e, "False"))) return 0;
    if (!lit(&p, e, ", gen throughput (token/s): ") || !decimal(&p, e, &v[C_TP])) return 0;
    if (!lit(&p, e, ", #queue-req: ") || !integer(&p, e, &v[C_QUEUE])) return 0;
    if (p < e && *p == ',') {
        p++;
        if (p < e && *p == ' ') p++;
    }
    return end_of_line(p, e);
}

/* vLLM prefix: "(PROC pid=N) INFO MM-DD HH:MM:SS[.f{1,6}] [file.py:N] "; stamp = mo, d, h, mi, s */
static int vllm_prefix(const char **pp, const char *e, const char **proc_s, const char **proc_e, int st[5],
                       double *frac) {
    const char *p = *pp;
    *proc_s = *proc_e = NULL;
    if (p < e && *p == '(') {
        const char *q = p + 1;
        if (q >= e || !is_word(*q)) return 0;
        while (q < e && (is_word(*q) || *q == ' ')) q++;
        /* q at the first char outside [\w ]: must be '=' of " pid=" */
        if (q >= e || *q != '=' || q - (p + 1) < 5 || memcmp(q - 4, " pid", 4) != 0) return 0;
        q++;
        const char *dg = q;
        while (q < e && is_digit(*q)) q++;
        if (q == dg || q + 1 >= e || q[0] != ')' || q[1] != ' ') return 0;
        *proc_s = p + 1;
        *proc_e = q;
        p = q + 2;
    }
    if (e - p < 20 || !lit(&p, e, "INFO ")) return 0;
    if (!two(p, &st[0]) || p[2] != '-' || !two(p + 3, &st[1]) || p[5] != ' ' || !two(p + 6, &st[2]) ||
        p[8] != ':' || !two(p + 9, &st[3]) || p[11] != ':' || !two(p + 12, &st[4]))
        return 0;
    p += 14;
    *frac = 0.0;
    if (p < e && *p == '.') {
        p++;
        const char *f = p;
        unsigned long long m = 0;
        while (p < e && is_digit(*p) && p - f < 7) m = m * 10 + (unsigned long long)(*p++ - '0');
        if (p == f || p - f > 6) return 0;
        *frac = (double)m / POW10[p - f];
    }
    if (!lit(&p, e, " [")) return 0;
    const char *w = p;
    while (p < e && (is_word(*p) || *p == '.')) p++;
    if (p == w || !lit(&p, e, ":")) return 0;
    w = p;
    while (p < e && is_digit(*p)) p++;
    if (p == w || !lit(&p, e, "] ")) return 0;
    if (st[0] < 1 || st[0] > 12 || st[1] < 1 || st[1] > 31 || st[2] > 23 || st[3] > 59 || st[4] > 60) return 0;
    *pp = p;
    return 1;
}

static int spec_body(const char *p, const char *e, double *v, buf_t *pp, unsigned char *k) {
    double x;
    if (!lit(&p, e, "SpecDecoding metrics: ")) return 0;
    if (lit(&p, e, "Draft acceptance rate: ")) {
        if (!percent(&p, e, &v[C_AR]) || !lit(&p, e, ", ")) return 0;
    }
    if (!lit(&p, e, "Mean acceptance length: ") || !decimal(&p, e, &v[C_AL]) || !lit(&p, e, ", ")) return 0;
    if (lit(&p, e, "Accepted throughput: ")) {
        if (!decimal(&p, e, &x) || !lit(&p, e, " tokens/s, Drafted throughput: ") || !decimal(&p, e, &x) ||
            !lit(&p, e, " tokens/s, "))
            return 0;
    }
    if (!lit(&p, e, "Accepted: ") || !integer(&p, e, &v[C_ACC])) return 0;
    if (!lit(&p, e, " tokens, Drafted: ") || !integer(&p, e, &v[C_DRAFT])) return 0;
    if (!lit(&p, e, " tokens, Per-position acceptance rate: ")) return 0;
    int n = 0;
    for (;;) {
        if (!decimal(&p, e, &x) || n == 255 || push(pp, &x, sizeof x)) return 0;
        n++;
        const char *q = p;
        if (lit(&q, e, ", ") && q < e && is_digit(*q)) {
            p = q;
            continue;
        }
        break;
    }
    *k = (unsigned char)n;
    if (lit(&p, e, ", Avg Draft acceptance rate: ")) {
        if (!percent(&p, e, &v[C_AR])) return 0;
    }
    if (!end_of_line(p, e)) return 0;
    v[C_ND] = v[C_DRAFT] / n;
    return 1;
}

static int engine_body(const char *p, const char *e, double ev[3]) {
    double x;
    if (!lit(&p, e, "Engine ") || !integer(&p, e, &ev[0])) return 0;
    if (!lit(&p, e, ": Avg prompt throughput: ") || !decimal(&p, e, &x)) return 0;
    if (!lit(&p, e, " tokens/s, Avg generation throughput: ") || !decimal(&p, e, &ev[1])) return 0;
    if (!lit(&p, e, " tokens/s, Running: ") || !integer(&p, e, &ev[2])) return 0;
    if (!lit(&p, e, " reqs, Waiting: ") || !integer(&p, e, &x)) return 0;
    if (!lit(&p, e, " reqs, GPU KV cache usage: ") || !percent(&p, e, &x)) return 0;
    if (!lit(&p, e, ", Prefix cache hit rate: ") || !percent(&p, e, &x)) return 0;
    return end_of_line(p, e);
}

static void configure_search(void);

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *seq;
    if (!PyArg_ParseTuple(args, "O", &seq)) return NULL;
    PyObject *fast = PySequence_Fast(seq, "anchors must be a sequence");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n < 4 || n > MAXA) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "between 4 and 32 anchors");
        return NULL;
    }
    for (int i = 0; i < n_anch; i++) free(anch[i]);
    n_anch = 0;
    mlen = PY_SSIZE_T_MAX;
    for (Py_ssize_t i = 0; i < n; i++) {
        char *s;
        Py_ssize_t len;
        if (PyBytes_AsStringAndSize(PySequence_Fast_GET_ITEM(fast, i), &s, &len) < 0 || len < 3) {
            Py_DECREF(fast);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "anchors are bytes of length >= 3");
            return NULL;
        }
        anch[i] = (char *)malloc((size_t)len);
        memcpy(anch[i], s, (size_t)len);
        anch_len[i] = len;
        if (len < mlen) mlen = len;
        n_anch++;
    }
    Py_DECREF(fast);
    Py_ssize_t m = mlen > 255 ? 255 : mlen;
    mlen = m;
    memset(shift_tab, (int)(m - 2), sizeof shift_tab);
    memset(cand_tab, 0, sizeof cand_tab);
    for (int a = 0; a < n_anch; a++) {
        const char *s = anch[a];
        for (Py_ssize_t q = 2; q < m; q++) {
            unsigned h = HASH(s + q - 2);
            unsigned char sh = (unsigned char)(m - 1 - q);
            if (sh < shift_tab[h]) shift_tab[h] = sh;
            if (sh == 0) cand_tab[h] |= 1u << a;
        }
    }
    configure_search();
    Py_RETURN_NONE;
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

/* The anchor (lowest index) of the buckets in `bits` that starts at s, or -1. */
static unsigned char bucket_of[MAXA];
static inline int verify(const char *s, const char *end, unsigned bits) {
    for (int a = 0; a < n_anch; a++)
        if ((bits >> bucket_of[a]) & 1 && end - s >= anch_len[a] && s[0] == anch[a][0] &&
            memcmp(s, anch[a], (size_t)anch_len[a]) == 0)
            return a;
    return -1;
}

#if defined(__x86_64__) && defined(__GNUC__)
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

static double pass_rate(void) {
    fill_tables();
    double total = 0.0;
    for (int b = 0; b < 8; b++) {
        double p = 1.0;
        for (int j = 0; j < 3; j++) {
            double w = 0.0;
            for (int c = 0; c < 256; c++)
                if ((t_lo[j][c & 15] >> b) & (t_hi[j][c >> 4] >> b) & 1) w += byte_weight(c);
            p *= w;
        }
        total += p;
    }
    return total;
}

static void build_teddy(void) {
    /* Buckets: anchors that begin alike share one (each byte set stays small, so few byte
     * combinations that no anchor has get through): start from a % 8 and move one anchor at a
     * time while the model's pass rate drops. */
    for (int a = 0; a < n_anch; a++) bucket_of[a] = (unsigned char)(a % 8);
    double best = pass_rate();
    for (int improved = 1, rounds = 0; improved && rounds < 20; rounds++) {
        improved = 0;
        for (int a = 0; a < n_anch; a++)
            for (int b = 0; b < 8; b++) {
                unsigned char was = bucket_of[a];
                if (b == was) continue;
                bucket_of[a] = (unsigned char)b;
                double r = pass_rate();
                if (r < best - 1e-12) {
                    best = r;
                    improved = 1;
                } else {
                    bucket_of[a] = was;
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

/* Reading a mapped file that another process truncates (a log rotation) raises SIGBUS where the
 * vanished pages are touched. Every read of a caller's buffer by the functions below runs
 * guarded: SIGBUS on this thread jumps back and the function raises FileChanged, and the caller
 * reads the range again with read(). A SIGBUS anywhere else goes on to the handler that was
 * there before (Python's faulthandler, say) or to the default action. */
static __thread sigjmp_buf *volatile bus_guard = NULL;
static struct sigaction prev_bus;
static int bus_installed = 0;
static PyObject *FileChanged = NULL;

static void on_bus(int sig, siginfo_t *si, void *ctx) {
    sigjmp_buf *j = (sigjmp_buf *)bus_guard;
    if (j) {
        bus_guard = NULL;
        siglongjmp(*j, 1);
    }
    if ((prev_bus.sa_flags & SA_SIGINFO) && prev_bus.sa_sigaction) {
        prev_bus.sa_sigaction(sig, si, ctx);
        return;
    }
    if (!(prev_bus.sa_flags & SA_SIGINFO) && prev_bus.sa_handler != SIG_DFL && prev_bus.sa_handler != SIG_IGN) {
        prev_bus.sa_handler(sig);
        return;
    }
    sigaction(SIGBUS, &prev_bus, NULL); /* the access runs again, and ends the process as it would have */
}

static void install_bus_guard(void) {
    if (bus_installed) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_bus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &prev_bus) == 0) bus_installed = 1;
}

/* fn(arg) with SIGBUS caught: 0, or 1 if a read of the buffer faulted (fn did not finish).
 * Never inlined, and the guard is set and cleared around compiler barriers: the reads of the
 * buffer stay between the two (memchr is known to the compiler, which could otherwise move or
 * drop the stores). */
__attribute__((noinline)) static int guarded(void (*fn)(void *), void *arg) {
    sigjmp_buf jb;
    if (sigsetjmp(jb, 1)) return 1;
    bus_guard = &jb;
    __asm__ __volatile__("" ::: "memory");
    fn(arg);
    __asm__ __volatile__("" ::: "memory");
    bus_guard = NULL;
    return 0;
}

static PyObject *file_changed(void) {
    PyErr_SetString(FileChanged, "the file changed while it was read (truncated or replaced)");
    return NULL;
}

static void configure_search(void) {
    install_bus_guard();
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

/* newlines in [s, e), a word at a time (lines are short: one memchr call per line costs more) */
static Py_ssize_t count_nl(const char *s, const char *e) {
#ifdef HAVE_TEDDY
    if (use_teddy == 2) return count_nl_avx2(s, e);
    if (use_teddy) return count_nl_sse(s, e);
#endif
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

static int has_anchor(const char *s, const char *e) {
    for (int a = 0; a < n_anch; a++)
        if (e - s >= anch_len[a] && memmem(s, (size_t)(e - s), anch[a], (size_t)anch_len[a])) return 1;
    return 0;
}

typedef struct {
    int ok, family;
    buf_t lines, cols[NCOL], pp, ppk, tagidx;
    const char *tag_s[64], *tag_e[64];
    int ntags;
    const char *proc_s, *proc_e;
    int have_proc, head_unpaired, saw_spec, saw_engine, have_pending, first_st[5], last_md[2], have_stamp;
    double pending[3];
    Py_ssize_t n_lines, n;
} state_t;

static int line_of(state_t *S, const char *ls, const char *le, int which, int year) {
    double v[NCOL];
    for (int i = 0; i < NCOL; i++) v[i] = NAN;
    if (which == A_DECODE) {
        const char *ts, *te;
        if (S->family == 2 || !decode_line(ls, le, &ts, &te, v)) return 0;
        S->family = 1;
        int t;
        for (t = 0; t < S->ntags; t++)
            if (S->tag_e[t] - S->tag_s[t] == te - ts && memcmp(S->tag_s[t], ts, (size_t)(te - ts)) == 0) break;
        if (t == S->ntags) {
            if (t == 64) return 0;
            S->tag_s[t] = ts, S->tag_e[t] = te, S->ntags++;
        }
        unsigned char ti = (unsigned char)t;
        if (push(&S->tagidx, &ti, 1)) return -1;
    } else {
        if (S->family == 1) return 0;
        const char *p = ls, *ps, *pe;
        int st[5];
        double frac;
        if (!vllm_prefix(&p, le, &ps, &pe, st, &frac)) return 0;
        int same = S->have_proc ? ((ps == NULL && S->proc_s == NULL) ||
                                   (ps && S->proc_s && pe - ps == S->proc_e - S->proc_s &&
                                    memcmp(ps, S->proc_s, (size_t)(pe - ps)) == 0))
                                : 1;
        if (!same) return 0;
        if (!S->have_proc) {
            if (ps && has_anchor(ps, pe)) return 0;
            if (ps && memmem(ps, (size_t)(pe - ps), "Engine ", 7)) return 0;
            S->proc_s = ps, S->proc_e = pe, S->have_proc = 1;
        }
        S->family = 2;
        /* every vLLM stamp moves the line parser's year reader: track them all */
        if (S->have_stamp) {
            int pm = S->last_md[0], pd = S->last_md[1];
            if ((st[0] < pm || (st[0] == pm && st[1] < pd)) && pm - st[0] >= 6) return 0; /* a new year */
        } else {
            memcpy(S->first_st, st, sizeof S->first_st);
            S->have_stamp = 1;
        }
        S->last_md[0] = st[0], S->last_md[1] = st[1];
        if (which == A_ENGINE) {
            double ev[3];
            if (!engine_body(p, le, ev)) return 0;
            memcpy(S->pending, ev, sizeof ev);
            S->have_pending = 1;
            S->saw_engine = 1;
            return 1;
        }
        unsigned char k;
        if (!spec_body(p, le, v, &S->pp, &k)) return 0;
        v[C_TS] = (double)(days_from_civil(year, st[0], st[1]) * 86400 + st[2] * 3600 + st[3] * 60 + st[4]) + frac;
        if (S->have_pending) {
            v[C_RUN] = S->pending[2];
            v[C_TP] = S->pending[1];
            v[C_ENG] = S->pending[0];
            S->have_pending = 0;
        } else if (!S->saw_spec) {
            S->head_unpaired = 1;
        }
        S->saw_spec = 1;
        if (push(&S->ppk, &k, 1)) return -1;
    }
    int64_t no = S->n_lines + 1;
    if (push(&S->lines, &no, sizeof no)) return -1;
    if (S->n * (Py_ssize_t)sizeof(double) == S->cols[0].cap) { /* the columns grow together */
        for (int i = 0; i < NCOL; i++)
            if (push(&S->cols[i], &v[i], sizeof(double))) return -1;
    } else {
        for (int i = 0; i < NCOL; i++) {
            memcpy(S->cols[i].v + S->cols[i].n, &v[i], sizeof(double));
            S->cols[i].n += sizeof(double);
        }
    }
    S->n++;
    return 1;
}

typedef struct {
    state_t S;
    const char *buf, *end, *bad_ls;
    int year;
    char *tags[64], *proc; /* owned copies of the rank tags and the process tag */
    Py_ssize_t tag_len[64], proc_len;
} scan_job_t;

__attribute__((noinline)) static void scan_loop(void *arg) {
    scan_job_t *J = (scan_job_t *)arg;
    state_t *S = &J->S;
    const char *buf = J->buf, *end = J->end;
    const char *counted = buf;  /* newlines before this point are in S->n_lines */
    const char *last_ls = NULL; /* the start of the last line read */
    if (end == buf || end[-1] != '\n') S->ok = 0;
    const char *from = buf;
    while (S->ok == 1) {
        int which = -1;
        const char *start = find_anchor(from, end, &which);
        if (!start) break;
        const char *ls = memrchr(buf, '\n', (size_t)(start - buf));
        ls = ls ? ls + 1 : buf;
        J->bad_ls = ls;
        if (ls == last_ls) { /* a second anchor on a line already read */
            S->ok = 0;
            break;
        }
        last_ls = ls;
        const char *le = memchr(start, '\n', (size_t)(end - start));
        S->n_lines += count_nl(counted, ls);
        counted = ls;
        int shaped = which == A_DECODE || which == A_SPEC || which == A_ENGINE || which == A_LLAMA;
        int r = shaped && which != A_LLAMA ? line_of(S, ls, le, which, J->year) : 0; /* llama.cpp: Python's */
        if (r <= 0) {
            S->ok = r == 0 && shaped ? 2 : r; /* 2: not the common form; maybe the grammar's wider one */
            break;
        }
        /* A line that fits a shape holds no second anchor (its parts are fixed text, numbers,
         * rank tags, a file name and a process tag checked above, none of which can hold
         * one): go on after it, its newline counted. */
        S->n_lines++;
        counted = le + 1;
        from = le + 1;
    }
    if (S->ok == 1) S->n_lines += count_nl(counted, end);
    /* the texts the result quotes, copied while the buffer is guarded */
    for (int t = 0; S->ok == 1 && t < S->ntags; t++) {
        J->tag_len[t] = S->tag_e[t] - S->tag_s[t];
        J->tags[t] = (char *)malloc((size_t)J->tag_len[t] + 1);
        if (!J->tags[t]) S->ok = -1;
        else memcpy(J->tags[t], S->tag_s[t], (size_t)J->tag_len[t]);
    }
    if (S->ok == 1 && S->proc_s) {
        J->proc_len = S->proc_e - S->proc_s;
        J->proc = (char *)malloc((size_t)J->proc_len + 1);
        if (!J->proc) S->ok = -1;
        else memcpy(J->proc, S->proc_s, (size_t)J->proc_len);
    }
}

static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer view;
    int year, where = 0;
    if (!PyArg_ParseTuple(args, "y*i|p", &view, &year, &where)) return NULL;
    if (n_anch == 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_RuntimeError, "configure() first");
        return NULL;
    }
    scan_job_t *J = (scan_job_t *)calloc(1, sizeof *J);
    if (!J) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    J->buf = (const char *)view.buf, J->end = J->buf + view.len, J->bad_ls = J->buf, J->year = year;
    J->S.ok = 1;
    int faulted;
    Py_BEGIN_ALLOW_THREADS
    faulted = guarded(scan_loop, J);
    Py_END_ALLOW_THREADS
    state_t *S = &J->S;
    PyObject *result = NULL;
    if (faulted) {
        file_changed();
    } else if (S->ok < 0) {
        PyErr_NoMemory();
    } else if (where) { /* where(): the start of the line the scan stopped at, -1 if none */
        result = PyLong_FromSsize_t(S->ok == 1 ? -1 : (Py_ssize_t)(J->bad_ls - J->buf));
    } else if (S->ok == 2) {
        Py_INCREF(Py_False);
        result = Py_False;
    } else if (S->ok == 0) {
        Py_INCREF(Py_None);
        result = Py_None;
    } else {
        PyObject *tags = PyList_New(S->ntags);
        for (int t = 0; tags && t < S->ntags; t++)
            PyList_SET_ITEM(tags, t, PyBytes_FromStringAndSize(J->tags[t], J->tag_len[t]));
        PyObject *cols = PyList_New(NCOL);
        for (int i = 0; cols && i < NCOL; i++)
            PyList_SET_ITEM(cols, i, PyBytes_FromStringAndSize(S->cols[i].v ? S->cols[i].v : "", S->cols[i].n));
        PyObject *vllm = Py_None;
        Py_INCREF(Py_None);
        if (S->family == 2) {
            Py_DECREF(Py_None);
            PyObject *tail = S->have_pending ? Py_BuildValue("(ddd)", S->pending[0], S->pending[1], S->pending[2])
                                             : (Py_INCREF(Py_None), Py_None);
            PyObject *proc = J->proc ? PyBytes_FromStringAndSize(J->proc, J->proc_len) : (Py_INCREF(Py_None), Py_None);
            vllm = Py_BuildValue("(NiNi(iiiii)(ii))", proc, S->head_unpaired, tail, S->have_stamp, S->first_st[0],
                                 S->first_st[1], S->first_st[2], S->first_st[3], S->first_st[4], S->last_md[0],
                                 S->last_md[1]);
        }
        if (tags && cols && vllm)
            result = Py_BuildValue("(ninNNNNy#y#N)", S->n_lines, S->family, S->n,
                                   PyBytes_FromStringAndSize(S->lines.v ? S->lines.v : "", S->lines.n), cols, tags,
                                   PyBytes_FromStringAndSize(S->tagidx.v ? S->tagidx.v : "", S->tagidx.n),
                                   S->pp.v ? S->pp.v : "", S->pp.n, S->ppk.v ? S->ppk.v : "", S->ppk.n, vllm);
        else {
            Py_XDECREF(tags);
            Py_XDECREF(cols);
            Py_XDECREF(vllm);
        }
    }
    free(S->lines.v), free(S->pp.v), free(S->ppk.v), free(S->tagidx.v);
    for (int i = 0; i < NCOL; i++) free(S->cols[i].v);
    for (int t = 0; t < 64; t++) free(J->tags[t]);
    free(J->proc);
    free(J);
    PyBuffer_Release(&view);
    return result;
}

/* Guarded reads for the caller of a mapped range (see on_bus). */
typedef struct {
    const char *buf;
    Py_ssize_t len, at, limit, out;
} probe_t;

__attribute__((noinline)) static void line_end_loop(void *arg) {
    probe_t *P = (probe_t *)arg;
    const char *nl = memchr(P->buf + P->at, '\n', (size_t)(P->len - P->at));
    P->out = nl ? (nl - P->buf) + 1 : P->len;
}

/* line_end(buf, at) -> the offset just after the newline ending the line at `at` (or len). */
static PyObject *line_end(PyObject *self, PyObject *args) {
    Py_buffer v;
    Py_ssize_t at;
    if (!PyArg_ParseTuple(args, "y*n", &v, &at)) return NULL;
    probe_t P = {(const char *)v.buf, v.len, at < 0 ? 0 : (at > v.len ? v.len : at), 0, 0};
    int faulted;
    Py_BEGIN_ALLOW_THREADS
    faulted = guarded(line_end_loop, &P);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v);
    return faulted ? file_changed() : PyLong_FromSsize_t(P.out);
}

/* summary_scan.has_oversized, guarded: a line longer than `limit` holds a whole aligned block of
 * limit / 2 bytes without a newline; such a block is measured exactly. out: 1 if one is found;
 * 2 if the buffer does not end with a newline (the caller then reads it as bytes). */
__attribute__((noinline)) static void long_line_loop(void *arg) {
    probe_t *P = (probe_t *)arg;
    const char *b = P->buf;
    Py_ssize_t n = P->len, half = P->limit / 2;
    P->out = 0;
    if (n == 0 || b[n - 1] != '\n') {
        P->out = 2;
        return;
    }
    if (n <= P->limit || half < 1) return;
    for (Py_ssize_t a = 0; a < n; a += half) {
        Py_ssize_t e = a + half < n ? a + half : n;
        if (memchr(b + a, '\n', (size_t)(e - a))) continue;
        const char *ls = a ? memrchr(b, '\n', (size_t)a) : NULL;
        Py_ssize_t start = ls ? (ls - b) + 1 : 0;
        const char *le = memchr(b + e, '\n', (size_t)(n - e));
        Py_ssize_t stop = le ? le - b : n;
        if (stop - start > P->limit) {
            P->out = 1;
            return;
        }
    }
}

static PyObject *long_line(PyObject *self, PyObject *args) {
    Py_buffer v;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "y*n", &v, &limit)) return NULL;
    probe_t P = {(const char *)v.buf, v.len, 0, limit, 0};
    int faulted;
    Py_BEGIN_ALLOW_THREADS
    faulted = guarded(long_line_loop, &P);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v);
    return faulted ? file_changed() : PyLong_FromSsize_t(P.out);
}

/* anchor_lines(buf) -> bytes of int64: the start of every line of buf holding an anchor, in order
 * (the line parser needs to see only these lines, and the lines continuing an args dump). */
static PyObject *anchor_lines(PyObject *self, PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view)) return NULL;
    if (n_anch == 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_RuntimeError, "configure() first");
        return NULL;
    }
    const char *buf = (const char *)view.buf, *end = buf + view.len;
    buf_t out = {0};
    int nomem = 0;
    Py_BEGIN_ALLOW_THREADS
    const char *from = buf;
    for (;;) {
        int which;
        const char *start = find_anchor(from, end, &which);
        if (!start) break;
        const char *ls = memrchr(buf, '\n', (size_t)(start - buf));
        int64_t at = ls ? (ls + 1 - buf) : 0;
        if (push(&out, &at, sizeof at)) {
            nomem = 1;
            break;
        }
        const char *le = memchr(start, '\n', (size_t)(end - start));
        if (!le) break;
        from = le + 1;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    PyObject *r = nomem ? PyErr_NoMemory() : PyBytes_FromStringAndSize(out.v ? out.v : "", out.n);
    free(out.v);
    return r;
}

/* search(mode=None) -> the search in use, after setting it when a mode is given: 0 the
 * Wu-Manber skip loop (any CPU), 1 SSSE3, 2 AVX2 (what the CPU has, chosen by configure());
 * for the tests, which check that every mode finds the same lines. */
static PyObject *search(PyObject *self, PyObject *args) {
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

static PyMethodDef methods[] = {
    {"line_end", line_end, METH_VARARGS, "The offset after the newline ending the line at an offset (guarded)."},
    {"long_line", long_line, METH_VARARGS, "1 if a line is longer than the limit, 2 if no final newline (guarded)."},
    {"search", search, METH_VARARGS, "The anchor search in use (0 portable, 1 SSSE3, 2 AVX2); set it for tests."},
    {"anchor_lines", anchor_lines, METH_VARARGS, "Starts of the lines holding an anchor."},
    {"configure", configure, METH_VARARGS, "Set the anchors (grammar.ANCHORS as bytes)."},
    {"scan", scan, METH_VARARGS, "Scan a buffer of whole lines: columns of its canonical lines, or None."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastscan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastscan(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    FileChanged = PyErr_NewExceptionWithDoc("tui.core.parsing._fastscan.FileChanged",
                                            "A mapped file changed (was truncated) while it was read.",
                                            PyExc_OSError, NULL);
    if (!FileChanged || PyModule_AddObjectRef(m, "FileChanged", FileChanged) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
