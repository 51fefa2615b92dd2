"""`tt.types.experimental.TraceType`: how an object of the user's chooses which trace of a
tt.function its calls share, as TensorFlow's tracing protocol.

An argument with a `__tf_tracing_type__(context)` method is keyed in the function's trace
cache by the TraceType it returns (compared with `==` and `hash`), not by the object: calls
with objects of one trace type share a trace, and a call whose type `is_subtype_of` a traced
one's uses that trace. While tracing, the function sees `placeholder_value(context)`. An
object without the method is keyed by itself (its own `==` and `hash`: by identity unless
its class says otherwise), as in TensorFlow.
"""

import abc
from types import SimpleNamespace


class TraceType(abc.ABC):
    """The type an argument is traced for; subclasses define all five methods."""

    @abc.abstractmethod
    def is_subtype_of(self, other):
        """Whether a trace for `other` serves a call of this type."""

    @abc.abstractmethod
    def most_specific_common_supertype(self, others):
        """The most specific type of which this one and `others` are all subtypes, or None."""

    @abc.abstractmethod
    def placeholder_value(self, placeholder_context=None):
        """The value the function sees for this argument while it is traced."""

    @abc.abstractmethod
    def __eq__(self, other):
        """Whether the two types are one: their calls share a trace."""

    @abc.abstractmethod
    def __hash__(self):
        """Equal types hash alike (the trace cache is a dict)."""


class TracingContext:
    """What `__tf_tracing_type__(context)` receives: nothing an argument needs in tracer."""


class PlaceholderContext:
    """What `placeholder_value(context)` receives: nothing a placeholder needs in tracer."""


experimental = SimpleNamespace(
    TraceType=TraceType, TracingContext=TracingContext, PlaceholderContext=PlaceholderContext
)

__all__ = ["experimental"]
