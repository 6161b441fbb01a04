"""The homework kit: any chapter as an exercise, graded by the library's own checks.

scratchnet's chapters are the reference answers; this package turns them
into homework.  ``make`` writes a student edition generated from the
reference solutions and the chapters' source (signatures and docstrings kept, bodies
to write), as a package or a notebook, and, with ``--assignment``, the
instructor's assignment beside it; ``check`` grades exactly what the
assignment lists.  The grader decides and the student's code only answers:
a child process in a sandbox (bubblewrap's namespaces, or a dedicated uid)
holds NumPy, the submission and a small answering shim, nothing else, while
every reference value, comparison, hint (from evidence), carry-forward
decision and point is the grader's, and nothing the submission started
outlives grading (:mod:`~scratchnet.exercises.sandbox` states the threat
model, :mod:`~scratchnet.exercises.protocol` the contracts).
``assert_passes`` runs one exercise's checks in a
student's own pytest file.  The same from the command line:
``python -m scratchnet exercises list | make | check | autograder``.

=================  ============================================================
``catalogue``      the exercises: chapter, what each teaches, points, covered
                   arguments, what is given
``probes``         what a check is made of: comparisons that say where
``protocol``       the contracts: the assignment file, the requests and
                   answers between grader and child, a check as data
``diagnoses``      hints only where the mistake, recomputed, is the output
``frames``         the codec between grader and child: bounded, no pickle
``definitions``    a module cut into its top-level definitions
``accounts``       what the child reports: an exception (where, in which
                   function), the inputs a carried reference was given
``shim``           the child: imports the submission, answers; NumPy and
                   the standard library only
``given``          the hand-out's base classes in the sandbox, no exercise
``runtime``        the child's Python and NumPy, what a sandbox shows
``confine``        a plain-file copy, a uid of its own, Landlock
``sandbox``        bubblewrap, a dedicated uid, or none: what the child
                   sees, its hard limits, its end
``carried``        the reference source of an exercise's dependencies
``remote``         the checks' view of the child, one per exercise
``sides``          the student's side as a check sees it
``layout``         generated code in PEP 8 form: signatures, import blocks
``docstrings``     the student's docstring, cut down to the covered arguments
``reference_*``    the reference solutions (``_scores``, ``_models``; before,
                   ``key_*``): each chapter's code in plain NumPy, what a
                   hand-out is written from
``derive``         writes the reference solutions' bodies from the chapters
``own``            an instructor's own exercises: ``@exercise``, no fork
``source``         one function of a hand-out: signature, docstring, stub or
                   body, from a reference solution or the chapter's source
``notebook``       the hand-out as a notebook; a notebook read as a package
``handout``        ``make``: the student edition (or the key), package or
                   notebook
``generic``        checks made from a reference: any chapter function's, an
                   instructor's exercise's
``checks_scores``  softmax, log-softmax, logsumexp and the losses
``checks_layers``  information, Bayes' rule and the layers
``checks_models``  the network, the optimisers, training to the posterior
``analysis``       the submission's source, read first: missing, broken,
                   another library imported (a message), copied
``checking``       one exercise's checks, run: pass, fail, todo, error
``report``         the report and Gradescope's JSON
``assignment``     the instructor's assignment file: write, read, check
``grading``        one exercise graded: its children, checks, carry-forward
``grader``         the grading process: verdicts, points, the report
``course``         any upload graded by an assignment, a class to CSV,
                   Gradescope's autograder zip
``selfcheck``      a student's self-check: what the package lists, without
                   the assignment
``assertions``     one check in a student's pytest file
``cli``            ``list``, ``make``, ``check``, ``autograder``
=================  ============================================================

Examples
--------
>>> import tempfile
>>> from scratchnet import exercises
>>> with tempfile.TemporaryDirectory() as tmp:
...     _ = exercises.make(["relu_backward"], tmp + "/hw")
...     report = exercises.check(tmp + "/hw")
>>> print(report.text())  # doctest: +NORMALIZE_WHITESPACE
relu_backward: 0/5 points - not implemented yet
total: 0/5 points
(a self-check: the exercises graded are those your package lists, not the code
it gives, with the catalogue's points; your instructor grades with the assignment)
"""

from .assertions import assert_passes
from .assignment import read_assignment, write_assignment
from .catalogue import CATALOGUE, CHAPTER_ORDER, Exercise, catalogue_text, select
from .checks_models import KL_THRESHOLD, TRAIN_STEPS, train_to_posterior
from .generic import assert_examples
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
    "assert_examples",
    "assert_passes",
    "catalogue_text",
    "check",
    "exercise",
    "exercises_in",
    "load_exercises",
    "make",
    "read_assignment",
    "select",
    "train_to_posterior",
    "write_assignment",
]
