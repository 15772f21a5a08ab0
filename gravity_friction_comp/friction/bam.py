"""BAM friction models M1–M6 (Rhoban "Better Actuator Models"), loaded from BAM's JSON files.

Source of every equation here: Rhoban/bam ``bam/model.py`` (``Model.compute_frictions``) and
``bam/simulate.py`` (``Simulator.step``), summarised in ``FIELD_NOTES.md`` ("BAM friction
models"). Parameters are output-shaft values; torques in [N·m], velocities in [rad/s].

Friction budget (maximum torque friction can resist), with Stribeck factor
``s_str = exp(-|dtheta / dtheta_stribeck| ** alpha)`` (1 at rest, → 0 when moving):

.. math::

    \\tau_{fm} = K_c + K_v|\\dot\\theta| + L + s_{str}(K_{cs} + L_s + Q)

=====  =====================================  ===========================================
model  L (load term)                          L_s (Stribeck load term), Q (quadratic)
=====  =====================================  ===========================================
m1     0                                      0, 0
m2     0                                      0, 0 (``K_cs`` present)
m3     K_l·|τ_e − τ_m|                        0, 0
m4     K_l·|τ_e − τ_m|                        K_ls·|τ_e − τ_m|, 0
m5     |K_e·τ_e − K_m·τ_m|                    |K_es·τ_e − K_ms·τ_m|, 0
m6     |K_e·τ_e − K_m·τ_m|                    |K_es·τ_e − K_ms·τ_m|, Q (below)
=====  =====================================  ===========================================

M6: ``Q = K_eq·τ_e²`` if ``|τ_e| < |τ_m|``, ``K_mq·τ_m²`` if ``|τ_e| > |τ_m|``, 0 if
equal, and only when ``sign(τ_e) != sign(τ_m)`` (numpy signs: 0 is its own sign), exactly as
BAM.

Sign convention (BAM's): ``tau_m`` is the torque the motor applies to the joint and ``tau_e``
the torque the load (gravity) applies to the same joint; both act together
(BAM's net torque is ``tau_m + tau_e``). Holding still against gravity means ``tau_m = -tau_e``.

Feedforward convention (ours): the motor torque that sustains steady motion at ``dtheta``
solves

.. math::

    \\tau_m = -\\tau_e + \\tau_f,\\qquad
    \\tau_f = \\tanh(\\dot\\theta/\\varepsilon)\\,\\tau_{fm}(\\dot\\theta, \\tau_m, \\tau_e)

i.e. zero acceleration when friction takes its full budget against the motion (BAM's
simulator applies ``-sign(tau_stop)·min(|tau_stop|, tau_fm)``, which is the full budget
while moving). ``tanh(dtheta/eps)`` replaces ``sign`` so the term is smooth through rest.
:meth:`BamParameters.feedforward` returns the friction part ``tau_f``;
:meth:`BamParameters.motor_torque` returns ``tau_m``. For M1/M2 ``tau_fm`` does not depend on
``tau_m`` (closed form); for M3–M6 it does and the equation is solved by a bracketed,
safeguarded Newton iteration to a residual relative to the torques involved (about 1e-14 of
them): below ``1e-9`` N·m for torques up to ~10 kN·m, the double-precision floor above.
Coefficients above :data:`COEFFICIENT_LIMITS` (generous plausibility ceilings) are refused.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import types
from collections.abc import Mapping
from typing import Any

import numpy as np

from gravity_friction_comp.errors import ConfigError
from gravity_friction_comp.files import read_text
from gravity_friction_comp.friction.bam_solver import BamStack
from gravity_friction_comp.validation import known_keys, number, short_repr, string_keys

__all__ = [
    "BAM_MODELS",
    "COEFFICIENT_LIMITS",
    "BamParameters",
]

#: BAM model names, in BAM's order of complexity.
BAM_MODELS = ("m1", "m2", "m3", "m4", "m5", "m6")

_STRIBECK = ("friction_stribeck", "dtheta_stribeck", "alpha")
#: Friction keys each model requires (and no others), from ``Model.set_actuator`` in BAM.
_MODEL_KEYS: dict[str, tuple[str, ...]] = {
    "m1": ("friction_base", "friction_viscous"),
    "m2": ("friction_base", "friction_viscous") + _STRIBECK,
    "m3": ("friction_base", "friction_viscous", "load_friction_base"),
    "m4": ("friction_base", "friction_viscous", "load_friction_base", "load_friction_stribeck") + _STRIBECK,
    "m5": (
        "friction_base",
        "friction_viscous",
        "load_friction_motor",
        "load_friction_external",
        "load_friction_motor_stribeck",
        "load_friction_external_stribeck",
    )
    + _STRIBECK,
}
_MODEL_KEYS["m6"] = _MODEL_KEYS["m5"] + ("load_friction_motor_quad", "load_friction_external_quad")

_FRICTION_KEYS = tuple(dict.fromkeys(k for keys in _MODEL_KEYS.values() for k in keys))
#: Motor/testbench parameters BAM's actuators may write (not used for friction), kept as read.
_ACTUATOR_KEYS = (
    "kt",
    "R",
    "armature",
    "q_offset",
    "current_limit",
    "error_gain_ratio",
    "max_velocity",
    "ratio",
    "max_torque",
)
_VALID_KEYS = ("model", "actuator") + _ACTUATOR_KEYS + _FRICTION_KEYS

#: Plausibility ceilings of the friction coefficients: ``key -> (maximum, unit, reason)``.
#: Generous on purpose (BAM's own fits bound these to 0.2–1 N·m, 0.5, 1 and 0.01 1/(N·m) for
#: a 6 N·m servo, and the largest shared fit is 10 N·m·s/rad); a value above them is a corrupt
#: or mistyped file, and would overflow the solver's bracket (1e300 gave a 0.0 feedforward).
COEFFICIENT_LIMITS: dict[str, tuple[float, str, str]] = {
    **{
        k: (1e5, " N·m", "100 kN·m of friction is above any robot joint's torque")
        for k in ("friction_base", "friction_stribeck")
    },
    "friction_viscous": (1e5, " N·m·s/rad", "100 kN·m at 1 rad/s is above any robot joint"),
    **{
        k: (100.0, "", "friction 100× the load torque is not a gearbox")
        for k in (
            "load_friction_base",
            "load_friction_stribeck",
            "load_friction_motor",
            "load_friction_external",
            "load_friction_motor_stribeck",
            "load_friction_external_stribeck",
        )
    },
    **{
        k: (1e4, " 1/(N·m)", "K·τ² reaches τ already at τ = 0.1 mN·m")
        for k in ("load_friction_motor_quad", "load_friction_external_quad")
    },
}


@dataclasses.dataclass(frozen=True)
class BamParameters:
    """One actuator's BAM parameters, as in BAM's JSON file (keys unchanged).

    Friction keys not used by ``model`` are 0.0 (and must be absent from the file).
    Motor keys (``kt`` [N·m/A], ``R`` [Ω], ``armature`` [kg·m²], ``q_offset`` [rad]) are kept
    for reference; friction does not use them.

    Attributes:
        model: ``"m1"`` … ``"m6"``.
        actuator: BAM's actuator name, e.g. ``"mx64"``.
        friction_base: K_c [N·m].
        friction_viscous: K_v [N·m·s/rad].
        friction_stribeck: K_cs [N·m] (M2, M4–M6).
        load_friction_base: K_l [-] (M3, M4).
        load_friction_stribeck: K_ls [-] (M4).
        load_friction_motor, load_friction_external: K_m, K_e [-] (M5, M6).
        load_friction_motor_stribeck, load_friction_external_stribeck: K_ms, K_es [-] (M5, M6).
        load_friction_motor_quad, load_friction_external_quad: K_mq, K_eq [1/(N·m)] (M6).
        dtheta_stribeck: θ̇_s [rad/s] (> 0; 1.0 placeholder when the model has no Stribeck term).
        alpha: Stribeck exponent [-] (> 0; 1.0 placeholder when unused).
        extra: other actuator keys found in the file (``current_limit``, ``max_torque``, ...).
        source: path the parameters were read from (not part of equality).

    Raises:
        ConfigError: unknown model, non-string actuator, a coefficient that is not a finite
            real number >= 0 (bools, strings and ints beyond the float range refused) or is
            above its :data:`COEFFICIENT_LIMITS` ceiling, ``dtheta_stribeck``/``alpha`` <= 0,
            a non-finite motor key, self-locking load coefficients, or a coefficient of
            another model that is not 0.
    """

    model: str
    actuator: str
    friction_base: float
    friction_viscous: float
    friction_stribeck: float = 0.0
    load_friction_base: float = 0.0
    load_friction_stribeck: float = 0.0
    load_friction_motor: float = 0.0
    load_friction_external: float = 0.0
    load_friction_motor_stribeck: float = 0.0
    load_friction_external_stribeck: float = 0.0
    load_friction_motor_quad: float = 0.0
    load_friction_external_quad: float = 0.0
    dtheta_stribeck: float = 1.0
    alpha: float = 1.0
    kt: float | None = None
    R: float | None = None
    armature: float | None = None
    q_offset: float | None = None
    extra: Mapping[str, float] = dataclasses.field(default_factory=dict)
    source: str | None = dataclasses.field(default=None, compare=False)

    def __post_init__(self) -> None:
        where = f" ({self.source})" if self.source else ""
        if self.model not in BAM_MODELS:
            raise ConfigError(
                f"model: unknown BAM model {self.model!r}{where}; valid choices: " + ", ".join(BAM_MODELS),
                key="model",
                value=self.model,
            )
        if not isinstance(self.actuator, str):
            raise ConfigError(f"actuator: expected a string{where}", key="actuator", value=self.actuator)
        for key in _FRICTION_KEYS:
            value = _real(key, getattr(self, key), where, "a finite number >= 0")
            if value < 0.0:
                raise ConfigError(
                    f"{key}: expected a finite number >= 0{where}, got {value!r}", key=key, value=value
                )
            limit, unit, why = COEFFICIENT_LIMITS.get(key, (math.inf, "", ""))
            if value > limit:
                raise ConfigError(
                    f"{key}: {value!r}{unit}{where} is above the plausible maximum {limit:g} "
                    f"({why}); the file is probably corrupt",
                    key=key,
                    value=value,
                )
            object.__setattr__(self, key, value)
        for key in ("dtheta_stribeck", "alpha"):
            if getattr(self, key) <= 0.0:
                raise ConfigError(
                    f"{key}: expected > 0{where}, got {getattr(self, key)!r}",
                    key=key,
                    value=getattr(self, key),
                )
        for key in ("kt", "R", "armature", "q_offset"):
            value = getattr(self, key)
            if value is not None:
                object.__setattr__(self, key, _real(key, value, where, "a finite number"))
        # The feedforward equation has a solution for every load only if the budget grows
        # slower than the motor torque (slope of the load terms in tau_m below 1).
        slope = self.load_slope
        if slope >= 1.0:
            raise ConfigError(
                f"load friction coefficients{where} make the budget grow as fast as the motor "
                f"torque (d tau_fm / d tau_m up to {slope:g} >= 1): no motor torque sustains "
                "motion (self-locking); cannot compute a feedforward",
                key="load_friction",
                value=slope,
            )
        foreign = [
            k
            for k in _FRICTION_KEYS
            if k not in _MODEL_KEYS[self.model]
            and k not in ("dtheta_stribeck", "alpha")
            and getattr(self, k) != 0.0
        ]
        if foreign:
            raise ConfigError(
                f"{foreign}: not parameters of model {self.model}{where}; leave them at 0",
                key=foreign[0],
                value=getattr(self, foreign[0]),
            )
        object.__setattr__(self, "extra", types.MappingProxyType(dict(self.extra)))

    # -- loading ------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None) -> BamParameters:
        """Build from a parsed BAM parameter dict (keys exactly as in BAM's files).

        Raises:
            ConfigError: not a mapping, unknown key (valid keys listed), missing key for the
                model, key of another model, a non-finite / negative value (also an integer
                beyond the float range), or a coefficient above :data:`COEFFICIENT_LIMITS`.
        """
        where = f" in {source}" if source else ""
        if not isinstance(data, Mapping):
            raise ConfigError(
                f"BAM parameters{where}: expected a JSON object, got {type(data).__name__}",
                key="bam",
                value=source,
            )
        string_keys("BAM parameters", data)  # a Python dict may have non-string keys
        known_keys("BAM parameters", data, _VALID_KEYS, file=source)
        for key in ("model", "actuator"):
            if key not in data:
                raise ConfigError(f"BAM parameters{where}: missing key {key!r}", key=key, value=source)
        model = data["model"]
        if model not in BAM_MODELS:
            raise ConfigError(
                f"BAM parameters{where}: unknown model {model!r}; valid choices: " + ", ".join(BAM_MODELS),
                key="model",
                value=model,
            )
        needed = _MODEL_KEYS[model]
        missing = [k for k in needed if k not in data]
        if missing:
            raise ConfigError(
                f"BAM parameters{where}: model {model} needs keys {missing}",
                key=missing[0],
                value=source,
            )
        foreign = [k for k in _FRICTION_KEYS if k in data and k not in needed]
        if foreign:
            raise ConfigError(
                f"BAM parameters{where}: keys {foreign} are not parameters of model {model} "
                f"(its keys: {', '.join(needed)})",
                key=foreign[0],
                value=source,
            )
        kwargs: dict[str, Any] = {k: data[k] for k in needed}
        for key in ("kt", "R", "armature", "q_offset"):
            if key in data:
                kwargs[key] = data[key]
        extra = {k: data[k] for k in _ACTUATOR_KEYS[4:] if k in data}
        return cls(model=model, actuator=data["actuator"], extra=extra, source=source, **kwargs)

    @classmethod
    def from_json(cls, path: str | pathlib.Path) -> BamParameters:
        """Load one of BAM's ``<actuator>/m<k>.json`` files unchanged.

        Raises:
            ConfigError: missing/unreadable/non-UTF-8 file, malformed JSON (path and position
                in the message; also JSON nested too deeply), or invalid content (see
                :meth:`from_dict`).
        """
        path = pathlib.Path(path)
        text = read_text(path, "bam_files")  # ConfigError: missing, unreadable, not UTF-8
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"BAM file {path}: malformed JSON ({exc})", key="bam_files", value=str(path)
            ) from None
        except RecursionError:  # arrays/objects nested thousands deep
            raise ConfigError(
                f"BAM file {path}: malformed JSON (nested too deeply)", key="bam_files", value=str(path)
            ) from None
        return cls.from_dict(data, source=str(path))

    def to_dict(self) -> dict[str, Any]:
        """The parameters as BAM writes them (only this model's keys), for JSON round trips."""
        out: dict[str, Any] = {}
        for key in ("kt", "R", "armature", "q_offset"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out.update(self.extra)
        for key in _MODEL_KEYS[self.model]:
            out[key] = getattr(self, key)
        out["model"] = self.model
        out["actuator"] = self.actuator
        return out

    # -- model structure -----------------------------------------------------------------
    @property
    def has_stribeck(self) -> bool:
        """True for M2, M4, M5, M6."""
        return self.model in ("m2", "m4", "m5", "m6")

    @property
    def load_dependent(self) -> bool:
        """True for M3–M6 (budget depends on tau_m and tau_e)."""
        return self.model in ("m3", "m4", "m5", "m6")

    @property
    def load_slope(self) -> float:
        """Upper bound of ``|d tau_fm / d tau_m|`` from the linear load terms [-]."""
        if self.model in ("m3", "m4"):
            return self.load_friction_base + self.load_friction_stribeck
        if self.model in ("m5", "m6"):
            return self.load_friction_motor + self.load_friction_motor_stribeck
        return 0.0

    # -- equations ----------------------------------------------------------------------
    def stribeck_factor(self, dtheta: Any) -> np.ndarray:
        """``exp(-|dtheta/dtheta_stribeck|**alpha)`` [-], broadcast like ``dtheta`` [rad/s].

        Zero for models without a Stribeck term (their Stribeck coefficients are zero too).
        """
        dtheta = np.asarray(dtheta, dtype=float)
        if not self.has_stribeck:
            return np.zeros_like(dtheta)
        return np.exp(-(np.abs(dtheta / self.dtheta_stribeck) ** self.alpha))

    def budget(self, dtheta: Any, tau_m: Any, tau_e: Any) -> np.ndarray | float:
        """Friction budget ``tau_fm`` [N·m] exactly as BAM's ``Model.compute_frictions``.

        Includes the viscous part ``K_v·|dtheta|`` (BAM adds ``damping·|dtheta|`` to the
        budget in ``Simulator.step``). Arguments broadcast together.

        Args:
            dtheta: joint velocity [rad/s].
            tau_m: motor torque on the joint [N·m].
            tau_e: external (load) torque on the joint [N·m].

        Returns:
            ``tau_fm >= 0`` [N·m]; a float for scalar inputs, else an array.
        """
        dtheta = np.asarray(dtheta, dtype=float)
        tau_m = np.asarray(tau_m, dtype=float)
        tau_e = np.asarray(tau_e, dtype=float)
        out = self.friction_base + self.friction_viscous * np.abs(dtheta)
        s = self.stribeck_factor(dtheta)
        m = self.model
        if m in ("m3", "m4"):
            gearbox = np.abs(tau_e - tau_m)
            out = out + self.load_friction_base * gearbox
        elif m in ("m5", "m6"):
            out = out + np.abs(self.load_friction_external * tau_e - self.load_friction_motor * tau_m)
        if self.has_stribeck:
            out = out + s * self.friction_stribeck
        if m == "m4":
            out = out + s * self.load_friction_stribeck * np.abs(tau_e - tau_m)
        elif m in ("m5", "m6"):
            out = out + s * np.abs(
                self.load_friction_external_stribeck * tau_e - self.load_friction_motor_stribeck * tau_m
            )
        if m == "m6":
            enable = np.sign(tau_e) != np.sign(tau_m)
            q = np.where(
                np.abs(tau_e) < np.abs(tau_m), self.load_friction_external_quad * tau_e**2, 0.0
            ) + np.where(np.abs(tau_e) > np.abs(tau_m), self.load_friction_motor_quad * tau_m**2, 0.0)
            out = out + s * q * enable
        out = np.broadcast_to(out, np.broadcast_shapes(dtheta.shape, tau_m.shape, tau_e.shape))
        return float(out) if out.ndim == 0 else np.array(out)

    def feedforward(self, dtheta: Any, tau_e: Any, eps: Any = 0.01) -> np.ndarray | float:
        """Friction feedforward ``tau_f`` [N·m] sustaining motion at ``dtheta`` (module doc).

        Solves ``tau_f = tanh(dtheta/eps)·tau_fm(dtheta, -tau_e + tau_f, tau_e)``; exactly
        +0.0 at ``dtheta = ±0.0``. Arguments broadcast together.

        Args:
            dtheta: joint velocity [rad/s].
            tau_e: external (load) torque on the joint [N·m]; with a gravity-compensated arm
                this is minus the gravity feedforward (``tau_e = -g(q)``).
            eps: tanh velocity scale [rad/s], > 0.

        Raises:
            InputError: non-finite inputs (reason ``Reason.NOT_FINITE``) or ``eps <= 0`` (``Reason.RANGE``).
        """
        dtheta, tau_e, eps = np.broadcast_arrays(
            np.asarray(dtheta, dtype=float), np.asarray(tau_e, dtype=float), np.asarray(eps, dtype=float)
        )
        shape = dtheta.shape
        stack = BamStack([self] * max(1, dtheta.size))
        out = stack.feedforward(dtheta.reshape(-1), tau_e.reshape(-1), eps.reshape(-1))
        out = out.reshape(shape)
        return float(out) if out.ndim == 0 else out

    def motor_torque(self, dtheta: Any, tau_e: Any, eps: Any = 0.01) -> np.ndarray | float:
        """Motor torque ``tau_m = -tau_e + tau_f`` [N·m] sustaining ``dtheta`` (module doc)."""
        return np.negative(np.asarray(tau_e, dtype=float)) + self.feedforward(dtheta, tau_e, eps)


def _real(key: str, value: Any, where: str, what: str) -> float:
    """``value`` as a finite float; ConfigError naming ``key`` (bools, strings, ints beyond
    the float range and non-finite values are refused)."""
    try:
        return number(key, value)
    except ConfigError:
        raise ConfigError(
            f"{key}: expected {what}{where}, got {short_repr(value)}", key=key, value=value
        ) from None
