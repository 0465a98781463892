"""Gradients of numpy functions by source transformation: ``astjit.grad``, ``astjit.value_and_grad``,
and ``adjoint`` to register the rule of an op."""

from ..errors import GradError
from .function import GradFunction, grad, value_and_grad
from .rules import adjoint, non_differentiable

__all__ = ["grad", "value_and_grad", "GradFunction", "adjoint", "non_differentiable", "GradError"]
