# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""RecordBatch v2 codec in C: the fast twin of ``kraftwire.records.pyimpl``.

Same API, same results, same ``CorruptRecordError(reason, position)`` — the differential tests
in ``tests/records`` hold the two together. The byte layout, masks and error reasons come from
``kraftwire.records.api`` (read into C globals at import), never from literals here.

Design notes:
* One record parser (``_parse_record``) checks everything about a record, including header key
  UTF-8, and reports spans; the object iterator, validate-only walk and columnar decode all
  use it, so they cannot disagree about what is valid.
* CRC-32C goes through the ``crc32c`` package (hardware, ~26 GB/s), called once per batch on a
  memoryview over the batch: faster than anything worth hand-writing here.
* Nothing allocates from a length read off the wire before that length is checked against
  the bytes actually present (or, for decompression, the batch size limit).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE, PyBytes_CheckExact
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF, Py_XDECREF, PyObject
from cpython.unicode cimport PyUnicode_DecodeUTF8, PyUnicode_AsUTF8AndSize
from libc.stdint cimport int64_t, uint64_t, int32_t, uint32_t, int16_t, uint16_t, uint8_t, int8_t
from libc.string cimport memcpy, memset, memcmp
cimport cython

cdef extern from *:
    bint __builtin_sub_overflow(int64_t a, int64_t b, int64_t* res) nogil

cdef extern from "Python.h":
    int _PyBytes_Resize(PyObject** bytes, Py_ssize_t newsize) except -1
    object PyMemoryView_FromMemory(char *mem, Py_ssize_t size, int flags)
    int PyBUF_READ

import sys as _sys
import time as _time

import crc32c as _crc32c_module

from kraftwire.errors import CorruptRecordError as _CorruptRecordError
from kraftwire.records import api as _api
from kraftwire.records import compression as _compression
from kraftwire.records.columns import RawColumns as _RawColumns, arrow_available as _arrow_available, to_arrow as _to_arrow

IMPLEMENTATION = "ext"

if _sys.byteorder != "little":  # the columnar buffers are written in native order, which Arrow wants little
    raise ImportError("kraftwire_ext._records supports little-endian machines only")

cdef object _crc32c = _crc32c_module.crc32c
cdef object _decompress = _compression.decompress
cdef object _compress = _compression.compress
cdef object _BatchInfo = _api.BatchInfo
cdef object _ValidationResult = _api.ValidationResult
cdef object _checked_delete_horizon = _api.checked_delete_horizon
cdef object _time_time = _time.time

# ---- layout, from the single field table in kraftwire.records.api
cdef Py_ssize_t BASE_OFFSET_POS = _api.BASE_OFFSET_POS
cdef Py_ssize_t LENGTH_POS = _api.LENGTH_POS
cdef Py_ssize_t PARTITION_LEADER_EPOCH_POS = _api.PARTITION_LEADER_EPOCH_POS
cdef Py_ssize_t MAGIC_POS = _api.MAGIC_POS
cdef Py_ssize_t CRC_POS = _api.CRC_POS
cdef Py_ssize_t ATTRIBUTES_POS = _api.ATTRIBUTES_POS
cdef Py_ssize_t LAST_OFFSET_DELTA_POS = _api.LAST_OFFSET_DELTA_POS
cdef Py_ssize_t BASE_TIMESTAMP_POS = _api.BASE_TIMESTAMP_POS
cdef Py_ssize_t MAX_TIMESTAMP_POS = _api.MAX_TIMESTAMP_POS
cdef Py_ssize_t PRODUCER_ID_POS = _api.PRODUCER_ID_POS
cdef Py_ssize_t PRODUCER_EPOCH_POS = _api.PRODUCER_EPOCH_POS
cdef Py_ssize_t BASE_SEQUENCE_POS = _api.BASE_SEQUENCE_POS
cdef Py_ssize_t RECORD_COUNT_POS = _api.RECORD_COUNT_POS
cdef Py_ssize_t RECORDS_POS = _api.RECORDS_POS
cdef Py_ssize_t LOG_OVERHEAD = _api.LOG_OVERHEAD
cdef Py_ssize_t RECORD_BATCH_OVERHEAD = _api.RECORD_BATCH_OVERHEAD
cdef Py_ssize_t HEADER_SIZE_UP_TO_MAGIC = _api.HEADER_SIZE_UP_TO_MAGIC
cdef Py_ssize_t MIN_BATCH_LENGTH = _api.MIN_BATCH_LENGTH
cdef Py_ssize_t CRC_START = _api.CRC_START
cdef int MAGIC = _api.MAGIC
cdef Py_ssize_t MAX_BATCH_SIZE = _api.MAX_BATCH_SIZE
cdef int MAX_VARINT_BYTES = _api.MAX_VARINT_BYTES
cdef int MAX_VARLONG_BYTES = _api.MAX_VARLONG_BYTES
cdef int64_t MIN_RECORD_BODY = _api.MIN_RECORD_BODY
cdef int COMPRESSION_MASK = _api.COMPRESSION_MASK
cdef int COMPRESSION_NONE = _api.COMPRESSION_NONE
cdef int N_COMPRESSION = len(_api.COMPRESSION_NAMES)
cdef int TIMESTAMP_TYPE_MASK = _api.TIMESTAMP_TYPE_MASK
cdef int TRANSACTIONAL_MASK = _api.TRANSACTIONAL_MASK
cdef int CONTROL_MASK = _api.CONTROL_MASK
cdef int DELETE_HORIZON_MASK = _api.DELETE_HORIZON_MASK
cdef int16_t CONTROL_UNKNOWN = _api.CONTROL_UNKNOWN
cdef tuple COMPRESSION_NAMES = tuple(_api.COMPRESSION_NAMES)
cdef dict COMPRESSION_IDS = dict(_api.COMPRESSION_IDS)
# In the last byte a varint may use 4 payload bits (35 > 32), a varlong 1 bit (70 > 64).
cdef uint8_t VARINT_LAST_BYTE_BAD = 0xF0
cdef uint8_t VARLONG_LAST_BYTE_BAD = 0xFE

# ---- error reasons
cdef object R_BAD_BATCH_LENGTH = _api.REASON_BAD_BATCH_LENGTH
cdef object R_BAD_MAGIC = _api.REASON_BAD_MAGIC
cdef object R_CRC_MISMATCH = _api.REASON_CRC_MISMATCH
cdef object R_UNKNOWN_COMPRESSION = _api.REASON_UNKNOWN_COMPRESSION
cdef object R_BAD_LAST_OFFSET_DELTA = _api.REASON_BAD_LAST_OFFSET_DELTA
cdef object R_RECORD_COUNT_MISMATCH = _api.REASON_RECORD_COUNT_MISMATCH
cdef object R_OFFSET_DELTA_MISMATCH = _api.REASON_OFFSET_DELTA_MISMATCH
cdef object R_VARINT_OVERFLOW = _api.REASON_VARINT_OVERFLOW
cdef object R_RECORD_OVERRUN = _api.REASON_RECORD_OVERRUN
cdef object R_BAD_RECORD_LENGTH = _api.REASON_BAD_RECORD_LENGTH
cdef object R_RECORD_LENGTH_MISMATCH = _api.REASON_RECORD_LENGTH_MISMATCH
cdef object R_BAD_KEY_LENGTH = _api.REASON_BAD_KEY_LENGTH
cdef object R_BAD_VALUE_LENGTH = _api.REASON_BAD_VALUE_LENGTH
cdef object R_BAD_HEADER_COUNT = _api.REASON_BAD_HEADER_COUNT
cdef object R_BAD_HEADER_KEY_LENGTH = _api.REASON_BAD_HEADER_KEY_LENGTH
cdef object R_BAD_HEADER_KEY_ENCODING = _api.REASON_BAD_HEADER_KEY_ENCODING
cdef object R_BAD_HEADER_VALUE_LENGTH = _api.REASON_BAD_HEADER_VALUE_LENGTH
cdef object R_TRAILING_BYTES = _api.REASON_TRAILING_BYTES

DEF I32_MAX = 2147483647
DEF I32_MIN = -2147483648


# ============================================================================ primitives

cdef inline int64_t _rd64(const uint8_t* p) noexcept nogil:
    return <int64_t>(
        (<uint64_t>p[0] << 56) | (<uint64_t>p[1] << 48) | (<uint64_t>p[2] << 40) | (<uint64_t>p[3] << 32)
        | (<uint64_t>p[4] << 24) | (<uint64_t>p[5] << 16) | (<uint64_t>p[6] << 8) | <uint64_t>p[7])

cdef inline uint32_t _rdu32(const uint8_t* p) noexcept nogil:
    return (<uint32_t>p[0] << 24) | (<uint32_t>p[1] << 16) | (<uint32_t>p[2] << 8) | <uint32_t>p[3]

cdef inline int32_t _rd32(const uint8_t* p) noexcept nogil:
    return <int32_t>_rdu32(p)

cdef inline int16_t _rd16(const uint8_t* p) noexcept nogil:
    return <int16_t>((<uint16_t>p[0] << 8) | <uint16_t>p[1])

cdef inline void _wr64(uint8_t* p, int64_t v) noexcept nogil:
    cdef uint64_t u = <uint64_t>v
    cdef int i
    for i in range(8):
        p[i] = <uint8_t>(u >> (56 - 8 * i))

cdef inline void _wr32(uint8_t* p, int32_t v) noexcept nogil:
    cdef uint32_t u = <uint32_t>v
    p[0] = <uint8_t>(u >> 24)
    p[1] = <uint8_t>(u >> 16)
    p[2] = <uint8_t>(u >> 8)
    p[3] = <uint8_t>u

cdef inline void _wr16(uint8_t* p, int16_t v) noexcept nogil:
    cdef uint16_t u = <uint16_t>v
    p[0] = <uint8_t>(u >> 8)
    p[1] = <uint8_t>u


cdef int _fail(object reason, Py_ssize_t pos, Py_ssize_t fixed) except -1:
    raise _CorruptRecordError(reason, pos if fixed < 0 else fixed)


cdef int _varint_slow(const uint8_t* d, Py_ssize_t* pp, Py_ssize_t end, int64_t* out, int max_bytes,
                      uint8_t last_bad, Py_ssize_t fixed) except -1:
    cdef Py_ssize_t start = pp[0]
    cdef Py_ssize_t p = start
    cdef uint64_t raw = 0
    cdef int shift = 0
    cdef int n = 0
    cdef uint8_t b
    while True:
        if p >= end:
            _fail(R_RECORD_OVERRUN, start, fixed)
        b = d[p]
        p += 1
        n += 1
        if n == max_bytes:
            if b & last_bad:
                _fail(R_VARINT_OVERFLOW, start, fixed)
            raw |= (<uint64_t>b) << shift
            break
        raw |= (<uint64_t>(b & 0x7F)) << shift
        if not (b & 0x80):
            break
        shift += 7
    out[0] = <int64_t>((raw >> 1) ^ (<uint64_t>0 - (raw & 1)))
    pp[0] = p
    return 0


cdef inline int _varint(const uint8_t* d, Py_ssize_t* pp, Py_ssize_t end, int64_t* out, Py_ssize_t fixed) except -1:
    """A zig-zag varint (at most 5 bytes) bounded by end."""
    cdef Py_ssize_t p = pp[0]
    cdef uint8_t b
    cdef uint64_t raw
    if p < end:
        b = d[p]
        if b < 0x80:
            out[0] = <int64_t>((b >> 1) ^ (0 - (b & 1)))
            pp[0] = p + 1
            return 0
        if p + 1 < end and d[p + 1] < 0x80:  # two bytes: lengths of 64..8191, small deltas
            raw = (<uint64_t>(b & 0x7F)) | (<uint64_t>d[p + 1] << 7)
            out[0] = <int64_t>((raw >> 1) ^ (<uint64_t>0 - (raw & 1)))
            pp[0] = p + 2
            return 0
    return _varint_slow(d, pp, end, out, MAX_VARINT_BYTES, VARINT_LAST_BYTE_BAD, fixed)


cdef inline int _varlong(const uint8_t* d, Py_ssize_t* pp, Py_ssize_t end, int64_t* out, Py_ssize_t fixed) except -1:
    cdef Py_ssize_t p = pp[0]
    cdef uint8_t b
    cdef uint64_t raw
    if p < end:
        b = d[p]
        if b < 0x80:
            out[0] = <int64_t>((b >> 1) ^ (0 - (b & 1)))
            pp[0] = p + 1
            return 0
        if p + 1 < end and d[p + 1] < 0x80:  # two bytes: lengths of 64..8191, small deltas
            raw = (<uint64_t>(b & 0x7F)) | (<uint64_t>d[p + 1] << 7)
            out[0] = <int64_t>((raw >> 1) ^ (<uint64_t>0 - (raw & 1)))
            pp[0] = p + 2
            return 0
    return _varint_slow(d, pp, end, out, MAX_VARLONG_BYTES, VARLONG_LAST_BYTE_BAD, fixed)


cdef inline int64_t _varint_unchecked(const uint8_t* d, Py_ssize_t* pp) noexcept nogil:
    """Decode a varint already validated by _parse_record."""
    cdef Py_ssize_t p = pp[0]
    cdef uint64_t raw = 0
    cdef int shift = 0
    cdef uint8_t b
    while True:
        b = d[p]
        p += 1
        raw |= (<uint64_t>(b & 0x7F)) << shift
        if not (b & 0x80):
            break
        shift += 7
    pp[0] = p
    return <int64_t>((raw >> 1) ^ (<uint64_t>0 - (raw & 1)))


cdef bint _utf8_valid(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Exactly what CPython's strict UTF-8 decoder accepts (no surrogates, no overlongs, <= U+10FFFF)."""
    cdef Py_ssize_t i = 0
    cdef uint8_t c, c1
    while i < n:
        c = s[i]
        if c < 0x80:
            i += 1
            continue
        if c < 0xC2:
            return False
        if c < 0xE0:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return False
            i += 2
            continue
        if c < 0xF0:
            if i + 2 >= n:
                return False
            c1 = s[i + 1]
            if c == 0xE0:
                if c1 < 0xA0 or c1 > 0xBF:
                    return False
            elif c == 0xED:
                if c1 < 0x80 or c1 > 0x9F:
                    return False
            elif (c1 & 0xC0) != 0x80:
                return False
            if (s[i + 2] & 0xC0) != 0x80:
                return False
            i += 3
            continue
        if c < 0xF5:
            if i + 3 >= n:
                return False
            c1 = s[i + 1]
            if c == 0xF0:
                if c1 < 0x90 or c1 > 0xBF:
                    return False
            elif c == 0xF4:
                if c1 < 0x80 or c1 > 0x8F:
                    return False
            elif (c1 & 0xC0) != 0x80:
                return False
            if (s[i + 2] & 0xC0) != 0x80 or (s[i + 3] & 0xC0) != 0x80:
                return False
            i += 4
            continue
        return False
    return True


# ============================================================================ record parsing

cdef struct RecSpan:
    int64_t ts_delta
    Py_ssize_t key_start
    int64_t key_len        # -1: null
    Py_ssize_t value_start
    int64_t value_len      # -1: null
    Py_ssize_t headers_start
    int64_t header_count
    Py_ssize_t header_bytes  # key + value bytes of all headers


cdef int _parse_record(const uint8_t* d, Py_ssize_t* pp, Py_ssize_t end, int64_t index, Py_ssize_t fixed,
                       RecSpan* s) except -1:
    """Check record number *index* at pp[0] (which is < end) completely; fill *s*; advance pp."""
    cdef Py_ssize_t p = pp[0]
    cdef Py_ssize_t rec_start = p
    cdef Py_ssize_t body_end, fpos
    cdef int64_t length, v, n
    cdef int64_t h
    _varint(d, &p, end, &length, fixed)
    if length < MIN_RECORD_BODY:
        _fail(R_BAD_RECORD_LENGTH, rec_start, fixed)
    if length > end - p:
        _fail(R_RECORD_OVERRUN, rec_start, fixed)
    body_end = p + <Py_ssize_t>length
    p += 1  # attributes: unused
    _varlong(d, &p, body_end, &s.ts_delta, fixed)
    fpos = p
    _varint(d, &p, body_end, &v, fixed)
    if v != index:
        _fail(R_OFFSET_DELTA_MISMATCH, fpos, fixed)
    # key
    fpos = p
    _varint(d, &p, body_end, &n, fixed)
    if n < 0:
        if n != -1:
            _fail(R_BAD_KEY_LENGTH, fpos, fixed)
    elif n > body_end - p:
        _fail(R_RECORD_OVERRUN, fpos, fixed)
    s.key_start = p
    s.key_len = n
    if n > 0:
        p += <Py_ssize_t>n
    # value
    fpos = p
    _varint(d, &p, body_end, &n, fixed)
    if n < 0:
        if n != -1:
            _fail(R_BAD_VALUE_LENGTH, fpos, fixed)
    elif n > body_end - p:
        _fail(R_RECORD_OVERRUN, fpos, fixed)
    s.value_start = p
    s.value_len = n
    if n > 0:
        p += <Py_ssize_t>n
    # headers
    fpos = p
    _varint(d, &p, body_end, &s.header_count, fixed)
    if s.header_count < 0:
        _fail(R_BAD_HEADER_COUNT, fpos, fixed)
    s.headers_start = p
    s.header_bytes = 0
    h = 0
    while h < s.header_count:
        fpos = p
        _varint(d, &p, body_end, &n, fixed)
        if n < 0:
            _fail(R_BAD_HEADER_KEY_LENGTH, fpos, fixed)
        if n > body_end - p:
            _fail(R_RECORD_OVERRUN, fpos, fixed)
        if not _utf8_valid(d + p, <Py_ssize_t>n):
            _fail(R_BAD_HEADER_KEY_ENCODING, fpos, fixed)
        p += <Py_ssize_t>n
        s.header_bytes += <Py_ssize_t>n
        fpos = p
        _varint(d, &p, body_end, &n, fixed)
        if n < 0:
            if n != -1:
                _fail(R_BAD_HEADER_VALUE_LENGTH, fpos, fixed)
        elif n > body_end - p:
            _fail(R_RECORD_OVERRUN, fpos, fixed)
        else:
            p += <Py_ssize_t>n
            s.header_bytes += <Py_ssize_t>n
        h += 1
    if p != body_end:
        _fail(R_RECORD_LENGTH_MISMATCH, rec_start, fixed)
    pp[0] = p
    return 0


cdef list _make_headers(const uint8_t* d, Py_ssize_t p, int64_t count, list key_cache):
    """Materialise headers already validated by _parse_record (so *count* is backed by real bytes).

    Header keys repeat from record to record: *key_cache* holds the previous record's key strs by
    position, reused when the bytes match (saves a str allocation and UTF-8 decode per header).
    """
    cdef list out = PyList_New(<Py_ssize_t>count)
    cdef int64_t i, n
    cdef object k, v
    cdef const char* cached
    cdef Py_ssize_t cached_len
    for i in range(count):
        n = _varint_unchecked(d, &p)
        k = None
        if i < len(key_cache):
            cached = PyUnicode_AsUTF8AndSize(key_cache[i], &cached_len)
            if cached_len == n and memcmp(cached, d + p, <size_t>n) == 0:
                k = key_cache[i]
        if k is None:
            k = PyUnicode_DecodeUTF8(<const char*>(d + p), <Py_ssize_t>n, NULL)
            if i < len(key_cache):
                key_cache[i] = k
            else:
                key_cache.append(k)
        p += <Py_ssize_t>n
        n = _varint_unchecked(d, &p)
        if n < 0:
            v = None
        else:
            v = PyBytes_FromStringAndSize(<const char*>(d + p), <Py_ssize_t>n)
            p += <Py_ssize_t>n
        pair = (k, v)
        Py_INCREF(pair)
        PyList_SET_ITEM(out, <Py_ssize_t>i, pair)
    return out


cdef int _walk_records(const uint8_t* d, Py_ssize_t p, Py_ssize_t end, int64_t count, Py_ssize_t fixed) except -1:
    """Validate all records of a batch without building objects."""
    cdef RecSpan s
    cdef int64_t i
    for i in range(count):
        if p >= end:
            _fail(R_RECORD_COUNT_MISMATCH, p, fixed)
        _parse_record(d, &p, end, i, fixed, &s)
    if p != end:
        _fail(R_TRAILING_BYTES, p, fixed)
    return 0


# ============================================================================ buffers and framing

@cython.final
@cython.no_gc
cdef class _Source:
    """Holds the input buffer exported for the lifetime of every batch read from it. Not tracked by the cycle
    collector: its one object field is a memoryview of the caller's buffer, which cannot lead back to it; tracked,
    the collector met that memoryview in a garbage cycle of batches and tried to clear it while its buffer was still
    exported here (an unraisable BufferError, "memoryview has 1 exported buffer")."""
    cdef Py_buffer pybuf
    cdef bint has_buf
    cdef object view
    cdef const uint8_t* data
    cdef Py_ssize_t size

    def __dealloc__(self):
        if self.has_buf:
            PyBuffer_Release(&self.pybuf)
            self.has_buf = False


cdef object _as_view(object buf):
    cdef object mv = memoryview(buf)
    if mv.ndim != 1 or mv.format != "B":
        mv = mv.cast("B")
    return mv


cdef inline int _check_made(object obj) except -1:
    """Objects made with Type.__new__ instead of by the codec have no buffer: refuse, never crash."""
    if obj is None:
        raise TypeError("this object was not created by the codec")
    return 0


cdef _Source _source(object buf, bint writable=False):
    cdef _Source src = _Source.__new__(_Source)
    src.view = _as_view(buf)
    if writable and src.view.readonly:
        raise TypeError("buffer is read-only")
    PyObject_GetBuffer(src.view, &src.pybuf, PyBUF_SIMPLE)
    src.has_buf = True
    src.data = <const uint8_t*>src.pybuf.buf
    src.size = src.pybuf.len
    return src


cdef Py_ssize_t _check_max_batch_size(object max_batch_size) except -1:
    if max_batch_size < RECORD_BATCH_OVERHEAD or max_batch_size > I32_MAX:
        raise ValueError(f"max_batch_size must be in [{RECORD_BATCH_OVERHEAD}, {I32_MAX}], got {max_batch_size}")
    return max_batch_size


cdef Py_ssize_t _frame(const uint8_t* d, Py_ssize_t pos, Py_ssize_t n, Py_ssize_t max_batch_size) except -1:
    """Size of the whole batch at pos, 0 if incomplete; raises on corrupt framing."""
    cdef Py_ssize_t remaining = n - pos
    cdef int64_t length
    if remaining < LOG_OVERHEAD:
        return 0
    length = _rd32(d + pos + LENGTH_POS)
    if length < MIN_BATCH_LENGTH or length > max_batch_size - LOG_OVERHEAD:
        _fail(R_BAD_BATCH_LENGTH, pos + LENGTH_POS, -1)
    if remaining < HEADER_SIZE_UP_TO_MAGIC:
        return 0
    if d[pos + MAGIC_POS] != MAGIC:
        _fail(R_BAD_MAGIC, pos + MAGIC_POS, -1)
    if remaining < length + LOG_OVERHEAD:
        return 0
    return <Py_ssize_t>length + LOG_OVERHEAD


cdef inline uint32_t _crc(const uint8_t* p, Py_ssize_t n) except? 0xFFFFFFFF:
    return _crc32c(PyMemoryView_FromMemory(<char*>p, n, PyBUF_READ))


cdef int _check_header(const uint8_t* d, Py_ssize_t pos, Py_ssize_t size, bint validate) except -1:
    cdef const uint8_t* b = d + pos
    cdef int32_t lod
    if validate and _crc(b + CRC_START, size - CRC_START) != _rdu32(b + CRC_POS):
        _fail(R_CRC_MISMATCH, pos + CRC_POS, -1)
    if (_rd16(b + ATTRIBUTES_POS) & COMPRESSION_MASK) >= N_COMPRESSION:
        _fail(R_UNKNOWN_COMPRESSION, pos + ATTRIBUTES_POS, -1)
    lod = _rd32(b + LAST_OFFSET_DELTA_POS)
    if lod < 0:
        _fail(R_BAD_LAST_OFFSET_DELTA, pos + LAST_OFFSET_DELTA_POS, -1)
    if <int64_t>_rd32(b + RECORD_COUNT_POS) != <int64_t>lod + 1:
        _fail(R_RECORD_COUNT_MISMATCH, pos + RECORD_COUNT_POS, -1)
    return 0


cdef object _decompressed(const uint8_t* d, Py_ssize_t pos, Py_ssize_t size, int codec, Py_ssize_t max_batch_size):
    cdef Py_ssize_t start = pos + RECORDS_POS
    return _decompress(codec, PyMemoryView_FromMemory(<char*>(d + start), size - RECORDS_POS, PyBUF_READ),
                       max_batch_size, start)


# ============================================================================ records and batches

cdef extern from *:
    """
    #include <structmember.h>
    /* Record's attributes as plain member descriptors (T_OBJECT_EX, read-only) instead of Cython's
       getset properties: CPython specialises attribute loads of such slots (LOAD_ATTR_SLOT), which
       measured ~2x faster for `r.offset, r.timestamp, r.key, r.value, r.headers` - the loop every
       consumer of read_batches runs. */
    static PyMemberDef kw_record_members[] = {
        {"offset", T_OBJECT_EX, 0, READONLY, "absolute offset of the record"},
        {"timestamp", T_OBJECT_EX, 0, READONLY, "timestamp in ms (MaxTimestamp for LogAppendTime batches)"},
        {"key", T_OBJECT_EX, 0, READONLY, "key bytes or None"},
        {"value", T_OBJECT_EX, 0, READONLY, "value bytes or None"},
        {"headers", T_OBJECT_EX, 0, READONLY, "list of (str, bytes | None)"},
        {NULL, 0, 0, 0, NULL}
    };
    static int kw_install_record_members(PyObject *type, Py_ssize_t *offsets) {
        PyTypeObject *tp = (PyTypeObject *)type;
        for (int i = 0; kw_record_members[i].name != NULL; i++) {
            kw_record_members[i].offset = offsets[i];
            PyObject *descr = PyDescr_NewMember(tp, &kw_record_members[i]);
            if (descr == NULL) return -1;
            int rc = PyDict_SetItemString(tp->tp_dict, kw_record_members[i].name, descr);
            Py_DECREF(descr);
            if (rc < 0) return -1;
        }
        PyType_Modified(tp);
        return 0;
    }
    """
    int kw_install_record_members(object type, Py_ssize_t* offsets) except -1

cdef class _RecordIterator

@cython.final
@cython.freelist(512)
@cython.no_gc
cdef class Record:
    """One record: ``offset, timestamp, key, value, headers`` (headers: list of ``(str, bytes | None)``).

    Unpacks and compares like the 5-tuple (and like the pure-Python twin's NamedTuple).
    Not tracked by the cyclic GC (measured: ~10% of decode time): its fields are bytes, None and
    a list of (str, bytes) pairs, which cannot form a cycle unless a caller builds one on purpose.
    The read-only attributes are member descriptors installed below (not Cython properties).
    """
    cdef object offset
    cdef object timestamp
    cdef object key
    cdef object value
    cdef object headers

    def __init__(self, offset, timestamp, key, value, headers):
        self.offset = offset
        self.timestamp = timestamp
        self.key = key
        self.value = value
        self.headers = headers

    def _astuple(self):
        return (self.offset, self.timestamp, self.key, self.value, self.headers)

    def __iter__(self):
        return iter(self._astuple())

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return self._astuple()[i]

    def __eq__(self, other):
        if isinstance(other, (Record, tuple)):
            return self._astuple() == tuple(other)
        return NotImplemented

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    __hash__ = None

    def __reduce__(self):
        return (Record, self._astuple())

    def __repr__(self):
        return (f"Record(offset={self.offset!r}, timestamp={self.timestamp!r}, key={self.key!r}, "
                f"value={self.value!r}, headers={self.headers!r})")


cdef _install_record_members():
    # Find each field's offset in the object by planting a unique sentinel in it (Cython will not
    # take the address of an object attribute, and its C struct name is an implementation detail).
    cdef list sentinels = [object() for _ in range(5)]
    cdef Record probe = Record.__new__(Record)
    probe.offset, probe.timestamp, probe.key, probe.value, probe.headers = sentinels
    cdef PyObject** words = <PyObject**><void*>probe
    cdef Py_ssize_t nwords = Record.__basicsize__ // sizeof(PyObject*)
    cdef Py_ssize_t offsets[5]
    cdef Py_ssize_t i, j
    for i in range(5):
        offsets[i] = -1
        for j in range(nwords):
            if words[j] == <PyObject*>sentinels[i]:
                offsets[i] = j * <Py_ssize_t>sizeof(PyObject*)
        if offsets[i] < 0:
            raise ImportError("kraftwire_ext._records: could not lay out Record")
    kw_install_record_members(Record, offsets)


_install_record_members()


@cython.final
cdef class RecordBatch:
    """One RecordBatch v2 (header fields as attributes); iterate it for its Records."""
    cdef readonly int64_t base_offset
    cdef readonly int32_t length
    cdef readonly int32_t partition_leader_epoch
    cdef readonly int magic
    cdef readonly uint32_t crc
    cdef readonly int attributes
    cdef readonly int32_t last_offset_delta
    cdef readonly int64_t base_timestamp
    cdef readonly int64_t max_timestamp
    cdef readonly int64_t producer_id
    cdef readonly int producer_epoch
    cdef readonly int32_t base_sequence
    cdef readonly int32_t record_count
    cdef readonly int64_t last_offset
    cdef readonly Py_ssize_t position
    cdef readonly Py_ssize_t size_in_bytes
    cdef _Source _src
    cdef Py_ssize_t _max_batch_size

    @property
    def buffer(self):
        """The batch's bytes (a view into the input)."""
        _check_made(self._src)
        return self._src.view[self.position:self.position + self.size_in_bytes]

    @property
    def compression(self):
        return COMPRESSION_NAMES[self.attributes & COMPRESSION_MASK]

    @property
    def is_control(self):
        return bool(self.attributes & CONTROL_MASK)

    @property
    def is_transactional(self):
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def timestamp_type(self):
        return 1 if self.attributes & TIMESTAMP_TYPE_MASK else 0

    @property
    def next_offset(self):
        return <int64_t>(<uint64_t>self.last_offset + 1)

    @property
    def has_delete_horizon(self):
        return bool(self.attributes & DELETE_HORIZON_MASK)

    @property
    def delete_horizon_ms(self):
        """The log cleaner's delete horizon (KIP-534): BaseTimestamp when the Attributes bit says so, else None."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_MASK else None

    # No __len__ on purpose: list(batch) would preallocate from the (untrusted) record count.

    def __iter__(self):
        _check_made(self._src)
        cdef _RecordIterator it = _RecordIterator.__new__(_RecordIterator)
        it.batch = self
        return it

    def records(self):
        return list(self)

    def __repr__(self):
        return (
            f"RecordBatch(base_offset={self.base_offset}, last_offset={self.last_offset}, "
            f"partition_leader_epoch={self.partition_leader_epoch}, record_count={self.record_count}, "
            f"compression={self.compression!r}, is_control={self.is_control}, position={self.position}, "
            f"size_in_bytes={self.size_in_bytes})"
        )


cdef RecordBatch _make_batch(_Source src, Py_ssize_t pos, Py_ssize_t size, Py_ssize_t max_batch_size):
    cdef RecordBatch b = RecordBatch.__new__(RecordBatch)
    cdef const uint8_t* h = src.data + pos
    b._src = src
    b._max_batch_size = max_batch_size
    b.position = pos
    b.size_in_bytes = size
    b.base_offset = _rd64(h + BASE_OFFSET_POS)
    b.length = _rd32(h + LENGTH_POS)
    b.partition_leader_epoch = _rd32(h + PARTITION_LEADER_EPOCH_POS)
    b.magic = <int8_t>h[MAGIC_POS]
    b.crc = _rdu32(h + CRC_POS)
    b.attributes = _rd16(h + ATTRIBUTES_POS)
    b.last_offset_delta = _rd32(h + LAST_OFFSET_DELTA_POS)
    b.base_timestamp = _rd64(h + BASE_TIMESTAMP_POS)
    b.max_timestamp = _rd64(h + MAX_TIMESTAMP_POS)
    b.producer_id = _rd64(h + PRODUCER_ID_POS)
    b.producer_epoch = _rd16(h + PRODUCER_EPOCH_POS)
    b.base_sequence = _rd32(h + BASE_SEQUENCE_POS)
    b.record_count = _rd32(h + RECORD_COUNT_POS)
    b.last_offset = <int64_t>(<uint64_t>b.base_offset + <uint64_t>b.last_offset_delta)
    return b


@cython.final
cdef class _RecordIterator:
    cdef RecordBatch batch
    cdef object owner          # keeps the decompressed bytes alive
    cdef const uint8_t* d
    cdef Py_ssize_t p
    cdef Py_ssize_t end
    cdef Py_ssize_t fixed
    cdef int64_t index
    cdef int64_t count
    cdef int64_t base_offset
    cdef int64_t base_ts
    cdef int64_t append_ts
    cdef bint log_append
    cdef int state            # 0 not started, 1 running, 2 finished
    cdef object ts_obj        # the previous record's timestamp as an int: records often share one
    cdef list key_cache       # header key strs of earlier records, by position
    cdef int64_t ts_value

    def __iter__(self):
        return self

    cdef int _start(self) except -1:
        cdef RecordBatch b = self.batch
        _check_made(b)
        _check_made(b._src)
        cdef int codec = b.attributes & COMPRESSION_MASK
        cdef object data
        self.state = 2  # until set up successfully
        if codec == COMPRESSION_NONE:
            self.d = b._src.data
            self.p = b.position + RECORDS_POS
            self.end = b.position + b.size_in_bytes
            self.fixed = -1
        else:
            data = _decompressed(b._src.data, b.position, b.size_in_bytes, codec, b._max_batch_size)
            self.owner = data
            self.d = <const uint8_t*>PyBytes_AS_STRING(data)
            self.p = 0
            self.end = PyBytes_GET_SIZE(data)
            self.fixed = b.position + RECORDS_POS
        self.index = 0
        self.key_cache = []
        self.count = b.record_count
        self.base_offset = b.base_offset
        self.base_ts = b.base_timestamp
        self.log_append = (b.attributes & TIMESTAMP_TYPE_MASK) != 0
        self.append_ts = b.max_timestamp
        self.state = 1
        return 0

    def __next__(self):
        cdef RecSpan s
        cdef Record r
        cdef const uint8_t* d
        cdef int64_t ts
        if self.state != 1:
            if self.state == 0:
                self._start()
            else:
                raise StopIteration
        d = self.d
        if self.index >= self.count:
            self.state = 2
            if self.p != self.end:
                _fail(R_TRAILING_BYTES, self.p, self.fixed)
            raise StopIteration
        if self.p >= self.end:
            self.state = 2
            _fail(R_RECORD_COUNT_MISMATCH, self.p, self.fixed)
        self.state = 2  # stays finished if the record is corrupt
        _parse_record(d, &self.p, self.end, self.index, self.fixed, &s)
        self.state = 1
        r = Record.__new__(Record)
        r.offset = <int64_t>(<uint64_t>self.base_offset + <uint64_t>self.index)
        ts = self.append_ts if self.log_append else <int64_t>(<uint64_t>self.base_ts + <uint64_t>s.ts_delta)
        if self.ts_obj is None or ts != self.ts_value:
            self.ts_obj = ts
            self.ts_value = ts
        r.timestamp = self.ts_obj
        if s.key_len >= 0:
            r.key = PyBytes_FromStringAndSize(<const char*>(d + s.key_start), <Py_ssize_t>s.key_len)
        else:
            r.key = None
        if s.value_len >= 0:
            r.value = PyBytes_FromStringAndSize(<const char*>(d + s.value_start), <Py_ssize_t>s.value_len)
        else:
            r.value = None
        if s.header_count == 0:
            r.headers = PyList_New(0)
        else:
            r.headers = _make_headers(d, s.headers_start, s.header_count, self.key_cache)
        self.index += 1
        return r


@cython.final
cdef class BatchReader:
    """Iterator over the batches of a buffer (see read_batches).

    ``valid_bytes``: bytes of the whole batches returned so far. ``incomplete``: set once the
    iterator is exhausted, true when a partial batch trails the last whole one.
    """
    cdef _Source _src
    cdef bint _validate
    cdef Py_ssize_t _max
    cdef public Py_ssize_t valid_bytes
    cdef public bint incomplete

    def __init__(self, buf, validate=True, max_batch_size=_api.MAX_BATCH_SIZE):
        self._max = _check_max_batch_size(max_batch_size)
        self._src = _source(buf)
        self._validate = bool(validate)
        self.valid_bytes = 0
        self.incomplete = False

    def __iter__(self):
        return self

    def __next__(self):
        cdef _Source src = self._src
        _check_made(src)
        cdef Py_ssize_t pos = self.valid_bytes
        cdef Py_ssize_t size = _frame(src.data, pos, src.size, self._max)
        if size == 0:
            self.incomplete = pos < src.size
            raise StopIteration
        _check_header(src.data, pos, size, self._validate)
        self.valid_bytes = pos + size
        return _make_batch(src, pos, size, self._max)


def read_batches(buf, validate=True, max_batch_size=_api.MAX_BATCH_SIZE):
    """Iterate the RecordBatches in buf; a trailing partial batch ends the iteration quietly."""
    return BatchReader(buf, validate, max_batch_size)


def whole_batches_size(buf, max_batch_size=_api.MAX_BATCH_SIZE):
    """Bytes of the whole batches at the start of buf, checking framing (length, magic) only."""
    cdef Py_ssize_t mbs = _check_max_batch_size(max_batch_size)
    cdef _Source src = _source(buf)
    cdef Py_ssize_t pos = 0, size
    while True:
        size = _frame(src.data, pos, src.size, mbs)
        if size == 0:
            return pos
        pos += size


def validate_batches(buf, max_batch_size=_api.MAX_BATCH_SIZE, *, check_records=True, stop_at_corruption=False,
                     headers=False):
    """Check every whole batch: framing, magic, CRC-32C, header consistency and (with
    check_records) every record; no per-record Python objects (with headers, one RecordBatch per
    batch in .headers). See pyimpl.validate_batches."""
    cdef Py_ssize_t mbs = _check_max_batch_size(max_batch_size)
    cdef _Source src = _source(buf)
    cdef const uint8_t* d = src.data
    cdef Py_ssize_t n = src.size
    cdef Py_ssize_t pos = 0, size
    cdef list batches = []
    cdef list views = [] if headers else None
    cdef int64_t record_count = 0, first_offset = -1, last_offset = -1, max_ts = -1, base, last, ts
    cdef int32_t last_epoch = -1, epoch, count
    cdef bint incomplete = False, walk = bool(check_records)
    cdef object error = None, data
    cdef int codec
    try:
        while True:
            size = _frame(d, pos, n, mbs)
            if size == 0:
                incomplete = pos < n
                break
            _check_header(d, pos, size, True)
            count = _rd32(d + pos + RECORD_COUNT_POS)
            if walk:
                codec = _rd16(d + pos + ATTRIBUTES_POS) & COMPRESSION_MASK
                if codec == COMPRESSION_NONE:
                    _walk_records(d, pos + RECORDS_POS, pos + size, count, -1)
                else:
                    data = _decompressed(d, pos, size, codec, mbs)
                    _walk_records(<const uint8_t*>PyBytes_AS_STRING(data), 0, PyBytes_GET_SIZE(data), count,
                                  pos + RECORDS_POS)
            base = _rd64(d + pos + BASE_OFFSET_POS)
            last = <int64_t>(<uint64_t>base + <uint64_t>_rd32(d + pos + LAST_OFFSET_DELTA_POS))
            epoch = _rd32(d + pos + PARTITION_LEADER_EPOCH_POS)
            ts = _rd64(d + pos + MAX_TIMESTAMP_POS)
            if not batches:
                first_offset = base
                max_ts = ts
            elif ts > max_ts:
                max_ts = ts
            batches.append(_BatchInfo(base, last, epoch, pos, size))
            if views is not None:
                views.append(_make_batch(src, pos, size, mbs))
            record_count += count
            last_offset = last
            last_epoch = epoch
            pos += size
    except _CorruptRecordError as exc:
        if not stop_at_corruption:
            raise
        error = exc
    return _ValidationResult(pos, len(batches), record_count, first_offset, last_offset, last_epoch, max_ts,
                             batches, incomplete, error, views)


def set_base_offset_and_epoch(buf, position, base_offset, partition_leader_epoch):
    """Stamp BaseOffset and PartitionLeaderEpoch of the batch at position in a writable buffer."""
    cdef _Source src = _source(buf, True)
    if position < 0 or position + RECORD_BATCH_OVERHEAD > src.size:
        raise ValueError(f"no batch header at position {position}")
    cdef Py_ssize_t at = position
    cdef int64_t bo
    cdef int32_t ep
    try:
        bo = base_offset
        ep = partition_leader_epoch
    except OverflowError:
        raise OverflowError("base offset or partition leader epoch out of range") from None
    cdef uint8_t* w = <uint8_t*>src.data
    _wr64(w + at + BASE_OFFSET_POS, bo)
    _wr32(w + at + PARTITION_LEADER_EPOCH_POS, ep)


def rebase_batches(buf, base_offset, partition_leader_epoch, max_batch_size=_api.MAX_BATCH_SIZE, *, batches=None):
    """A copy of the whole batches in buf re-based to consecutive offsets from base_offset and
    stamped with partition_leader_epoch. Checks framing and headers (not the CRC); a trailing
    partial batch is a ValueError. With batches (validate_batches' report of exactly buf) the
    headers are not read again: each batch is stamped at its reported position."""
    cdef Py_ssize_t mbs = _check_max_batch_size(max_batch_size)
    cdef int64_t next_offset
    cdef int32_t ep
    try:
        next_offset = base_offset
        ep = partition_leader_epoch
    except OverflowError:
        raise OverflowError("base offset or partition leader epoch out of range") from None
    cdef _Source src = _source(buf)
    cdef Py_ssize_t n = src.size, pos = 0, size
    cdef bytes out = PyBytes_FromStringAndSize(<const char*>src.data, n)
    cdef uint8_t* w = <uint8_t*>PyBytes_AS_STRING(out)
    if batches is not None:
        return _rebase_reported(out, w, n, batches, next_offset, ep)
    while True:
        size = _frame(src.data, pos, n, mbs)
        if size == 0:
            break
        _check_header(src.data, pos, size, False)
        _wr64(w + pos + BASE_OFFSET_POS, next_offset)
        _wr32(w + pos + PARTITION_LEADER_EPOCH_POS, ep)
        next_offset = <int64_t>(<uint64_t>next_offset + <uint64_t>_rd32(src.data + pos + LAST_OFFSET_DELTA_POS) + 1)
        pos += size
    if pos != n:
        raise ValueError(f"incomplete batch at byte {pos}")
    return out


cdef bytes _rebase_reported(bytes out, uint8_t* w, Py_ssize_t n, object batches, int64_t next_offset, int32_t ep):
    """rebase_batches over validate_batches' report: the reported batches must tile out exactly (a report
    of other bytes is a ValueError, never a write out of bounds)."""
    cdef Py_ssize_t expected = 0, pos, size
    cdef int64_t delta
    for info in batches:
        pos, size = info.position, info.size
        delta = <int64_t>info.last_offset - <int64_t>info.base_offset
        if pos != expected or size < RECORD_BATCH_OVERHEAD or pos + size > n or delta < 0:
            raise ValueError(f"batch report does not match the buffer at byte {pos}")
        _wr64(w + pos + BASE_OFFSET_POS, next_offset)
        _wr32(w + pos + PARTITION_LEADER_EPOCH_POS, ep)
        next_offset = <int64_t>(<uint64_t>next_offset + <uint64_t>delta + 1)
        expected = pos + size
    if expected != n:
        raise ValueError(f"incomplete batch at byte {expected}")
    return out


# ============================================================================ columnar decode

cdef struct GBuf:
    # A growable buffer that *is* a bytes object: growing uses _PyBytes_Resize (realloc, which for
    # big blocks remaps instead of copying) and finishing hands the object over without a copy.
    # Measured: copying a fresh 1 MB result cost more (page faults on new memory) than the decode.
    PyObject* obj
    char* data
    Py_ssize_t len
    Py_ssize_t cap


cdef int _gb_reserve(GBuf* g, Py_ssize_t extra) except -1:
    cdef Py_ssize_t need = g.len + extra
    cdef Py_ssize_t cap
    cdef object o
    if need <= g.cap:
        return 0
    cap = g.cap * 2 if g.cap else 256
    if cap < need:
        cap = need
    if g.obj == NULL:
        o = PyBytes_FromStringAndSize(NULL, cap)
        Py_INCREF(o)
        g.obj = <PyObject*>o
    else:
        _PyBytes_Resize(&g.obj, cap)  # on failure: g.obj = NULL, MemoryError raised
    g.data = PyBytes_AS_STRING(<object>g.obj)
    g.cap = cap
    return 0


cdef bytes _gb_take(GBuf* g):
    """The buffer's bytes (exact length), without copying; the GBuf is empty afterwards."""
    cdef bytes out
    if g.obj == NULL:
        return b""
    _PyBytes_Resize(&g.obj, g.len)
    out = <bytes>g.obj
    Py_XDECREF(g.obj)
    g.obj = NULL
    g.data = NULL
    g.len = g.cap = 0
    return out


cdef void _gb_free(GBuf* g) noexcept:
    Py_XDECREF(g.obj)
    g.obj = NULL
    g.data = NULL
    g.len = g.cap = 0


cdef inline int _gb_put(GBuf* g, const void* src, Py_ssize_t n) except -1:
    if g.len + n > g.cap:
        _gb_reserve(g, n)
    memcpy(g.data + g.len, src, n)
    g.len += n
    return 0


cdef inline int _gb_i64(GBuf* g, int64_t v) except -1:
    return _gb_put(g, &v, 8)


cdef inline int _gb_i32(GBuf* g, int32_t v) except -1:
    return _gb_put(g, &v, 4)


cdef inline int _gb_u8(GBuf* g, uint8_t v) except -1:
    if g.len + 1 > g.cap:
        _gb_reserve(g, 1)
    g.data[g.len] = <char>v
    g.len += 1
    return 0


cdef inline int _bit(GBuf* g, Py_ssize_t i, bint v) except -1:
    """Set bit i of a bitmap grown one bit at a time (LSB first)."""
    if (i & 7) == 0:
        _gb_u8(g, 0)
    if v:
        g.data[i >> 3] |= <char>(1 << (i & 7))
    return 0


DEF NBUF = 20  # 19 used

cdef int _columns_records(GBuf* g, const uint8_t* d, Py_ssize_t p, Py_ssize_t end, int64_t count, Py_ssize_t fixed,
                          int64_t base_offset, int64_t base_ts, bint log_append, int64_t append_ts,
                          int32_t epoch, uint8_t ts_type, bint control, Py_ssize_t* nrows, Py_ssize_t* nheaders) except -1:
    # g[0] offset, 1 timestamp, 2 ts_type, 3 key_valid, 4 key_offs, 5 key_data, 6 val_valid, 7 val_offs,
    # 8 val_data, 9 hdr_offs, 10 hk_offs, 11 hk_data, 12 hv_valid, 13 hv_offs, 14 hv_data, 15 epoch, 16 base, 17 control,
    # 18 control type
    cdef RecSpan s
    cdef int64_t i, h, n
    cdef Py_ssize_t row = nrows[0], hrow = nheaders[0], q, region = end - p
    cdef int16_t ctype
    cdef Py_ssize_t est = region // 7 + 1
    if est > count:
        est = <Py_ssize_t>count
    _gb_reserve(&g[0], est * 8)
    _gb_reserve(&g[1], est * 8)
    _gb_reserve(&g[4], est * 4)
    _gb_reserve(&g[7], est * 4)
    _gb_reserve(&g[9], est * 4)
    _gb_reserve(&g[15], est * 4)
    _gb_reserve(&g[16], est * 8)
    _gb_reserve(&g[2], est)
    _gb_reserve(&g[18], est * 2)
    _gb_reserve(&g[3], est // 8 + 2)
    _gb_reserve(&g[6], est // 8 + 2)
    _gb_reserve(&g[17], est // 8 + 2)
    _gb_reserve(&g[5], region)  # keys and values fit in the bytes they came from
    _gb_reserve(&g[8], region)
    for i in range(count):
        if p >= end:
            _fail(R_RECORD_COUNT_MISMATCH, p, fixed)
        _parse_record(d, &p, end, i, fixed, &s)
        _gb_i64(&g[0], <int64_t>(<uint64_t>base_offset + <uint64_t>i))
        _gb_i64(&g[1], append_ts if log_append else <int64_t>(<uint64_t>base_ts + <uint64_t>s.ts_delta))
        _gb_u8(&g[2], ts_type)
        _bit(&g[3], row, s.key_len >= 0)
        if s.key_len > 0:
            _gb_put(&g[5], d + s.key_start, <Py_ssize_t>s.key_len)
        if g[5].len > I32_MAX:
            raise ValueError("columnar decode: more than 2 GiB of keys; decode fewer batches at a time")
        _gb_i32(&g[4], <int32_t>g[5].len)
        _bit(&g[6], row, s.value_len >= 0)
        if s.value_len > 0:
            _gb_put(&g[8], d + s.value_start, <Py_ssize_t>s.value_len)
        if g[8].len > I32_MAX:
            raise ValueError("columnar decode: more than 2 GiB of values; decode fewer batches at a time")
        _gb_i32(&g[7], <int32_t>g[8].len)
        q = s.headers_start
        for h in range(s.header_count):
            n = _varint_unchecked(d, &q)
            _gb_put(&g[11], d + q, <Py_ssize_t>n)
            q += <Py_ssize_t>n
            _gb_i32(&g[10], <int32_t>g[11].len)
            n = _varint_unchecked(d, &q)
            _bit(&g[12], hrow, n >= 0)
            if n > 0:
                _gb_put(&g[14], d + q, <Py_ssize_t>n)
                q += <Py_ssize_t>n
            _gb_i32(&g[13], <int32_t>g[14].len)
            hrow += 1
        if g[11].len > I32_MAX or g[14].len > I32_MAX or hrow > I32_MAX:
            raise ValueError("columnar decode: more than 2 GiB of headers; decode fewer batches at a time")
        _gb_i32(&g[9], <int32_t>hrow)
        _gb_i32(&g[15], epoch)
        _gb_i64(&g[16], base_offset)
        _bit(&g[17], row, control)
        if control and s.key_len >= 4:
            ctype = _rd16(d + s.key_start + 2)
        else:
            ctype = CONTROL_UNKNOWN
        _gb_put(&g[18], &ctype, 2)
        row += 1
    if p != end:
        _fail(R_TRAILING_BYTES, p, fixed)
    nrows[0] = row
    nheaders[0] = hrow
    return 0


def decode_raw_columns(buf, validate=True, max_batch_size=_api.MAX_BATCH_SIZE):
    """Decode every record of every whole batch in buf into Arrow-layout buffers (RawColumns)."""
    cdef Py_ssize_t mbs = _check_max_batch_size(max_batch_size)
    cdef _Source src = _source(buf)
    cdef const uint8_t* d = src.data
    cdef Py_ssize_t n = src.size, pos = 0, size, nrows = 0, nheaders = 0
    cdef GBuf g[NBUF]
    cdef int i, codec, attrs
    cdef bint val = bool(validate)
    cdef object data
    cdef const uint8_t* h
    memset(g, 0, sizeof(g))
    try:
        _gb_i32(&g[4], 0)
        _gb_i32(&g[7], 0)
        _gb_i32(&g[9], 0)
        _gb_i32(&g[10], 0)
        _gb_i32(&g[13], 0)
        while True:
            size = _frame(d, pos, n, mbs)
            if size == 0:
                break
            _check_header(d, pos, size, val)
            h = d + pos
            attrs = _rd16(h + ATTRIBUTES_POS)
            codec = attrs & COMPRESSION_MASK
            if codec == COMPRESSION_NONE:
                _columns_records(g, d, pos + RECORDS_POS, pos + size, _rd32(h + RECORD_COUNT_POS), -1,
                                 _rd64(h + BASE_OFFSET_POS), _rd64(h + BASE_TIMESTAMP_POS),
                                 (attrs & TIMESTAMP_TYPE_MASK) != 0, _rd64(h + MAX_TIMESTAMP_POS),
                                 _rd32(h + PARTITION_LEADER_EPOCH_POS), 1 if attrs & TIMESTAMP_TYPE_MASK else 0,
                                 (attrs & CONTROL_MASK) != 0, &nrows, &nheaders)
            else:
                data = _decompressed(d, pos, size, codec, mbs)
                _columns_records(g, <const uint8_t*>PyBytes_AS_STRING(data), 0, PyBytes_GET_SIZE(data),
                                 _rd32(h + RECORD_COUNT_POS), pos + RECORDS_POS,
                                 _rd64(h + BASE_OFFSET_POS), _rd64(h + BASE_TIMESTAMP_POS),
                                 (attrs & TIMESTAMP_TYPE_MASK) != 0, _rd64(h + MAX_TIMESTAMP_POS),
                                 _rd32(h + PARTITION_LEADER_EPOCH_POS), 1 if attrs & TIMESTAMP_TYPE_MASK else 0,
                                 (attrs & CONTROL_MASK) != 0, &nrows, &nheaders)
                data = None
            pos += size
        return _RawColumns(
            nrows, _gb_take(&g[0]), _gb_take(&g[1]), _gb_take(&g[2]),
            _gb_take(&g[3]), _gb_take(&g[4]), _gb_take(&g[5]),
            _gb_take(&g[6]), _gb_take(&g[7]), _gb_take(&g[8]),
            _gb_take(&g[9]), nheaders, _gb_take(&g[10]), _gb_take(&g[11]),
            _gb_take(&g[12]), _gb_take(&g[13]), _gb_take(&g[14]),
            _gb_take(&g[15]), _gb_take(&g[16]), _gb_take(&g[17]), _gb_take(&g[18]),
        )
    finally:
        for i in range(NBUF):
            _gb_free(&g[i])


cdef int _index_record_keys(dict into, const uint8_t* d, Py_ssize_t p, Py_ssize_t end, int64_t count,
                            Py_ssize_t fixed, int64_t base_offset) except -1:
    cdef RecSpan s
    cdef int64_t i
    cdef object key
    for i in range(count):
        if p >= end:
            _fail(R_RECORD_COUNT_MISMATCH, p, fixed)
        _parse_record(d, &p, end, i, fixed, &s)
        if s.key_len >= 0:
            key = PyBytes_FromStringAndSize(<const char*>(d + s.key_start), <Py_ssize_t>s.key_len)
            into[key] = <int64_t>(<uint64_t>base_offset + <uint64_t>i)
    if p != end:
        _fail(R_TRAILING_BYTES, p, fixed)
    return 0


def index_keys(buf, dict into, max_batch_size=_api.MAX_BATCH_SIZE):
    """For every keyed record of the data batches in buf (whole batches; control batches are skipped),
    ``into[key] = offset``, in offset order so the last record of a key wins; returns the number of data records
    read. The log cleaner's offset map, without a record object or a value copy per record."""
    cdef Py_ssize_t mbs = _check_max_batch_size(max_batch_size)
    cdef _Source src = _source(buf)
    cdef const uint8_t* d = src.data
    cdef Py_ssize_t n = src.size, pos = 0, size
    cdef int codec, attrs
    cdef int64_t total = 0, count
    cdef object data
    cdef const uint8_t* h
    while True:
        size = _frame(d, pos, n, mbs)
        if size == 0:
            break
        _check_header(d, pos, size, False)
        h = d + pos
        attrs = _rd16(h + ATTRIBUTES_POS)
        if not attrs & CONTROL_MASK:
            codec = attrs & COMPRESSION_MASK
            count = _rd32(h + RECORD_COUNT_POS)
            if codec == COMPRESSION_NONE:
                _index_record_keys(into, d, pos + RECORDS_POS, pos + size, count, -1, _rd64(h + BASE_OFFSET_POS))
            else:
                data = _decompressed(d, pos, size, codec, mbs)
                _index_record_keys(into, <const uint8_t*>PyBytes_AS_STRING(data), 0, PyBytes_GET_SIZE(data), count,
                                   pos + RECORDS_POS, _rd64(h + BASE_OFFSET_POS))
                data = None
            total += count
        pos += size
    return total


def decode_columns(buf, validate=True, max_batch_size=_api.MAX_BATCH_SIZE):
    """Columnar decode: a pyarrow.RecordBatch when pyarrow is installed, else RawColumns."""
    raw = decode_raw_columns(buf, validate, max_batch_size)
    return _to_arrow(raw) if _arrow_available() else raw


# ============================================================================ builder

cdef inline int _varint_size(uint64_t z) noexcept nogil:
    cdef int n = 1
    while z >= 0x80:
        z >>= 7
        n += 1
    return n


cdef inline uint64_t _zz(int64_t v) noexcept nogil:
    return (<uint64_t>v << 1) ^ <uint64_t>(v >> 63)


cdef inline char* _put_zz(char* w, uint64_t z) noexcept nogil:
    while z >= 0x80:
        w[0] = <char>((z & 0x7F) | 0x80)
        w += 1
        z >>= 7
    w[0] = <char>z
    return w + 1


cdef inline Py_ssize_t _field_size(Py_ssize_t n) noexcept nogil:
    """Encoded size of a nullable length-prefixed field (key, value, header value): -1 is null."""
    return (_varint_size(_zz(n)) + n) if n >= 0 else 1


cdef inline char* _put_field(char* w, const char* p, Py_ssize_t n) noexcept nogil:
    """A nullable length-prefixed field: zig-zag length then the bytes; null (-1) is the one byte 0x01."""
    if n < 0:
        w[0] = 1
        return w + 1
    w = _put_zz(w, _zz(n))
    memcpy(w, p, n)
    return w + n


cdef inline char* _put_record_head(char* w, Py_ssize_t body, uint64_t zd, uint64_t zo, const char* kp,
                                   Py_ssize_t kn, const char* vp, Py_ssize_t vn) noexcept nogil:
    """Length, attributes (0), timestamp delta, offset delta, key, value: a record up to its header count."""
    w = _put_zz(w, _zz(body))
    w[0] = 0
    w += 1
    w = _put_zz(w, zd)
    w = _put_zz(w, zo)
    w = _put_field(w, kp, kn)
    return _put_field(w, vp, vn)


cdef int _bytes_arg(object v, const char* name, const char** ptr, Py_ssize_t* n, Py_buffer* view, bint* has_view) except -1:
    """Pointer/length of a bytes-like argument, -1 length for None."""
    if v is None:
        n[0] = -1
        return 0
    if PyBytes_CheckExact(v):
        ptr[0] = PyBytes_AS_STRING(v)
        n[0] = PyBytes_GET_SIZE(v)
        return 0
    if isinstance(v, (bytes, bytearray, memoryview)):
        PyObject_GetBuffer(v, view, PyBUF_SIMPLE)
        has_view[0] = True
        ptr[0] = <const char*>view.buf
        n[0] = view.len
        return 0
    raise TypeError(f"{name.decode()} must be bytes or None, not {type(v).__name__}")


cdef struct HeaderRef:
    const char* kp
    Py_ssize_t kn
    const char* vp
    Py_ssize_t vn


@cython.final
cdef class RecordBatchBuilder:
    """Builds one RecordBatch v2 (see pyimpl.RecordBatchBuilder for the contract).

    append returns the record's absolute offset; append_many the offset of its last record.
    """
    cdef readonly int64_t base_offset
    cdef readonly int32_t partition_leader_epoch
    cdef readonly str compression
    cdef int _codec
    cdef readonly bint is_control
    cdef readonly bint is_transactional
    cdef readonly int64_t producer_id
    cdef readonly int16_t producer_epoch
    cdef readonly int32_t base_sequence
    cdef readonly int timestamp_type
    cdef readonly int32_t record_count
    cdef readonly object delete_horizon_ms  # None, or BaseTimestamp (and the Attributes bit) of the batch
    cdef readonly object compression_level  # None: Kafka's default level of the codec (KIP-390)
    cdef int64_t _first_ts
    cdef int64_t _max_ts
    cdef GBuf _buf
    cdef object _built

    def __cinit__(self):
        memset(&self._buf, 0, sizeof(GBuf))
        _gb_reserve(&self._buf, 512)
        self._buf.len = RECORD_BATCH_OVERHEAD  # the header is written in place by build()
        self.compression = "none"

    def __dealloc__(self):
        _gb_free(&self._buf)

    def __init__(self, base_offset=0, partition_leader_epoch=-1, compression="none", is_control=False,
                 is_transactional=False, producer_id=-1, producer_epoch=-1, base_sequence=-1, timestamp_type=0,
                 delete_horizon_ms=None, compression_level=None):
        if compression not in COMPRESSION_IDS:
            raise ValueError(f"unknown compression {compression!r}; expected one of {COMPRESSION_NAMES}")
        if timestamp_type not in (0, 1):
            raise ValueError(f"timestamp_type must be 0 (CreateTime) or 1 (LogAppendTime), got {timestamp_type}")
        try:
            self.base_offset = base_offset
            self.producer_id = producer_id
        except OverflowError:
            raise OverflowError("base_offset / producer_id out of int64 range") from None
        try:
            self.partition_leader_epoch = partition_leader_epoch
            self.base_sequence = base_sequence
        except OverflowError:
            raise OverflowError("partition_leader_epoch / base_sequence out of int32 range") from None
        try:
            self.producer_epoch = producer_epoch
        except OverflowError:
            raise OverflowError("producer_epoch out of int16 range") from None
        delete_horizon_ms = _checked_delete_horizon(delete_horizon_ms)  # the twin's checks and errors
        if delete_horizon_ms is not None:
            self._first_ts = delete_horizon_ms  # BaseTimestamp is the horizon; deltas are taken from it
        else:
            self._first_ts = 0
        self.delete_horizon_ms = delete_horizon_ms
        self.compression_level = compression_level
        self.compression = compression
        self._codec = COMPRESSION_IDS[compression]
        self.is_control = bool(is_control)
        self.is_transactional = bool(is_transactional)
        self.timestamp_type = timestamp_type
        self.record_count = 0
        self._built = None
        if self._buf.cap < RECORD_BATCH_OVERHEAD:  # re-initialised after build() handed the buffer over
            _gb_free(&self._buf)
            _gb_reserve(&self._buf, 512)
        self._buf.len = RECORD_BATCH_OVERHEAD  # (re-)initialised: drop any records

    cdef int64_t _timestamp(self, object timestamp) except? -1:
        if timestamp is None:
            return <int64_t>(_time_time() * 1000)
        if not isinstance(timestamp, int):
            raise TypeError(f"timestamp must be int or None, not {type(timestamp).__name__}")
        try:
            return timestamp
        except OverflowError:
            raise OverflowError("timestamp out of int64 range") from None

    cdef int _check_open(self) except -1:
        if self._built is not None:
            raise ValueError("the batch was already built")
        if self.record_count == I32_MAX:
            raise OverflowError("too many records in one batch")
        return 0

    cdef int64_t _delta(self, int64_t ts) except? -1:
        if self.record_count == 0:
            self._max_ts = ts
            if self.delete_horizon_ms is None:
                self._first_ts = ts
        cdef int64_t delta
        if __builtin_sub_overflow(ts, self._first_ts, &delta):
            raise OverflowError("timestamp delta out of int64 range")
        return delta

    cdef inline int64_t _write_simple(self, const char* kp, Py_ssize_t kn, const char* vp, Py_ssize_t vn,
                                      int64_t ts, int64_t delta) except? -1:
        """Append a record without headers."""
        cdef uint64_t zd = _zz(delta)
        cdef uint64_t zo = _zz(self.record_count)
        cdef Py_ssize_t body = 1 + _varint_size(zd) + _varint_size(zo) + 1  # + header count (0)
        cdef char* w
        body += _field_size(kn) + _field_size(vn)
        if body > I32_MAX:
            raise OverflowError("record too large")
        if self._buf.len + body + 5 > self._buf.cap:
            _gb_reserve(&self._buf, body + 5)
        w = _put_record_head(self._buf.data + self._buf.len, body, zd, zo, kp, kn, vp, vn)
        w[0] = 0
        w += 1
        self._buf.len = w - self._buf.data
        if ts > self._max_ts:
            self._max_ts = ts
        self.record_count += 1
        return <int64_t>(<uint64_t>self.base_offset + <uint64_t>(self.record_count - 1))

    def append(self, key, value, headers=(), timestamp=None):
        """Append one record; returns its absolute offset."""
        cdef const char* kp = NULL
        cdef const char* vp = NULL
        cdef Py_ssize_t kn, vn
        cdef Py_buffer kview, vview
        cdef bint khas = False, vhas = False
        cdef int64_t ts, delta
        try:
            _bytes_arg(key, b"key", &kp, &kn, &kview, &khas)
            _bytes_arg(value, b"value", &vp, &vn, &vview, &vhas)
            if type(headers) is not list and type(headers) is not tuple:
                headers = list(headers)
            ts = self._timestamp(timestamp)
            self._check_open()
            delta = self._delta(ts)
            if len(headers) == 0:
                return self._write_simple(kp, kn, vp, vn, ts, delta)
            return self._write_with_headers(kp, kn, vp, vn, headers, ts, delta)
        finally:
            if khas:
                PyBuffer_Release(&kview)
            if vhas:
                PyBuffer_Release(&vview)

    cdef int64_t _write_with_headers(self, const char* kp, Py_ssize_t kn, const char* vp, Py_ssize_t vn,
                                     object headers, int64_t ts, int64_t delta) except? -1:
        # Pass 1 checks every header (same order and errors as the twin) and sizes it; pass 2 writes.
        cdef Py_ssize_t nh
        cdef HeaderRef stack_refs[8]
        cdef HeaderRef* refs = stack_refs
        cdef list keep = None
        cdef Py_ssize_t i, hsize, body
        cdef uint64_t zd, zo
        cdef char* w
        cdef object hkey, hvalue, converted, item
        # Hold every object whose buffer pass 2 reads: a tuple snapshot of the headers, and tuples
        # of any non-tuple items (unpacking those may run user code that mutates the caller's list).
        if type(headers) is not tuple:
            headers = tuple(headers)
        nh = len(headers)
        if nh > 8:
            refs = <HeaderRef*>PyMem_Malloc(nh * sizeof(HeaderRef))
            if refs == NULL:
                raise MemoryError()
        try:
            hsize = _varint_size(_zz(nh))
            for i in range(nh):
                item = headers[i]
                if type(item) is not tuple:
                    item = tuple(item)
                    if keep is None:
                        keep = []
                    keep.append(item)
                hkey, hvalue = item
                if not isinstance(hkey, str):
                    raise TypeError(f"header key must be str, not {type(hkey).__name__}")
                if hvalue is None:
                    refs[i].vp = NULL
                    refs[i].vn = -1
                elif PyBytes_CheckExact(hvalue):
                    refs[i].vp = PyBytes_AS_STRING(hvalue)
                    refs[i].vn = PyBytes_GET_SIZE(hvalue)
                elif isinstance(hvalue, (bytes, bytearray, memoryview)):
                    converted = bytes(hvalue)
                    if keep is None:
                        keep = []
                    keep.append(converted)
                    refs[i].vp = PyBytes_AS_STRING(converted)
                    refs[i].vn = PyBytes_GET_SIZE(converted)
                else:
                    raise TypeError(f"header value must be bytes or None, not {type(hvalue).__name__}")
                refs[i].kp = PyUnicode_AsUTF8AndSize(hkey, &refs[i].kn)
                hsize += _field_size(refs[i].kn) + _field_size(refs[i].vn)
            zd = _zz(delta)
            zo = _zz(self.record_count)
            body = 1 + _varint_size(zd) + _varint_size(zo) + hsize
            body += _field_size(kn) + _field_size(vn)
            if body > I32_MAX:
                raise OverflowError("record too large")
            _gb_reserve(&self._buf, body + 5)
            w = _put_record_head(self._buf.data + self._buf.len, body, zd, zo, kp, kn, vp, vn)
            w = _put_zz(w, _zz(nh))
            for i in range(nh):
                w = _put_field(w, refs[i].kp, refs[i].kn)  # header keys are never null (kn >= 0)
                w = _put_field(w, refs[i].vp, refs[i].vn)
            self._buf.len = w - self._buf.data
        finally:
            if refs != stack_refs:
                PyMem_Free(refs)
        if ts > self._max_ts:
            self._max_ts = ts
        self.record_count += 1
        return <int64_t>(<uint64_t>self.base_offset + <uint64_t>(self.record_count - 1))

    def append_many(self, values, keys=None, timestamp=None):
        """Append one record per value (with the matching key, or null keys), all with one timestamp
        and no headers; returns the absolute offset of the last record appended."""
        cdef Py_ssize_t i, count = len(values)
        cdef const char* kp = NULL
        cdef const char* vp = NULL
        cdef Py_ssize_t kn = -1, vn
        cdef Py_buffer kview, vview
        cdef bint khas, vhas
        cdef int64_t ts, delta
        cdef int64_t last
        cdef object v, k
        if keys is not None and len(keys) != count:
            raise ValueError(f"{len(keys)} keys for {count} values")
        ts = self._timestamp(timestamp)
        if type(values) is not list and type(values) is not tuple:
            values = list(values)
        if keys is not None and type(keys) is not list and type(keys) is not tuple:
            keys = list(keys)
        for v in values:
            if v is not None and not isinstance(v, (bytes, bytearray, memoryview)):
                raise TypeError(f"value must be bytes or None, not {type(v).__name__}")
        if keys is not None:
            for k in keys:
                if k is not None and not isinstance(k, (bytes, bytearray, memoryview)):
                    raise TypeError(f"key must be bytes or None, not {type(k).__name__}")
        last = <int64_t>(<uint64_t>self.base_offset + <uint64_t>self.record_count - 1)
        for i in range(count):
            khas = vhas = False
            try:
                if keys is not None:
                    _bytes_arg(keys[i], b"key", &kp, &kn, &kview, &khas)
                _bytes_arg(values[i], b"value", &vp, &vn, &vview, &vhas)
                self._check_open()
                delta = self._delta(ts)
                last = self._write_simple(kp, kn, vp, vn, ts, delta)
            finally:
                if khas:
                    PyBuffer_Release(&kview)
                if vhas:
                    PyBuffer_Release(&vview)
        return last

    def size_in_bytes(self):
        """Size of the batch so far, uncompressed (an upper estimate when compressing)."""
        return self._buf.len

    def build(self):
        if self._built is not None:
            return self._built
        if self.record_count == 0:
            self._built = b""
            return self._built
        cdef object records
        cdef Py_ssize_t rlen = self._buf.len - RECORD_BATCH_OVERHEAD
        cdef bytes out
        cdef uint8_t* w
        cdef int attrs = self._codec
        if self._codec != COMPRESSION_NONE:
            records = _compress(self._codec, PyMemoryView_FromMemory(self._buf.data + RECORD_BATCH_OVERHEAD, rlen, PyBUF_READ),
                                self.compression_level)
            rlen = PyBytes_GET_SIZE(records)
            _gb_free(&self._buf)
            _gb_reserve(&self._buf, RECORD_BATCH_OVERHEAD + rlen)
            memcpy(self._buf.data + RECORD_BATCH_OVERHEAD, PyBytes_AS_STRING(records), rlen)
            self._buf.len = RECORD_BATCH_OVERHEAD + rlen
        if RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + rlen > I32_MAX:
            raise OverflowError("batch too large")
        w = <uint8_t*>self._buf.data
        if self.timestamp_type:
            attrs |= TIMESTAMP_TYPE_MASK
        if self.is_transactional:
            attrs |= TRANSACTIONAL_MASK
        if self.is_control:
            attrs |= CONTROL_MASK
        if self.delete_horizon_ms is not None:
            attrs |= DELETE_HORIZON_MASK
        _wr64(w + BASE_OFFSET_POS, self.base_offset)
        _wr32(w + LENGTH_POS, <int32_t>(RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + rlen))
        _wr32(w + PARTITION_LEADER_EPOCH_POS, self.partition_leader_epoch)
        w[MAGIC_POS] = <uint8_t>MAGIC
        _wr16(w + ATTRIBUTES_POS, <int16_t>attrs)
        _wr32(w + LAST_OFFSET_DELTA_POS, self.record_count - 1)
        _wr64(w + BASE_TIMESTAMP_POS, self._first_ts)
        _wr64(w + MAX_TIMESTAMP_POS, self._max_ts)
        _wr64(w + PRODUCER_ID_POS, self.producer_id)
        _wr16(w + PRODUCER_EPOCH_POS, self.producer_epoch)
        _wr32(w + BASE_SEQUENCE_POS, self.base_sequence)
        _wr32(w + RECORD_COUNT_POS, self.record_count)
        _wr32(w + CRC_POS, <int32_t>_crc(w + CRC_START, RECORD_BATCH_OVERHEAD + rlen - CRC_START))
        out = _gb_take(&self._buf)
        self._built = out
        return out

