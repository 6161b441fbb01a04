"""The homework kit: any chapter as an exercise, graded by the library's own checks.

scratchnet's chapters are the reference answers; this package turns them
into homework.  ``make`` writes a student edition generated from the
chapters' source (signatures and docstrings kept, bodies to write), ``check``
grades a student's package in a child process with the conformance checks of
the conventions, carry-forward between exercises and hints for the classic
mistakes, and writes Gradescope's results; ``assert_passes`` runs one check in
a student's own pytest file.  The same from the command line:
``python -m scratchnet exercises list | make | check``.

=================  ============================================================
``catalogue``      the exercises: chapter, what each teaches, points, covered
                   arguments, what is given
``layout``         generated code in PEP 8 form: signatures, import blocks
``source``         the student edition and the answer key, from the source
``probes``         what a check is made of: diagnosing comparisons
``checks_scores``  softmax, log-softmax, logsumexp and the losses
``checks_layers``  information, Bayes' rule and the layers
``checks_models``  the network, the optimisers, training to the posterior
``runner``         the child process that runs the student's code
``grader``         the report, the points, Gradescope's JSON
``assertions``     one check in a student's pytest file
``cli``            ``list``, ``make``, ``check``
=================  ============================================================

Examples
--------
>>> import tempfile
>>> from scratchnet import exercises
>>> with tempfile.TemporaryDirectory() as tmp:
...     _ = exercises.make(["relu_backward"], tmp + "/hw")
...     report = exercises.check(tmp + "/hw")
>>> print(report.text())
relu_backward: 0/5 points - not implemented yet
total: 0/5 points
"""

from .assertions import assert_passes
from .catalogue import CATALOGUE, CHAPTER_ORDER, Exercise, catalogue_text, select
from .checks_models import KL_THRESHOLD, TRAIN_STEPS, train_to_posterior
from .grader import UsageError, check, exercises_in
from .handout import make
from .own import exercise, load_exercises
from .report import Report

__all__ = [
    "CATALOGUE",
    "CHAPTER_ORDER",
    "KL_THRESHOLD",
    "TRAIN_STEPS",
    "Exercise",
    "Report",
    "UsageError",
    "assert_passes",
    "catalogue_text",
    "check",
    "exercise",
    "exercises_in",
    "load_exercises",
    "make",
    "select",
    "train_to_posterior",
]
