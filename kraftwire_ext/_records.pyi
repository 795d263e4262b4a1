"""Type stub of the Cython codec; it satisfies ``kraftwire.records.api.RecordCodec``."""

from typing import Any, Iterable, Iterator, Literal, Optional, Sequence, Union

from kraftwire.records.api import BatchInfo, ValidationResult
from kraftwire.records.columns import RawColumns

_Buffer = Union[bytes, bytearray, memoryview]
_Header = tuple[str, Optional[bytes]]

IMPLEMENTATION: Literal["ext"]

class Record:
    """Compares and unpacks like ``(offset, timestamp, key, value, headers)``."""

    @property
    def offset(self) -> int: ...
    @property
    def timestamp(self) -> int: ...
    @property
    def key(self) -> Optional[bytes]: ...
    @property
    def value(self) -> Optional[bytes]: ...
    @property
    def headers(self) -> list[_Header]: ...
    def __init__(self, offset: int, timestamp: int, key: Optional[bytes], value: Optional[bytes], headers: list[_Header]) -> None: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Any: ...

class RecordBatch:
    base_offset: int
    length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int
    last_offset: int
    position: int
    size_in_bytes: int
    @property
    def buffer(self) -> memoryview: ...
    @property
    def compression(self) -> str: ...
    @property
    def is_control(self) -> bool: ...
    @property
    def is_transactional(self) -> bool: ...
    @property
    def timestamp_type(self) -> int: ...
    @property
    def next_offset(self) -> int: ...
    @property
    def has_delete_horizon(self) -> bool: ...
    @property
    def delete_horizon_ms(self) -> Optional[int]: ...
    def __iter__(self) -> Iterator[Record]: ...
    def records(self) -> list[Record]: ...

class BatchReader:
    valid_bytes: int
    incomplete: bool
    def __init__(self, buf: _Buffer, validate: bool = True, max_batch_size: int = ...) -> None: ...
    def __iter__(self) -> BatchReader: ...
    def __next__(self) -> RecordBatch: ...

class RecordBatchBuilder:
    base_offset: int
    partition_leader_epoch: int
    compression: str
    is_control: bool
    is_transactional: bool
    producer_id: int
    producer_epoch: int
    base_sequence: int
    timestamp_type: int
    record_count: int
    delete_horizon_ms: Optional[int]
    compression_level: Optional[int]
    def __init__(
        self,
        base_offset: int = 0,
        partition_leader_epoch: int = -1,
        compression: str = "none",
        is_control: bool = False,
        is_transactional: bool = False,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        timestamp_type: int = 0,
        delete_horizon_ms: Optional[int] = None,
        compression_level: Optional[int] = None,
    ) -> None: ...
    def append(self, key: Optional[_Buffer], value: Optional[_Buffer], headers: Iterable[tuple[str, Optional[_Buffer]]] = (),
               timestamp: Optional[int] = None) -> int: ...
    def append_many(self, values: Sequence[Optional[_Buffer]], keys: Optional[Sequence[Optional[_Buffer]]] = None,
                    timestamp: Optional[int] = None) -> int: ...
    def size_in_bytes(self) -> int: ...
    def build(self) -> bytes: ...

def read_batches(buf: _Buffer, validate: bool = True, max_batch_size: int = ...) -> BatchReader: ...
def whole_batches_size(buf: _Buffer, max_batch_size: int = ...) -> int: ...
def validate_batches(buf: _Buffer, max_batch_size: int = ..., *, check_records: bool = True,
                     stop_at_corruption: bool = False, headers: bool = False) -> ValidationResult: ...
def set_base_offset_and_epoch(buf: Union[bytearray, memoryview], position: int, base_offset: int,
                              partition_leader_epoch: int) -> None: ...
def rebase_batches(buf: _Buffer, base_offset: int, partition_leader_epoch: int, max_batch_size: int = ...,
                   *, batches: Optional[list[BatchInfo]] = None) -> bytes: ...
def decode_raw_columns(buf: _Buffer, validate: bool = True, max_batch_size: int = ...) -> RawColumns: ...
def index_keys(buf: _Buffer, into: dict[bytes, int], max_batch_size: int = ...) -> int: ...
def decode_columns(buf: _Buffer, validate: bool = True, max_batch_size: int = ...) -> Any: ...
