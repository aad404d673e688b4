/* Part of _fastscan.c (included once, there): growable buffers, numbers read without strtod,
 * dates. Nothing here knows a family: the shapes are data (_fastscan.c interprets them). */
typedef struct {
    char *v;
    Py_ssize_t n, cap;
} buf_t;

static int grow(buf_t *b, Py_ssize_t k) {
    Py_ssize_t cap = b->cap ? b->cap * 2 : 1 << 15;
    while (cap < b->n + k) cap *= 2;
    char *v = (char *)realloc(b->v, (size_t)cap);
    if (!v) return -1;
    b->v = v;
    b->cap = cap;
    return 0;
}

static inline int push(buf_t *b, const void *x, Py_ssize_t k) {
    if (b->n + k > b->cap && grow(b, k)) return -1;
    memcpy(b->v + b->n, x, (size_t)k);
    b->n += k;
    return 0;
}

static inline int is_digit(char c) { return c >= '0' && c <= '9'; }

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
static inline int number(const char **p, const char *end, int want_fraction, int extra_scale, double *out) {
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


/* days since 1970-01-01 of a proleptic Gregorian date (linear in d, like calendar.timegm) */
static long long days_from_civil(long long y, long long m, long long d) {
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    long long yoe = y - era * 400;
    long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int end_of_line(const char *p, const char *e) {
    if (p < e && *p == '\r') p++;
    return p == e;
}

