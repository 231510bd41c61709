"""Discussions, statements, AI extractions and the auditors' feedback that becomes ground truth.

One module per topic; every model is imported here, where Django and callers find it.
"""

from audit.models.announcements import Announcement
from audit.models.assignments import Assignment, AssignmentQuerySet
from audit.models.coding import (
    Adjudication,
    BlindReview,
    Feedback,
    FeedbackQuerySet,
    FeedbackRevision,
)
from audit.models.discussions import (
    Discussion,
    DiscussionQuerySet,
    Speaker,
    Statement,
    StatementQuerySet,
)
from audit.models.guidelines import GuidelineVersion
from audit.models.history import (
    HISTORY_IS_PERMANENT,
    AuditLogEntry,
    HistoryModel,
    HistoryQuerySet,
    history_kept,
    history_purge,
)
from audit.models.jobs import ComputeJob, ComputeJobQuerySet
from audit.models.runs import (
    DiscussionExtraction,
    Extraction,
    ExtractionRun,
    ExtractionRunQuerySet,
    RunConfiguration,
    configuration_fingerprint,
    empty_pdp,
)
from audit.models.snapshots import LIVE_GROUND_TRUTH, GroundTruthSnapshot, SnapshotCoding
from audit.models.tallies import (
    LISTED,
    TEAM_SORT_FIELDS,
    AuditorFigures,
    CodingTally,
    CodingTime,
    CodingTimeChange,
    DiscussionFigures,
    TeamFigures,
)
from audit.models.threads import Comment, CommentQuerySet, Notification, ThreadRead
from audit.models.triage import TriageSettings, TriageStatement, TriageStatementQuerySet

__all__ = [
    "HISTORY_IS_PERMANENT",
    "LISTED",
    "LIVE_GROUND_TRUTH",
    "TEAM_SORT_FIELDS",
    "Adjudication",
    "Announcement",
    "Assignment",
    "AssignmentQuerySet",
    "AuditLogEntry",
    "AuditorFigures",
    "BlindReview",
    "CodingTally",
    "CodingTime",
    "CodingTimeChange",
    "Comment",
    "CommentQuerySet",
    "ComputeJob",
    "ComputeJobQuerySet",
    "Discussion",
    "DiscussionExtraction",
    "DiscussionFigures",
    "DiscussionQuerySet",
    "Extraction",
    "ExtractionRun",
    "ExtractionRunQuerySet",
    "Feedback",
    "FeedbackQuerySet",
    "FeedbackRevision",
    "GroundTruthSnapshot",
    "GuidelineVersion",
    "HistoryModel",
    "HistoryQuerySet",
    "Notification",
    "RunConfiguration",
    "SnapshotCoding",
    "Speaker",
    "Statement",
    "StatementQuerySet",
    "TeamFigures",
    "ThreadRead",
    "TriageSettings",
    "TriageStatement",
    "TriageStatementQuerySet",
    "configuration_fingerprint",
    "empty_pdp",
    "history_kept",
    "history_purge",
]
