/* Part of _fastscan.c (included once, there, after the matcher): configure(), which reads the
 * program the Python side compiled from the declared shapes (shape_program.py) into the static
 * tables, and builds the anchor search for it. */
static void free_config(void) {
    for (int i = 0; i < n_anch; i++) free(anch[i]);
    for (int i = 0; i < n_forbid; i++) free(forbid[i]);
    for (int s = 0; s < n_shapes; s++) {
        for (int i = 0; i < shapes[s].nops; i++) free(shapes[s].ops[i].text);
        free(shapes[s].ops);
    }
    n_anch = n_forbid = n_shapes = 0;
}

static int bytes_list(PyObject *seq, char **out, Py_ssize_t *lens, int *n, int max, Py_ssize_t minlen) {
    PyObject *fast = PySequence_Fast(seq, "a sequence of bytes");
    if (!fast) return 0;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(fast);
    if (m > max) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "too many texts");
        return 0;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        char *s;
        Py_ssize_t len;
        if (PyBytes_AsStringAndSize(PySequence_Fast_GET_ITEM(fast, i), &s, &len) < 0 || len < minlen) {
            Py_DECREF(fast);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "texts are bytes of length >= 3");
            return 0;
        }
        out[i] = (char *)malloc((size_t)len + 1);
        memcpy(out[i], s, (size_t)len);
        out[i][len] = 0;
        lens[i] = len;
        (*n)++;
    }
    Py_DECREF(fast);
    return 1;
}

static int int_list(PyObject *seq, int *out, int max, int *n) {
    PyObject *fast = PySequence_Fast(seq, "a sequence of ints");
    if (!fast) return 0;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(fast);
    if (m > max) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "too many columns");
        return 0;
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (x < 0 || x >= ncols) {
            Py_DECREF(fast);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a column out of range");
            return 0;
        }
        out[i] = (int)x;
    }
    *n = (int)m;
    Py_DECREF(fast);
    return 1;
}

static int one_shape(PyObject *t, shape_t *S) {
    PyObject *pass, *derive, *ops;
    PyObject *offsets;
    memset(S, 0, sizeof *S);
    if (!PyArg_ParseTuple(t, "iiiiOO(iiddO)O", &S->anchor, &S->family, &S->pairs, &S->recheck, &pass, &derive,
                          &S->match_val, &S->match_dst, &S->within, &S->per_item, &offsets, &ops))
        return 0;
    if (S->anchor < 0 || S->anchor >= n_anch || S->family < 0 || S->family >= MAXF || S->match_val >= ncols ||
        S->match_dst >= ncols || (S->match_dst >= 0 && S->match_val < 0)) {
        PyErr_SetString(PyExc_ValueError, "a shape's anchor, family or column is out of range");
        return 0;
    }
    PyObject *offs = PySequence_Fast(offsets, "sum_match offsets");
    if (!offs) return 0;
    Py_ssize_t no = PySequence_Fast_GET_SIZE(offs);
    if (no > 4) {
        Py_DECREF(offs);
        PyErr_SetString(PyExc_ValueError, "at most 4 sum_match offsets");
        return 0;
    }
    for (Py_ssize_t i = 0; i < no; i++) {
        S->off[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(offs, i));
        if (S->off[i] == -1.0 && PyErr_Occurred()) {
            Py_DECREF(offs);
            return 0;
        }
    }
    S->n_off = (int)no;
    Py_DECREF(offs);
    if (!int_list(pass, S->pass, MAXC, &S->npass)) return 0;
    PyObject *d = PySequence_Fast(derive, "derived columns");
    if (!d) return 0;
    Py_ssize_t nd = PySequence_Fast_GET_SIZE(d);
    for (Py_ssize_t i = 0; i < nd && i < 4; i++) {
        int a, b;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(d, i), "ii", &a, &b) || a < 0 || b < 0 || a >= ncols ||
            b >= ncols) {
            Py_DECREF(d);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a derived column out of range");
            return 0;
        }
        S->dst[i] = a, S->src[i] = b, S->nderive++;
    }
    Py_DECREF(d);
    PyObject *o = PySequence_Fast(ops, "ops");
    if (!o) return 0;
    S->nops = (int)PySequence_Fast_GET_SIZE(o);
    S->ops = (op_t *)calloc((size_t)S->nops + 1, sizeof(op_t));
    for (int i = 0; i < S->nops; i++) {
        op_t *op = &S->ops[i];
        const char *s;
        Py_ssize_t len;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(o, i), "iiiy#", &op->code, &op->a, &op->b, &s, &len)) {
            Py_DECREF(o);
            return 0;
        }
        op->text = (char *)malloc((size_t)len + 1);
        memcpy(op->text, s, (size_t)len);
        op->text[len] = 0;
        op->len = len;
        int group = op->code == OP_OPT || op->code == OP_REPEAT || op->code == OP_CAPTURE;
        if (op->code < OP_LIT || op->code > OP_CAPTURE || (group && (op->a < 0 || i + op->a >= S->nops)) ||
            (op->code == OP_NUM && (op->a < 0 || op->a > 2 || op->b >= ncols)) ||
            (op->code == OP_CHARS && (op->a & 0xff) > 5) || (op->code == OP_CLOCK && (op->a < 0 || op->a > 2))) {
            Py_DECREF(o);
            PyErr_SetString(PyExc_ValueError, "a bad op");
            return 0;
        }
        if (op->code == OP_CAPTURE) {
            if (op->b == CAP_RANK) S->has_rank = 1;
            else if (op->b == CAP_PROCESS) S->has_process = 1;
            else {
                Py_DECREF(o);
                PyErr_SetString(PyExc_ValueError, "a bad capture");
                return 0;
            }
        }
        if (op->code == OP_CLOCK && op->a == CLOCK_YEARLESS) family_edged[S->family] = 1;
    }
    Py_DECREF(o);
    if (S->pairs) family_edged[S->family] = 1;
    return 1;
}

static PyObject *configure(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *anchors, *forbidden, *shape_seq;
    int nc, tc, ec;
    if (!PyArg_ParseTuple(args, "OOiiiO", &anchors, &forbidden, &nc, &tc, &ec, &shape_seq)) return NULL;
    free_config();
    memset(family_edged, 0, sizeof family_edged);
    if (nc < 1 || nc > MAXC || tc >= nc || ec >= nc) {
        PyErr_SetString(PyExc_ValueError, "between 1 and 32 columns");
        return NULL;
    }
    ncols = nc, ts_col = tc, el_col = ec;
    if (!bytes_list(anchors, anch, anch_len, &n_anch, MAXA, 3) ||
        !bytes_list(forbidden, forbid, forbid_len, &n_forbid, MAXA, 1)) {
        free_config();
        return NULL;
    }
    PyObject *fast = PySequence_Fast(shape_seq, "shapes must be a sequence");
    if (!fast) {
        free_config();
        return NULL;
    }
    Py_ssize_t ns = PySequence_Fast_GET_SIZE(fast);
    if (ns > MAXS) {
        Py_DECREF(fast);
        free_config();
        PyErr_SetString(PyExc_ValueError, "at most 32 shapes");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < ns; i++) {
        if (!one_shape(PySequence_Fast_GET_ITEM(fast, i), &shapes[i])) {
            n_shapes = (int)i + 1;
            Py_DECREF(fast);
            free_config();
            return NULL;
        }
        n_shapes = (int)i + 1;
    }
    Py_DECREF(fast);
    memset(anchor_shaped, 0, sizeof anchor_shaped);
    memset(n_of_anchor, 0, sizeof n_of_anchor);
    for (int i = 0; i < n_shapes; i++) {
        int a = shapes[i].anchor;
        anchor_shaped[a] = 1;
        of_anchor[a][n_of_anchor[a]++] = i;
    }
    fill_classes();
    configure_search();
    Py_RETURN_NONE;
}
