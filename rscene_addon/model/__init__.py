"""The scene model: an Engine 2 Scene with every ``.rscene`` record kind, typed. Pure Python (numpy)."""
from .errors import Diagnostic, FormatError, ValueFormatError
from .kinds import RECORD_CLASSES, SCHEMA_BY_TAG, new_record, record_class
from .record import Record, UnknownRecord
from .scene import Comment, Scene

__all__ = ["Comment", "Diagnostic", "FormatError", "RECORD_CLASSES", "Record", "SCHEMA_BY_TAG", "Scene",
           "UnknownRecord", "ValueFormatError", "new_record", "record_class"]
