"""The pass rate corrected for the judge's measured errors, with a 95 % interval.

A judge's raw pass rate p is biased whenever the judge errs: it passes some cases people
fail and fails some they pass. Calibration measured both on labelled cases, end to end on
the judge's own path (the free run, `dagtui.calibration.core`, which is exactly what
`dagtui run` does): the sensitivity q1 = P(judge passes | people pass) and the specificity
q0 = P(judge fails | people fail). Since E[p] = (q0 + q1 - 1) θ + (1 - q0), the true pass
rate θ is estimated by the plug-in (Rogan–Gladen) estimator

    θ̂ = (p + q0 - 1) / (q0 + q1 - 1),  clipped to [0, 1]

(Lee, Zeng, Jeong, Sohn and Lee, "How to Correctly Report LLM-as-a-Judge Evaluations",
2025, arXiv:2511.21140; Rogan and Gladen, 1978). Its variance has a term from the run
(n cases judged) and one from each half of the calibration (m1 cases people pass, m0 they
fail); by the delta method (the partial derivatives of θ in p, q0 and q1 are 1/J,
(1 - θ)/J and -θ/J, with J = q0 + q1 - 1)

    Var θ̂ ≈ [p(1-p)/n + (1-θ)² q0(1-q0)/m0 + θ² q1(1-q1)/m1] / J².

The 95 % interval is θ ± 1.96 √Var, clipped to [0, 1], computed as the paper does at
smoothed estimates: z²/2 passes and z²/2 fails added to the run, one agreeing and one
disagreeing case added to each half of the calibration (Agresti–Coull style), so that a
judge that happened to be perfect on 20 labelled cases still carries the uncertainty of
having been measured on 20. (The authors' code also shifts the interval's centre by a
second-order term; that is left out here.) No resampling: the same counts always give the
same interval.

When J is small the judge is close to chance (J = 0: its verdicts say nothing about the
truth) and θ̂ is a ratio of two noises: below `MIN_YOUDEN` the correction is refused and
the reason said, as it is when the calibration had no case people passed (or failed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: the 97.5 % normal quantile: a two-sided 95 % interval
Z95 = 1.959963984540054
#: below this q0 + q1 - 1 (Youden's J) the judge is too close to chance to correct
MIN_YOUDEN = 0.1
METHOD = ("plug-in estimator (p + q0 - 1)/(q0 + q1 - 1) with the delta-method 95% interval "
          "of Lee et al. 2025 (arXiv:2511.21140), at smoothed estimates")


def _clip(x: float) -> float:
    return min(1.0, max(0.0, x))


def plug_in(p: float, q0: float, q1: float) -> float:
    """θ̂ = (p + q0 - 1)/(q0 + q1 - 1), clipped to [0, 1] (q0 + q1 > 1 assumed)."""
    return _clip((p + q0 - 1) / (q0 + q1 - 1))


def delta_variance(p: float, q0: float, q1: float, n: float, m0: float, m1: float) -> float:
    """The delta-method variance of θ̂ (module docstring), θ taken clipped."""
    j = q0 + q1 - 1
    theta = plug_in(p, q0, q1)
    return (p * (1 - p) / n + (1 - theta) ** 2 * q0 * (1 - q0) / m0
            + theta ** 2 * q1 * (1 - q1) / m1) / j ** 2


@dataclass
class Corrected:
    """The raw and the corrected pass rate, the judge's measured error rates, and why a
    correction could not be made (`unusable`, then `estimate` and `ci` are None)."""

    raw: float | None
    n: int
    sensitivity: float | None
    specificity: float | None
    calibration_pass: int
    calibration_fail: int
    estimate: float | None = None
    ci: tuple[float, float] | None = None
    unusable: str | None = None

    @property
    def youden(self) -> float | None:
        if self.sensitivity is None or self.specificity is None:
            return None
        return self.sensitivity + self.specificity - 1

    def to_dict(self) -> dict[str, Any]:
        return {"raw": self.raw, "n": self.n, "estimate": self.estimate,
                "ci": list(self.ci) if self.ci else None,
                "sensitivity": self.sensitivity, "specificity": self.specificity,
                "calibration_pass": self.calibration_pass,
                "calibration_fail": self.calibration_fail, "youden": self.youden,
                "unusable": self.unusable, "method": METHOD}


def correct(passed: int, judged: int, true_pass: int, human_pass: int, true_fail: int,
            human_fail: int, *, z: float = Z95) -> Corrected:
    """The corrected pass rate of a run where the judge passed `passed` of `judged` cases,
    with a calibration in which it passed `true_pass` of the `human_pass` cases people
    passed and failed `true_fail` of the `human_fail` they failed."""
    q1 = true_pass / human_pass if human_pass else None
    q0 = true_fail / human_fail if human_fail else None
    raw = passed / judged if judged else None
    out = Corrected(raw, judged, q1, q0, human_pass, human_fail)
    if raw is None:
        out.unusable = "no case of the run was judged pass or fail"
    elif q1 is None:
        out.unusable = "the calibration has no case people passed: sensitivity unknown"
    elif q0 is None:
        out.unusable = "the calibration has no case people failed: specificity unknown"
    elif q0 + q1 - 1 < MIN_YOUDEN:
        out.unusable = (f"the judge is close to chance (sensitivity + specificity - 1 = "
                        f"{q0 + q1 - 1:.2f}, below {MIN_YOUDEN:g})")
    if out.unusable:
        return out
    assert raw is not None and q0 is not None and q1 is not None
    out.estimate = plug_in(raw, q0, q1)
    # smoothed estimates (module docstring), then the delta-method interval around them
    z2 = z * z
    n_s, m0_s, m1_s = judged + z2, human_fail + 2, human_pass + 2
    p_s = (passed + z2 / 2) / n_s
    q0_s, q1_s = (true_fail + 1) / m0_s, (true_pass + 1) / m1_s
    if q0_s + q1_s - 1 <= 0:  # smoothing pulled a barely usable judge to chance
        out.ci = (0.0, 1.0)
        return out
    centre = plug_in(p_s, q0_s, q1_s)
    half = z * math.sqrt(delta_variance(p_s, q0_s, q1_s, n_s, m0_s, m1_s))
    out.ci = (_clip(centre - half), _clip(centre + half))
    return out
