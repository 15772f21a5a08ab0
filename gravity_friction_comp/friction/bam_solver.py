"""BAM feedforward solver: per-joint BAM parameters stacked, the implicit torque equation solved.

The motor torque that sustains steady motion solves ``tau_f = tanh(dtheta/eps)·tau_fm(dtheta,
-tau_e + tau_f, tau_e)`` (:mod:`~gravity_friction_comp.friction.bam`, module docstring). For
M1/M2 ``tau_fm`` does not depend on ``tau_m`` (closed form); for M3–M6 it does and the
equation is solved by a bracketed, safeguarded Newton iteration (:meth:`BamStack._solve`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gravity_friction_comp.errors import InputError, Reason

if TYPE_CHECKING:
    from gravity_friction_comp.friction.bam import BamParameters

__all__ = ["FEEDFORWARD_TOLERANCE", "BamStack"]

#: Residual the feedforward solver guarantees [N·m] for torques up to ~10 kN·m with
#: coefficients of BAM's size (the general bound is in :meth:`BamStack._solve`).
FEEDFORWARD_TOLERANCE = 1e-9
#: Relative residual of the solver: |G| <= _SOLVER_TOL·(scale of the torques in G).
_SOLVER_TOL = 1e-14
_MAX_ITER = 200
#: Relative bracket width at which the solve stops (4 ulps).
_RESOLUTION = 2.0**-50


class BamStack:
    """Per-joint BAM parameters stacked into arrays for vectorised evaluation.

    Every model is written in M6's general form (M3/M4: ``K_e = K_m = K_l``,
    ``K_es = K_ms = K_ls``; unused coefficients 0), which equals each model's definition.

    Args:
        params: one :class:`BamParameters` per joint (length m).
    """

    def __init__(self, params: Sequence[BamParameters]):
        params = list(params)
        self.params = tuple(params)
        self.size = len(params)

        def arr(fn):
            a = np.array([fn(p) for p in params], dtype=float)
            a.setflags(write=False)
            return a

        lin = lambda p: p.model in ("m3", "m4")  # noqa: E731
        self.k_c = arr(lambda p: p.friction_base)
        self.k_v = arr(lambda p: p.friction_viscous)
        self.k_cs = arr(lambda p: p.friction_stribeck)
        self.k_e = arr(lambda p: p.load_friction_base if lin(p) else p.load_friction_external)
        self.k_m = arr(lambda p: p.load_friction_base if lin(p) else p.load_friction_motor)
        self.k_es = arr(lambda p: p.load_friction_stribeck if lin(p) else p.load_friction_external_stribeck)
        self.k_ms = arr(lambda p: p.load_friction_stribeck if lin(p) else p.load_friction_motor_stribeck)
        self.k_eq = arr(lambda p: p.load_friction_external_quad)
        self.k_mq = arr(lambda p: p.load_friction_motor_quad)
        self.dtheta_s = arr(lambda p: p.dtheta_stribeck)
        self.alpha = arr(lambda p: p.alpha)
        self.stribeck_mask = arr(lambda p: 1.0 if p.has_stribeck else 0.0)
        self.load_dependent = any(p.load_dependent for p in params)
        self.any_stribeck = any(p.has_stribeck for p in params)
        #: Budget evaluations used by the last load-dependent solve (diagnostics, tests).
        self.last_iterations = 0
        self.quadratic = any(p.model == "m6" for p in params)

    def stribeck_factor(self, dtheta: np.ndarray) -> np.ndarray:
        """Per-joint Stribeck factor [-] (0 where the model has none), shape (m,)."""
        return self.stribeck_mask * np.exp(-(np.abs(dtheta / self.dtheta_s) ** self.alpha))

    def budget(
        self, dtheta: np.ndarray, tau_m: np.ndarray, tau_e: np.ndarray, s_str: np.ndarray | None = None
    ) -> np.ndarray:
        """Friction budget [N·m], shape (m,), in the general M6 form (see class doc)."""
        if s_str is None:
            s_str = self.stribeck_factor(dtheta)
        out = (
            self.k_c
            + self.k_v * np.abs(dtheta)
            + np.abs(self.k_e * tau_e - self.k_m * tau_m)
            + s_str * (self.k_cs + np.abs(self.k_es * tau_e - self.k_ms * tau_m))
        )
        if self.quadratic:
            out = out + s_str * self._quad(tau_m, tau_e)[0]
        return out

    def _quad(self, tau_m: np.ndarray, tau_e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """M6 quadratic term Q and dQ/d tau_m (BAM's strict inequalities)."""
        enable = np.sign(tau_e) != np.sign(tau_m)
        abs_e, abs_m = np.abs(tau_e), np.abs(tau_m)
        ext_side = enable & (abs_e > abs_m)
        q = np.where(enable & (abs_e < abs_m), self.k_eq * tau_e**2, 0.0) + np.where(
            ext_side, self.k_mq * tau_m**2, 0.0
        )
        dq = np.where(ext_side, 2.0 * self.k_mq * tau_m, 0.0)
        return q, dq

    def feedforward(self, dtheta: np.ndarray, tau_e: np.ndarray, eps: np.ndarray) -> np.ndarray:
        """Friction feedforward ``tau_f`` [N·m], shape (m,); see the module doc.

        Args:
            dtheta: (m,) joint velocity [rad/s].
            tau_e: (m,) external torque on the joint [N·m].
            eps: (m,) tanh velocity scale [rad/s], > 0.

        Raises:
            InputError: non-finite inputs (reason ``Reason.NOT_FINITE``), ``eps <= 0`` (``Reason.RANGE``), or
                no convergence (``Reason.NO_SOLUTION``; not expected for validated parameters).
        """
        dtheta = np.asarray(dtheta, dtype=float)
        tau_e = np.asarray(tau_e, dtype=float)
        eps = np.asarray(eps, dtype=float)
        if not (np.all(np.isfinite(dtheta)) and np.all(np.isfinite(tau_e))):
            raise InputError("BAM feedforward: non-finite velocity or load", reason=Reason.NOT_FINITE)
        if not np.all(eps > 0.0) or not np.all(np.isfinite(eps)):
            raise InputError("BAM feedforward: eps must be finite and > 0", reason=Reason.RANGE)
        return self.feedforward_unchecked(dtheta, tau_e, eps)

    def feedforward_unchecked(self, dtheta: np.ndarray, tau_e: np.ndarray, eps: np.ndarray) -> np.ndarray:
        """:meth:`feedforward` for inputs already known finite (m,) float arrays, eps > 0."""
        s = np.tanh(dtheta / eps)
        # Terms independent of tau_m [N·m].
        a0 = self.k_c + self.k_v * np.abs(dtheta)
        if self.any_stribeck:
            s_str = self.stribeck_factor(dtheta)
            a0 = a0 + s_str * self.k_cs
        else:
            s_str = self.stribeck_mask  # all zero
        if not self.load_dependent:
            # M1/M2: tau_fm independent of tau_m → closed form.
            return s * a0 + 0.0
        return self._solve(dtheta, tau_e, s, s_str, a0) + 0.0

    def _solve(self, dtheta, tau_e, s, s_str, a0) -> np.ndarray:
        """Root of ``G(y) = |s|·tau_fm(-tau_e + sign(s)·y) - y`` on ``y >= 0``.

        ``tau_f = sign(s)·y``. ``G(0) >= 0``; with ``c = K_m + s_str·K_ms < 1`` and the
        quadratic term bounded by ``max(K_eq, K_mq)·tau_e²`` (BAM applies K_mq·tau_m² only for
        ``|tau_m| < |tau_e|``), ``G(Y) <= 0`` at ``Y = |s|·A/(1 - |s|·c)``, A the budget
        bound at y = 0. G is continuous on ``(0, Y]`` and ``G(0+) >= G(0)``, so a root lies in
        ``[0, Y]``: Newton steps inside the bracket, bisection otherwise. G is piecewise
        linear for M3–M5 (exact after a few steps) and piecewise quadratic for M6.

        Stops when ``|G(y)| <= 1e-14·(1 + a0 + 2y + |tau_e|·(2 + K_e + K_es + K_m + K_ms))``
        (M6: ``+ 2^-50·(y + |tau_e|)·|dG/dy|``, the rounding of tau_m on a steep quadratic
        piece) -- relative to the torques G is computed from, i.e. to the answer, not to the
        bracket -- or when the bracket is 4 ulps wide. For
        BAM-sized coefficients and torques up to ~10 kN·m this is below 1e-9 N·m
        (:data:`FEEDFORWARD_TOLERANCE`); for larger answers it is the double-precision floor
        (an answer of 1e7 N·m has a 2e-9 ulp).

        Raises:
            InputError: reason ``Reason.RANGE`` when the bracket bound overflows (a load so large
                that the budget is not a finite double), ``Reason.NO_SOLUTION`` if not
                converged in ``_MAX_ITER`` steps (not expected).
        """
        sigma = np.sign(s)
        abs_s = np.abs(s)
        abs_e = np.abs(tau_e)
        c_e = self.k_e * tau_e
        c_es = self.k_es * tau_e
        sk_ms = s_str * self.k_ms
        a_bound = a0 + (self.k_e + self.k_m) * abs_e + s_str * (self.k_es + self.k_ms) * abs_e
        if self.quadratic:
            sign_e = np.sign(tau_e)
            s_mq = s_str * self.k_mq
            with np.errstate(over="ignore"):  # an overflow is reported just below
                q_eq = s_str * self.k_eq * tau_e**2
                a_bound = a_bound + s_str * np.maximum(self.k_eq, self.k_mq) * abs_e**2
        c = self.k_m + sk_ms
        lo = np.zeros_like(s)
        hi = abs_s * a_bound / (1.0 - abs_s * c) * (1.0 + 1e-12) + 1e-300
        if not np.all(np.isfinite(hi)):
            raise InputError(
                "BAM feedforward: load torque too large for the friction "
                f"coefficients (budget bound overflows; |tau_e| up to "
                f"{float(np.max(abs_e)):g} N·m)",
                reason=Reason.RANGE,
            )
        # The tolerance follows the torques G is computed from (a0, the load terms at
        # tau_e, and y itself), never the bracket: with the quadratic term the bound hi can
        # exceed the answer by orders of magnitude (K_q = 1e4 left 5e-9 N·m on 85 N·m).
        scale0 = 1.0 + a0 + abs_e * (2.0 + self.k_e + self.k_es + self.k_m + self.k_ms)
        y = np.zeros_like(s)
        done = abs_s == 0.0
        for iteration in range(1, _MAX_ITER + 1):
            tau_m = sigma * y - tau_e
            a = c_e - self.k_m * tau_m
            b = c_es - self.k_ms * tau_m
            fm = a0 + np.abs(a) + s_str * np.abs(b)
            slope = -self.k_m * np.sign(a) - sk_ms * np.sign(b)
            if self.quadratic:
                enable = sign_e != np.sign(tau_m)
                abs_m = np.abs(tau_m)
                ext_side = enable & (abs_e > abs_m)
                fm = (
                    fm
                    + np.where(enable & (abs_e < abs_m), q_eq, 0.0)
                    + np.where(ext_side, s_mq * tau_m * tau_m, 0.0)
                )
                slope = slope + np.where(ext_side, 2.0 * s_mq * tau_m, 0.0)
                # Half the curvature of G on the K_mq·tau_m² piece [1/(N·m)].
                curv = np.where(ext_side, abs_s * s_mq, 0.0)
            g = abs_s * fm - y
            tol = _SOLVER_TOL * (scale0 + 2.0 * y)
            if self.quadratic:
                # tau_m carries a rounding error ~ulp(y + |tau_e|), which a steep K_mq·tau_m²
                # piece multiplies by |dG/dy|: part of the floor of |G| (~4 ulps here).
                tol = tol + _RESOLUTION * np.abs(s * slope) * (y + abs_e)
            # Stop at the residual tolerance, or when the bracket is a few ulps of its
            # upper end wide (rounding floor of G reached: no double does better).
            done = done | (np.abs(g) <= tol) | (hi - lo <= _RESOLUTION * hi)
            if done.all():
                self.last_iterations = iteration
                return sigma * y
            pos = g > 0.0
            lo = np.where(pos, y, lo)
            hi = np.where(pos, hi, y)
            # dg <= -(1 - |s|c) < 0 without the quadratic term; a non-negative slope (possible
            # with it) gives a huge step that fails the bracket test → bisection.
            dg = np.minimum(s * slope - 1.0, -1e-12)
            if self.quadratic:
                # Root of the piece's exact quadratic model g + dg·d + curv·d² nearest d = 0
                # (the Newton step when curv = 0): exact inside a piece.
                disc = np.sqrt(np.maximum(dg * dg - 4.0 * curv * g, 0.0))
                y_newton = y - 2.0 * g / np.minimum(dg - disc, -1e-12)
            else:
                y_newton = y - g / dg
            ok = (y_newton > lo) & (y_newton < hi)
            y = np.where(done, y, np.where(ok, y_newton, 0.5 * (lo + hi)))
        raise InputError("BAM feedforward: the implicit equation did not converge", reason=Reason.NO_SOLUTION)
