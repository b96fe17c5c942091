"""Every speed trick behind one switch (per thread): the switch, the table of tricks, and
the tricks that are no op's own algorithm (rules on arrays, masks, scatter, row sums, element
views)."""

from .elements import view_at
from .rowsums import row_sums
from .rules import add_at_rows, add_rows, gradients, masked, on_value, select, unchanged
from .switch import disabled, enabled, set_enabled
from .table import TRICKS, Trick
from .views import off_graph, slices_made, unwatched, view_made

__all__ = [
    "TRICKS",
    "Trick",
    "add_at_rows",
    "add_rows",
    "disabled",
    "enabled",
    "gradients",
    "masked",
    "off_graph",
    "on_value",
    "row_sums",
    "select",
    "set_enabled",
    "slices_made",
    "unchanged",
    "unwatched",
    "view_at",
    "view_made",
]
