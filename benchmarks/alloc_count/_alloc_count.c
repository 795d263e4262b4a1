/* A counting allocator for benchmarks: wraps CPython's PYMEM_DOMAIN_MEM and PYMEM_DOMAIN_OBJ allocators (both
 * called with the GIL held; large object blocks reach the raw domain through them, so the raw domain is left alone
 * to count each block once) and adds up the bytes they hand out.
 *
 * Why a table: a realloc that grows a block allocates only the growth, and one that shrinks counts as what it kept
 * (asyncio's recv asks for 256 KiB and shrinks it to what arrived), so the old size of a block must be known. Blocks
 * of at least TRACK_MIN bytes are remembered (pointer -> size) in an open-addressing table; a smaller block's old
 * size is taken as TRACK_MIN, so growing small blocks are slightly undercounted - negligible beside batch copies. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define TRACK_MIN 1024
#define SLOTS (1u << 20)

typedef struct { void *ptr; size_t size; } Slot;

static Slot *table;
static size_t live;
static long long allocated;  /* signed: a shrink gives back */
static PyMemAllocatorEx under_mem, under_obj;

static size_t home(void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;
    return (size_t)(x & (SLOTS - 1));
}

static void remember(void *p, size_t n) {
    if (live >= SLOTS / 2) return;  /* full enough: stop remembering rather than slow down */
    size_t i = home(p);
    while (table[i].ptr && table[i].ptr != p) i = (i + 1) & (SLOTS - 1);
    if (!table[i].ptr) live++;
    table[i].ptr = p; table[i].size = n;
}

/* The remembered size of p (forgetting it), or 0; linear probing with backward-shift deletion. */
static size_t forget(void *p) {
    size_t i = home(p);
    while (table[i].ptr) {
        if (table[i].ptr == p) {
            size_t n = table[i].size, j = i;
            for (;;) {
                j = (j + 1) & (SLOTS - 1);
                if (!table[j].ptr) break;
                size_t k = home(table[j].ptr);
                int movable = (i <= j) ? (k <= i || k > j) : (k <= i && k > j);
                if (movable) { table[i] = table[j]; i = j; }
            }
            table[i].ptr = NULL;
            live--;
            return n;
        }
        i = (i + 1) & (SLOTS - 1);
    }
    return 0;
}

static void *count_malloc(void *ctx, size_t n) {
    PyMemAllocatorEx *u = ctx;
    void *p = u->malloc(u->ctx, n);
    if (p) { allocated += n; if (n >= TRACK_MIN) remember(p, n); }
    return p;
}

static void *count_calloc(void *ctx, size_t nelem, size_t elsize) {
    PyMemAllocatorEx *u = ctx;
    void *p = u->calloc(u->ctx, nelem, elsize);
    size_t n = nelem * elsize;
    if (p) { allocated += n; if (n >= TRACK_MIN) remember(p, n); }
    return p;
}

static void *count_realloc(void *ctx, void *p, size_t n) {
    PyMemAllocatorEx *u = ctx;
    size_t old = (p && live) ? forget(p) : 0;
    void *q = u->realloc(u->ctx, p, n);
    if (!q) { if (old) remember(p, old); return NULL; }
    if (old) allocated += n - old;  /* a remembered block: its growth, or back what a shrink gave up */
    else if (!p) allocated += n;
    else if (n > TRACK_MIN) allocated += n - TRACK_MIN;  /* a small block's old size is not known */
    if (n >= TRACK_MIN) remember(q, n);
    return q;
}

static void count_free(void *ctx, void *p) {
    PyMemAllocatorEx *u = ctx;
    if (p && live) forget(p);
    u->free(u->ctx, p);
}

static PyObject *install(PyObject *self, PyObject *args) {
    if (table) Py_RETURN_NONE;
    table = calloc(SLOTS, sizeof(Slot));
    if (!table) return PyErr_NoMemory();
    PyMem_GetAllocator(PYMEM_DOMAIN_MEM, &under_mem);
    PyMem_GetAllocator(PYMEM_DOMAIN_OBJ, &under_obj);
    PyMemAllocatorEx mem = {&under_mem, count_malloc, count_calloc, count_realloc, count_free};
    PyMemAllocatorEx obj = {&under_obj, count_malloc, count_calloc, count_realloc, count_free};
    PyMem_SetAllocator(PYMEM_DOMAIN_MEM, &mem);
    PyMem_SetAllocator(PYMEM_DOMAIN_OBJ, &obj);
    Py_RETURN_NONE;
}

static PyObject *allocated_bytes(PyObject *self, PyObject *args) {
    return PyLong_FromLongLong(allocated);
}

static PyMethodDef methods[] = {
    {"install", install, METH_NOARGS, "Start counting the bytes the MEM and OBJ domains allocate."},
    {"allocated", allocated_bytes, METH_NOARGS, "Bytes allocated since install()."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_alloc_count", NULL, -1, methods};

PyMODINIT_FUNC PyInit__alloc_count(void) { return PyModule_Create(&module); }
