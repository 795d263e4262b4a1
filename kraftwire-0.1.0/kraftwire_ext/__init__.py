"""C implementation of kraftwire's RecordBatch v2 codec (``kraftwire_ext._records``); see ``kraftwire.records``."""
