"""The homework kit (draft)."""
from .catalogue import CATALOGUE, CHAPTER_ORDER, Exercise, catalogue_text, select
from .source import make
from .grader import Report, UsageError, check, exercises_in
