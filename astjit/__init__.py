"""astjit: decorate a numpy function with ``@jit``; its array code runs as compiled, cached Fragments
while its control flow stays Python."""

from . import (
    backends,  # noqa: F401  (astjit.backends.register)
    graph,  # noqa: F401
    rewrite,  # noqa: E402,F401  (astjit.rewrite.Rule, register)
)
from .api import Explanation, JitFunction, explain, jit
from .errors import (
    AstjitError,
    CacheDirectoryWarning,
    ConfigurationWarning,
    DeviceError,
    GradError,
    NotAFunctionError,
    RecompileLimitWarning,
    RuleError,
    SourceUnavailableError,
    StrictModeError,
    Unsupported,
)
from .grad import adjoint, grad, non_differentiable, value_and_grad
from .graph import ops as _ops  # noqa: F401  (registers every op)

__version__ = "0.1.0"
__all__ = ["jit", "explain", "grad", "value_and_grad", "adjoint", "non_differentiable", "JitFunction", "Explanation", "AstjitError", "GradError", "SourceUnavailableError",
           "NotAFunctionError", "StrictModeError", "Unsupported", "RuleError", "DeviceError", "RecompileLimitWarning", "CacheDirectoryWarning",
           "ConfigurationWarning"]
