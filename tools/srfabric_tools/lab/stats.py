"""Summaries of repeated measurements and the power-law fit of the container-chaining study."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

# Two-sided 95 % Student t quantiles by degrees of freedom (1..30); above 30 the normal value.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]


@dataclass(frozen=True)
class Summary:
    median: float
    mean: float
    ci95: float  # half-width of the 95 % confidence interval of the mean
    n: int


def quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    """(lower quartile, median, upper quartile), inclusive, of one value or more.

    >>> quartiles([1.0, 2.0, 3.0, 4.0, 5.0])
    (2.0, 3.0, 4.0)
    >>> quartiles([7.0])
    (7.0, 7.0, 7.0)
    """
    if len(values) < 2:
        return values[0], values[0], values[0]
    low, middle, high = statistics.quantiles(values, n=4, method="inclusive")
    return low, middle, high


def percentile(values: Sequence[float], share: float) -> float:
    """The value ``share`` of the way up the sorted values (nearest rank, no interpolation); NaN for none.

    >>> percentile([5, 1, 4, 2, 3], 0.5), percentile(list(range(100)), 0.99), percentile([], 0.99)
    (3, 99, nan)
    """
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else math.nan


def summarise(values: Sequence[float]) -> Summary:
    """Median, mean and the 95 % confidence half-width of repeated runs.

    >>> s = summarise([10.0, 12.0, 11.0])
    >>> (s.median, s.mean, round(s.ci95, 3))
    (11.0, 11.0, 2.484)
    """
    if not values:
        raise ValueError("no values to summarise")
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return Summary(float(values[0]), mean, 0.0, 1)
    t = _T95[n - 2] if n - 1 <= len(_T95) else 1.96
    return Summary(statistics.median(values), mean, t * statistics.stdev(values) / math.sqrt(n), n)


@dataclass(frozen=True)
class PowerLaw:
    """``t_out = t_in * (1 - loss) ** n``, fitted by least squares on log throughput."""

    t_in: float
    loss: float
    r2: float


def fit_power_law(lengths: Sequence[float], throughputs: Sequence[float]) -> PowerLaw:
    """Fit the loss per hop ``l`` of the study's rule of thumb.

    >>> fit = fit_power_law([1, 2, 3, 4], [100 * 0.9 ** n for n in (1, 2, 3, 4)])
    >>> round(fit.loss, 3), round(fit.t_in, 1)
    (0.1, 100.0)
    """
    points = [(float(n), math.log(t)) for n, t in zip(lengths, throughputs, strict=True) if t > 0]
    if len(points) < 2:
        raise ValueError("a fit needs two positive points")
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    intercept = my - slope * mx
    total = sum((y - my) ** 2 for y in ys)
    residual = sum((y - (intercept + slope * x)) ** 2 for x, y in points)
    return PowerLaw(math.exp(intercept), 1 - math.exp(slope), 1 - residual / total if total else 1.0)


def growth(points: list[tuple[float, float]]) -> float | None:
    """The slope of log(y) against log(x), least squares: 1 grows linearly, 0 not at all.

    >>> round(growth([(20, 2.0), (80, 8.0), (320, 32.0)]), 3)
    1.0
    """
    usable = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(usable) < 2:
        return None
    mean_x, mean_y = statistics.fmean(x for x, _ in usable), statistics.fmean(y for _, y in usable)
    spread = sum((x - mean_x) ** 2 for x, _ in usable)
    return sum((x - mean_x) * (y - mean_y) for x, y in usable) / spread if spread else None


def median_of(values: Sequence[float]) -> dict[str, float]:
    """The median with its quartiles, named."""
    low, middle, high = quartiles(values)
    return {"median": middle, "lower_quartile": low, "upper_quartile": high}
