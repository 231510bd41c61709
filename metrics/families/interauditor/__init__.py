"""Inter-auditor agreement on plain data: kappa, CCC, symmetric means and the paired bootstrap.

Everything is in ``measures``; the package exports its public names.
"""

# Imported by the module above from elsewhere in the library; exported here as before.
from metrics.families.agreement import weighted_ccc
from metrics.families.agreement.numbers import finite_or_none
from metrics.families.resampling import CI_PERCENTILES

from .measures import (
    cluster_bootstrap_mean_diff,
    cohens_kappa,
    lins_ccc,
    symmetric_mean,
)

__all__ = [
    "CI_PERCENTILES",
    "cluster_bootstrap_mean_diff",
    "cohens_kappa",
    "finite_or_none",
    "lins_ccc",
    "symmetric_mean",
    "weighted_ccc",
]
