"""A mean and the half-width of its Student-t 95% interval, standard library only: the one interval of the study
scripts (scripts/asp-paper-regime.py, asp-churn-64.py, energy-vt-table.py, slowing-decision-study.py). Above 30
degrees of freedom the 30-degree quantile is used (at most 2% wider than the exact one)."""
import math
import statistics

# Student-t 0.975 quantiles by degrees of freedom (1..30).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def interval(values):
    """(mean, half-width of the Student-t 95% interval) of `values`; the half-width is NaN for fewer than two."""
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return mean, float("nan")
    return mean, T975[min(n - 1, len(T975)) - 1] * statistics.stdev(values) / math.sqrt(n)
