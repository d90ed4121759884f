"""The scene model: an Engine 2 Scene with every ``.rscene`` record kind, typed. Pure Python (numpy)."""
from .errors import Diagnostic, FormatError, ValueFormatError, describe
from .kinds import RECORD_CLASSES, SCHEMA_BY_TAG, new_record, record_class
from .record import Record, UnknownRecord
from .scene import Comment, Scene
from .values import ALL_GROUPS

__all__ = ["ALL_GROUPS", "Comment", "Diagnostic", "FormatError", "RECORD_CLASSES", "Record", "SCHEMA_BY_TAG", "Scene",
           "UnknownRecord", "ValueFormatError", "describe", "new_record", "record_class"]
