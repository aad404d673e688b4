/* Part of _reduce.c (included once, there): the bulk work of requests.RequestSet._add_many.
 *
 * tally(values, bins, lo, hi, width, total) -> (kept, total)
 *   The values within [lo, hi] (NaN out), in order, as a new list; each one counted in
 *   bins[min(int((v - lo) / width + 1e-9), len(bins) - 1)] (``bins``: a writable buffer of
 *   int64); ``total`` plus each kept value, added left to right (functools.reduce(add)).
 *
 * reservoir(words, n, values, start, sample) -> (done, used)
 *   Vitter's algorithm R past a full reservoir, as RequestSet._add_many draws it in Python: for
 *   each of values[start:], n += 1, then j = randrange(n) (random.Random's: getrandbits(k) for
 *   k = n.bit_length(), again while j >= n), and sample[j] = the value when j < len(sample).
 *   ``words``: the generator's next 32-bit outputs (getrandbits(k <= 32) is one output shifted
 *   right by 32 - k), in order, as native uint32. Stops when the words run out or n would need
 *   more than 32 bits; done: how many values were drawn for, used: how many words they took
 *   (the caller moves the generator on by exactly that many). */
static PyObject *reservoir(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer wv;
    Py_ssize_t n, start;
    PyObject *values, *sample;
    if (!PyArg_ParseTuple(args, "y*nO!nO!", &wv, &n, &PyList_Type, &values, &start, &PyList_Type, &sample)) return NULL;
    const uint32_t *w = (const uint32_t *)wv.buf;
    Py_ssize_t nw = wv.len / (Py_ssize_t)sizeof(uint32_t), used = 0, done = 0;
    Py_ssize_t size = PyList_GET_SIZE(sample), m = PyList_GET_SIZE(values) - start;
    if (n < 0 || start < 0 || m < 0) {
        PyBuffer_Release(&wv);
        PyErr_SetString(PyExc_ValueError, "reservoir: bad n or start");
        return NULL;
    }
    for (; done < m; done++) {
        uint64_t n1 = (uint64_t)n + 1;
        if (n1 > UINT32_MAX) break;
        int k = 0;
        for (uint64_t x = n1; x; x >>= 1) k++;
        Py_ssize_t u = used;
        uint64_t j;
        do {
            if (u >= nw) goto out;
            j = (uint64_t)(w[u++] >> (32 - k));
        } while (j >= n1);
        used = u, n = (Py_ssize_t)n1;
        if (j < (uint64_t)size) {
            PyObject *a = PyList_GET_ITEM(values, start + done);
            Py_INCREF(a);
            PyList_SetItem(sample, (Py_ssize_t)j, a);
        }
    }
out:
    PyBuffer_Release(&wv);
    return Py_BuildValue("nn", done, used);
}

static PyObject *tally(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *values;
    Py_buffer bv;
    double lo, hi, width, total;
    if (!PyArg_ParseTuple(args, "O!w*dddd", &PyList_Type, &values, &bv, &lo, &hi, &width, &total)) return NULL;
    int64_t *bins = (int64_t *)bv.buf;
    Py_ssize_t nb = bv.len / (Py_ssize_t)sizeof(int64_t), m = PyList_GET_SIZE(values);
    PyObject *kept = nb > 0 ? PyList_New(0) : NULL;
    if (nb <= 0) PyErr_SetString(PyExc_ValueError, "tally: no bins");
    for (Py_ssize_t i = 0; kept && i < m; i++) {
        PyObject *o = PyList_GET_ITEM(values, i);
        double v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) {
            Py_CLEAR(kept);
            break;
        }
        if (!(lo <= v && v <= hi)) continue;
        if (PyList_Append(kept, o) < 0) {
            Py_CLEAR(kept);
            break;
        }
        total = total + v;
        double b = (v - lo) / width + 1e-9;
        Py_ssize_t j = b >= (double)(nb - 1) ? nb - 1 : (Py_ssize_t)b;
        bins[j]++;
    }
    PyBuffer_Release(&bv);
    return kept ? Py_BuildValue("(Nd)", kept, total) : NULL;
}
